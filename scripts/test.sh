#!/usr/bin/env bash
# The whole test suite (make test) or its quick loop (make check), with a
# table of where the time went printed at the end.
#   scripts/test.sh full    every Go test with -race (but the tests
#                           INTEROP_ONLY leaves to make interop); beside
#                           them go vet, the calibration gate and the
#                           Python tests (pytest)
#   scripts/test.sh check   go vet; the Go tests with -short (the live-call
#                           suites skip themselves), no race detector; pytest
#   scripts/test.sh interop-skip   prints the go test -skip pattern of the
#                           tests left to make interop (scripts/stress.sh)
# The per-package figures are go test's own, one line per package, slowest
# first; docs/PERFORMANCE.md ("Test time") keeps a measured copy.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
mode=${1:-full}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
steps=()
failed=0
t0=$SECONDS

step() { # NAME COMMAND...: runs one step, keeps its time and status
	local name=$1 s=$SECONDS rc
	shift
	"$@"
	rc=$?
	steps+=("$(printf '%-28s %5ds  %s' "$name" $((SECONDS - s)) "$([ $rc -eq 0 ] && echo ok || echo "FAILED ($rc)")")")
	[ $rc -eq 0 ] || failed=1
	return 0
}

gotest() { # go test with output kept for the table
	"$GO" test "$@" 2>&1 | tee -a "$log"
	return "${PIPESTATUS[0]}"
}

prebuild() { # compiles every test binary in parallel, running no test
	"$GO" test "$@" -count=1 -run '^$' ./... 2>&1 | grep -v -E '^ok|no test files' 
	return "${PIPESTATUS[0]}"
}

# What runs only in `make interop` (scripts/interop.sh runs each, and a
# test in scripts/ checks that it does): the long halves of the
# third-party interop suites and the reference agents' core suite in real
# time over Twilio and WebRTC (a few minutes each; here their wires keep
# shorter calls: docs/INTEROP.md, "make interop"). One go test -skip pattern a line, a whole test or a subtest
# (slashes separate subtest levels, as in -run); the lines are joined
# with "|", which go test reads as alternatives, so alternatives inside a
# line go in parentheses. The other half of each suite still runs here,
# and a missing framework (node, janus, python3) still fails it:
# CALLPROOF_INTEROP_REQUIRED. INTEROP_TESTS, when set, replaces the
# joined list (`INTEROP_TESTS= make test` runs everything).
INTEROP_ONLY=(
	'^TestAudioCoreMatchesText$'
	'^TestLoadAudioOnlyAgent$'
	'^TestWebRTCCoreMatchesWebSocket$'
	'^TestRunTwilioPipecatBot$/^(confirms|mcp-tools|hangs-up-rest)$'
	'^TestRunWebRTCPipecatBot$/^(confirms|cancel-on-interruption)$'
	'^TestRunEvalPipecatCore$'
	'^TestPipecatWiresAgree$'
	'^TestPipecatSTTWords$'
	'^TestRunAudioPipecatCore$'
	'^TestInteropOpenAIAgentsTwilio$/^reply_wholly_sent$'
	'^TestRunTwilioOpenAIAgent$/^http$'
	'^TestOpenAIAgentBargeInDuringTool$'
	'^TestLiveKitStockAgent$/^(careful-confirms|careful-hangs-up|mcp-tools)$'
	'^TestLiveKitStockCore$'
)
INTEROP_TESTS=${INTEROP_TESTS-$(IFS='|'; echo "${INTEROP_ONLY[*]}")}
# Packages whose tests place no call in real time: make test runs them two
# at a time.
LIGHT_PACKAGES="./agents/bookings/calibration/ ./agents/payments/calibration/ ./calibrate/... ./callsim/internal/... ./entity/ ./internal/... ./packgen/ ./protocol/... ./release/ ./reports/... ./scenarios/ ./scorer/ ./scripts/ ./spoken/ ./toolimport/ ./trace/"

calgate() { # DIR: one calibration set's gate
	local dir=$1
	if [ ! -f "$dir/disagreements.txt" ]; then
		# 100 % agreement with the hand labels and no false pass.
		"$GO" run ./cmd/callproof calibrate --min-agreement 1 "$dir/labels.yaml" "$dir/run"
		return
	fi
	# A ratchet: the figures are printed, and the set's agreement test
	# fails on any disagreement not listed in disagreements.txt or any
	# listed one that no longer occurs (the list only shrinks).
	"$GO" run ./cmd/callproof calibrate "$dir/labels.yaml" "$dir/run" 2>/dev/null | grep -E 'calls labelled|^all axes|^primary bucket'
	"$GO" test -count=1 -run 'Agreement$' -v "./$dir/" | grep -E 'cells agree|^(ok|FAIL|---)'
	return "${PIPESTATUS[0]}"
}

