// Package lkserver starts a local LiveKit server for tests: the one
// scripts/install-livekit.sh builds, on loopback only (its node IP and
// every port on 127.0.0.1), with the dev keys, stopped at the test's end.
// The SDK's ICE gathers no loopback address, so a test that starts one
// runs inside a namespace with 127.0.0.1 only (InNamespace), where the
// SDK relays through the server's TURN on 127.0.0.1; elsewhere it skips
// unless EnvNonLoopback.
package lkserver
