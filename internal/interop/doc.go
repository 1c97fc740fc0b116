// Package interop is what the interop tests share: whether a third-party
// framework they need (Node and the OpenAI Agents SDK, janus) may be
// missing. On a developer's machine a missing framework skips the test;
// under `make test`, `make interop` and CI it fails it, so a suite that
// never ran is never taken for one that passed (docs/INTEROP.md).
package interop
