// Package pipecat runs agents/pipecat's bot: a Pipecat (pipecat-ai from
// PyPI, pinned in python/requirements-pipecat.txt) phone bot answering
// Twilio Media Streams and Pipecat's eval wire on /ws and SmallWebRTC on
// /api/offer, and fake_llm.py, the scripted OpenAI-compatible
// server that stands in for its cloud model: with fixed arguments a test
// gives it (Script), or reading each conversation it is sent
// (Script.Conversation, for whole suites such as core). Both are Python programs in
// the repository's .venv (scripts/install-python.sh); this package starts
// them on loopback for callproof's tests (cmd/callproof's
// TestRunTwilioPipecatBot, TestRunEvalPipecatBot, TestRunWebRTCPipecatBot)
// and stops them. docs/INTEROP.md, "Pipecat",
// says what the bot is and what a Pipecat user changes to be tested.
package pipecat
