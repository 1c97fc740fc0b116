// Package interop is what the interop tests share: whether a third-party
// framework they need (Node and the OpenAI Agents SDK, janus) may be
// missing. On a developer's machine a missing framework skips the test;
// under `make test`, `make interop` and CI it fails it, so a suite that
// never ran is never taken for one that passed (docs/INTEROP.md). Likewise
// a call the machine could not keep in real time after all its placings
// skips the test on a developer's machine and fails it under CI=true
// (Behind).
package interop
