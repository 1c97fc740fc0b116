// Package pipecateval is callproof's caller speaking Pipecat's eval wire:
// a plain WebSocket (the /ws route of Pipecat's runner, or any bot that
// hands its accepted socket to Pipecat's create_transport) carrying JSON
// RTVI messages. It plays the caller in text mode: the eval-connect
// message asks the bot to skip its speech, caller utterances go out as
// RTVI send-text, and the bot's RTVI events (bot-output, speaking,
// bot-interrupted, llm-function-call-*) come back as the native events
// the simulator records. The call's data (call id, tools, calendar,
// custom parameters) travels in an RTVI client-message "start", with the
// flat keys of Twilio's customParameters. Noise has no text form: text
// mode does not play it.
package pipecateval
