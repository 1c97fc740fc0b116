#!/usr/bin/env bash
# make deps: every tool the tests use, installed where missing (the
# Makefile's deps lists them). The LiveKit server is built from source
# (go install: minutes of compiling on both cores) while the others
# install, which mostly wait on the network and the package manager; its
# output follows theirs, and the first failure is the exit status.
set -uo pipefail
cd "$(dirname "$0")/.."
lk=$(mktemp -d)
trap 'rm -rf "$lk"' EXIT
(
	GO=${GO:-go} ./scripts/install-livekit.sh >"$lk/out" 2>&1
	echo $? >"$lk/rc"
) &
pid=$!
rc=0
for s in install-speech install-node-agents install-browser install-janus install-python; do
	echo "./scripts/$s.sh"
	./scripts/$s.sh || { rc=$?; break; }
done
wait $pid
echo "GO=${GO:-go} ./scripts/install-livekit.sh (beside the others)"
cat "$lk/out"
[ "$rc" -ne 0 ] && exit "$rc"
exit "$(cat "$lk/rc" 2>/dev/null || echo 1)"
