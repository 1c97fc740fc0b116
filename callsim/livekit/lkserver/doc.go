// Package lkserver starts a local LiveKit server for tests: the one
// scripts/install-livekit.sh builds, on loopback only (its node IP and
// every port on 127.0.0.1), with the dev keys, stopped at the test's end.
// Tests that start one run only when CALLPROOF_LIVEKIT_NONLOOPBACK=1:
// the SDK's own ICE is not confined to loopback (EnvNonLoopback).
package lkserver
