#!/usr/bin/env bash
# Mutation testing of the scorer (docs/PERFORMANCE.md, "Mutation testing").
# Installs the pinned gremlins from the Go module proxy into bin/tools/ (once),
# then mutates every non-test .go file of scorer/ and runs the scorer's tests
# against each mutant. Fails unless test efficacy and mutant coverage both
# reach THRESHOLD percent. Too slow for CI: run it by hand with
# `make mutation` after changing a rule or its tests.
#   scripts/mutation.sh              the whole run (about 25 minutes on 2 cores)
#   scripts/mutation.sh --dry-run    list the mutants only (seconds)
# Extra arguments go to `gremlins unleash`. Machine-readable results are
# written to out/mutation/scorer.json; every LIVED mutant must be listed as
# equivalent in docs/SCORING.md, "Live mutants".
set -euo pipefail
cd "$(dirname "$0")/.."
GO="${GO:-go}"
GREMLINS_VERSION="${GREMLINS_VERSION:-v0.6.0}"
# One worker per core. Not --test-cpu: gremlins v0.6.0 passes it to go test
# as the single argument "-cpu N", which go test rejects, so every mutant
# would be reported KILLED.
WORKERS="${WORKERS:-$(nproc)}"
# A mutant's test run may take this many times the clean coverage run
# before it counts as TIMED OUT (an infinite loop). Generous: the machine
# is shared and a mutant run recompiles the package.
TIMEOUT_COEFFICIENT="${TIMEOUT_COEFFICIENT:-10}"
THRESHOLD="${THRESHOLD:-95}"
# Mutants are killed by the tests alone, not by `go test`'s vet step (which
# would also cost every mutant a vet pass); no DWARF makes each link faster.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-vet=off -ldflags=-w"

bin="$PWD/bin/tools/gremlins-$GREMLINS_VERSION"
if [ ! -x "$bin/gremlins" ]; then
	echo "mutation: installing gremlins $GREMLINS_VERSION into $bin"
	GOBIN="$bin" "$GO" install "github.com/go-gremlins/gremlins/cmd/gremlins@$GREMLINS_VERSION"
fi

mkdir -p out/mutation
start=$(date +%s)
status=0
"$bin/gremlins" unleash ./scorer \
	--workers "$WORKERS" --timeout-coefficient "$TIMEOUT_COEFFICIENT" \
	--threshold-efficacy "$THRESHOLD" --threshold-mcover "$THRESHOLD" \
	--output out/mutation/scorer.json "$@" || status=$?
echo "mutation: wall time $(($(date +%s) - start))s on $(nproc) cores"
exit "$status"
