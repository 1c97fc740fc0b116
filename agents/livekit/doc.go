// Package livekit starts the stock LiveKit agent (agent.py: a LiveKit
// Agents 1.8.9 voice agent from PyPI, pinned in
// python/requirements-livekit.txt, with Silero VAD, pocketsphinx, flite
// and agents/pipecat's scripted fake model) as a worker of a LiveKit
// server, for the tests that call it over --transport livekit
// (docs/INTEROP.md, "LiveKit Agents").
package livekit
