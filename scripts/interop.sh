#!/usr/bin/env bash
# make interop: every third-party interop suite in full, with -race, one
# at a time, then one line per framework, wire and configuration:
#   interop <framework> <wire> <config>: gate holds|FAILS|skipped (integrity k/N)
# "gate holds" is the suite's own assertions passing; integrity k/N is how
# many of its scored calls kept their integrity, when the suite logs it
# ("interop: integrity k/N"), else how many of its subtests passed.
# A missing framework is a failure here (interop.Missing), never a skip.
# `make test` runs a subset of these suites: scripts/test.sh skips the
# tests listed in its INTEROP_ONLY (docs/INTEROP.md, "make interop").
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
export CALLPROOF_INTEROP_REQUIRED=1

# framework wire config package -run pattern
suites=(
	"openai-agents twilio sdk ./agents/realtime/ ^TestInteropOpenAIAgentsTwilio$"
	"openai-agents twilio cli ./cmd/callproof/ ^TestRunTwilioOpenAIAgent$"
	"openai-agents twilio mcp-barge-in ./cmd/callproof/ ^TestOpenAIAgentBargeInDuringTool$"
	"pipecat twilio cli ./cmd/callproof/ ^TestRunTwilioPipecatBot$/^[^m]"
	"pipecat twilio mcp ./cmd/callproof/ ^TestRunTwilioPipecatBot$/^mcp-tools$"
	"pipecat eval cli ./cmd/callproof/ ^TestRunEvalPipecatBot$/^[^m]"
	"pipecat eval mcp ./cmd/callproof/ ^TestRunEvalPipecatBot$/^mcp-tools$"
	"pipecat smallwebrtc cli ./cmd/callproof/ ^TestRunWebRTCPipecatBot$"
	"livekit python careful ./cmd/callproof/ ^TestLiveKitStockAgent$/^careful-"
	"livekit python flawed ./cmd/callproof/ ^TestLiveKitStockAgent$/^flawed-"
	"janus webrtc echotest ./callsim/webrtc/ ^TestJanusEcho$"
	"callproof-careful twilio core ./harness/ ^TestAudioCoreMatchesText$"
	"callproof-careful twilio audio-only-load ./cmd/callproof/ ^TestLoadAudioOnlyAgent$"
	"callproof-careful webrtc core ./harness/ ^TestWebRTCCoreMatchesWebSocket$/^careful$"
	"callproof-naive webrtc core ./harness/ ^TestWebRTCCoreMatchesWebSocket$/^naive$"
)

# Only the suites whose line matches $1 (a grep -E pattern), if given.
filter=${1:-}
lines=()
failed=0
for s in "${suites[@]}"; do
	read -r fw wire cfg pkg pat <<<"$s"
	if [ -n "$filter" ] && ! grep -qE -- "$filter" <<<"$fw $wire $cfg"; then
		continue
	fi
	log=$(mktemp)
	echo "== interop $fw $wire $cfg: go test -race -run '$pat' $pkg"
	t0=$SECONDS
	"$GO" test -race -count=1 -timeout 30m -v -run "$pat" "$pkg" >"$log" 2>&1
	rc=$?
	# (a child process's output, quoted in a log, is indented with a tab)
	grep -E -- '^ *--- (PASS|FAIL|SKIP)|^(ok|FAIL)\s|interop: integrity' "$log"
	integ=$(grep -oE 'interop: integrity [0-9]+/[0-9]+' "$log" | awk '{split($3, a, "/"); k += a[1]; n += a[2]} END {if (n) print k "/" n}')
	if [ -n "$integ" ]; then
		count="integrity $integ"
	else
		# leaf subtests: the ones no other subtest's name extends
		names=$(grep -E -- '^ *--- (PASS|FAIL|SKIP): ' "$log" | awk '{print $2, $3}')
		count="$(awk '{st[$2] = $1} END {n = 0; k = 0; for (x in st) {leaf = 1; for (y in st) if (index(y, x "/") == 1) leaf = 0; if (leaf) {n++; if (st[x] == "PASS:") k++}} print k "/" n " subtests"}' <<<"$names")"
	fi
	if [ $rc -ne 0 ]; then
		verdict=FAILS
		failed=1
		tail -n 60 "$log"
	elif grep -qE -- '^ *--- SKIP' "$log"; then
		verdict="skipped ($(grep -m1 -A1 -E -- '^ *--- SKIP' "$log" | tail -n1 | sed -E 's/^\s+//'))"
	else
		verdict="gate holds"
	fi
	lines+=("$(printf 'interop %s %s %s: %s (%s) %ds' "$fw" "$wire" "$cfg" "$verdict" "$count" $((SECONDS - t0)))")
	rm -f "$log"
done
echo
echo "== interop"
printf '%s\n' "${lines[@]}"
exit $failed