if [ "$mode" = interop-skip ]; then
	printf '%s\n' "$INTEROP_TESTS"
	exit 0
fi

# checks: the steps that are no Go test. go vet is vetted as the static
# CLI is built (no cgo, -trimpath; the project has no cgo code): the
# compiled packages vet leaves in the build cache are then the ones the
# linux wheel (pytest) links, which on a cold cache (CI) would otherwise
# compile them a second time. The calibration gate re-scores every
# calibration set's recorded calls against its hand labels
# (docs/SCORING.md): testdata/calibration and each agent family's own; a
# set with disagreements.txt is under a ratchet.
checks() {
	step "go vet" env CGO_ENABLED=0 "$GO" vet -trimpath ./...
	if [ "$mode" = full ]; then
		for set in testdata/calibration agents/*/calibration; do
			[ -f "$set/labels.yaml" ] || continue
			step "calibration gate ${set%/calibration}" calgate "$set"
		done
	fi
	step "pytest" "${PYTHON:-.venv/bin/python}" -m pytest -q python/tests
}

case $mode in
full)
	export CALLPROOF_INTEROP_REQUIRED=1
	skip=()
	[ -z "$INTEROP_TESTS" ] || skip=(-skip "$INTEROP_TESTS")
	# -p 1: packages one at a time. The live-call tests place real calls
	# in real time (or a twentieth of it); sharing the two cores with other
	# packages' tests only adds scheduler jitter to what they measure.
	# Compiled first with both cores (-p 1 would build one package at a
	# time too); the run below then only links and runs each binary.
	step "build tests (-race)" prebuild -race
	# The side lane: checks run beside the Go tests, pinned to the last
	# core when there are two or more. The live packages mostly wait on
	# real time (about a tenth of two cores, measured), so the side lane
	# costs them little, and make test ends some nine minutes sooner
	# (docs/PERFORMANCE.md, "Test time"); make stress shows the live
	# packages holding with a busy loop on that core.
	side=$(mktemp -d)
	(
		steps=() failed=0
		cores=$(nproc 2>/dev/null || echo 1)
		if [ "$cores" -ge 2 ] && command -v taskset >/dev/null; then
			taskset -pc $((cores - 1)) $BASHPID >/dev/null
		fi
		checks >"$side/out" 2>&1
		printf '%s\n' "${steps[@]}" >"$side/steps"
		exit $failed
	) &
	sidepid=$!
	# The packages that place no call in real time share the two cores
	# (-p 2); every other package runs alone. A new package is alone until
	# it is listed here.
	light=$("$GO" list $LIGHT_PACKAGES)
	live=$("$GO" list ./... | grep -vxF -f <(printf '%s\n' "$light"))
	step "go test -race (light, -p 2)" gotest -race -count=1 -p 2 -timeout 30m $light
	step "go test -race (live, -p 1)" gotest -race -count=1 -p 1 -timeout 30m "${skip[@]}" $live
	s=$SECONDS
	wait $sidepid || failed=1
	echo
	echo "== side lane (go vet, calibration gates, pytest), run beside the Go tests: waited $((SECONDS - s))s for it after them"
	cat "$side/out"
	mapfile -t -O "${#steps[@]}" steps <"$side/steps"
	rm -rf "$side"
	;;
check)
	step "go test -short" gotest -short -count=1 -timeout 10m ./...
	checks
	;;
*)
	echo "test.sh: unknown mode $mode (full, check or interop-skip)" >&2
	exit 2
	;;
esac

echo
echo "== time by package (go test's own figures, slowest first)"
grep -E '^(ok|FAIL|---)?[[:space:]]*(ok|FAIL)[[:space:]]+github.com/' "$log" |
	awk '{ t=$NF; sub(/s$/, "", t); if (t ~ /^[0-9.]+$/) printf "%8.1fs  %-4s %s\n", t, $1, $2 }' |
	sort -rn
echo "== steps"
printf '%s\n' "${steps[@]}"
printf '%-28s %5ds\n' "total" $((SECONDS - t0))
exit $failed
