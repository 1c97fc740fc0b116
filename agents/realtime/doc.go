// Package realtime is a fake OpenAI Realtime (GA) server for interop tests:
// a loopback WebSocket endpoint that a test scripts turn by turn, so a real
// agent framework (the OpenAI Agents SDK behind its Twilio transport, see
// agents/openai-twilio and docs/INTEROP.md) can be driven without a model
// and without network.
//
// The fake speaks the part of the protocol such clients use: it answers
// session.update with session.updated, reads input_audio_buffer.append in
// the session's input format (μ-law, A-law or 24 kHz PCM16), finds speech in
// it with its own energy detector (speech_started / speech_stopped come from
// the audio, not from timers), and at each end of speech plays the next
// scripted Turn: function calls (then it waits for the client's
// function_call_output and response.create) and a spoken reply streamed as
// response.output_audio.delta with its transcript. Caller speech during a
// reply cancels it as the real server does with interrupt_response, and
// conversation.item.truncate is checked and answered. Everything the client
// sent, and every event the fake sent, is recorded with its time for the
// test to assert on (Server.Events, Server.WaitFor).
package realtime
