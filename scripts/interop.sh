#!/usr/bin/env bash
# make interop: every third-party interop suite in full, with -race, one
# at a time, then one line per framework, wire and configuration:
#   interop <framework> <wire> <config>: gate holds|FAILS|test FAILED|skipped (integrity k/N)
# "gate holds" is the suite's own assertions passing and, when its calls
# say what the release gate makes of them ("interop: gate holds|FAILS:
# BUCKET…"), the gate holding on every call; "FAILS" with the buckets is
# the gate failing on a call while the suite's assertions pass (a
# configuration meant to fail: the suite checks the buckets); "test
# FAILED" is an assertion failing. integrity k/N is how many of its
# scored calls kept their integrity, when the suite logs it ("interop:
# integrity k/N"), else how many of its subtests passed.
# A missing framework is a failure here (interop.Missing), never a skip.
# `make test` runs a subset of these suites: scripts/test.sh skips the
# tests listed in its INTEROP_ONLY (docs/INTEROP.md, "make interop").
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
export CALLPROOF_INTEROP_REQUIRED=1
# The Pipecat calls leave their scores here; "pipecat all wires-agree"
# compares them across wires. Set it to keep them across invocations
# (one wire at a time, then 'pipecat all').
if [ -z "${CALLPROOF_PIPECAT_VERDICTS:-}" ]; then
	CALLPROOF_PIPECAT_VERDICTS=$(mktemp -d)
	trap 'rm -rf "$CALLPROOF_PIPECAT_VERDICTS"' EXIT
fi
export CALLPROOF_PIPECAT_VERDICTS

# framework wire config package -run pattern
suites=(
	"openai-agents twilio sdk ./agents/realtime/ ^TestInteropOpenAIAgentsTwilio$"
	"openai-agents twilio cli ./cmd/callproof/ ^TestRunTwilioOpenAIAgent$"
	"openai-agents twilio mcp-barge-in ./cmd/callproof/ ^TestOpenAIAgentBargeInDuringTool$"
	"pipecat twilio cancel-on-interruption ./cmd/callproof/ ^TestRunTwilioPipecatBot$/^[^mn]"
	"pipecat twilio no-cancel-on-interruption ./cmd/callproof/ ^TestRunTwilioPipecatBot$/^no-cancel-on-interruption$"
	"pipecat twilio mcp ./cmd/callproof/ ^TestRunTwilioPipecatBot$/^mcp-tools$"
	"pipecat eval cancel-on-interruption ./cmd/callproof/ ^TestRunEvalPipecatBot$/^[^mn]"
	"pipecat eval no-cancel-on-interruption ./cmd/callproof/ ^TestRunEvalPipecatBot$/^no-cancel-on-interruption$"
	"pipecat eval mcp ./cmd/callproof/ ^TestRunEvalPipecatBot$/^mcp-tools$"
	"pipecat eval core-careful ./cmd/callproof/ ^TestRunEvalPipecatCore$/^careful$"
	"pipecat eval core-no-cancel-on-interruption ./cmd/callproof/ ^TestRunEvalPipecatCore$/^no-cancel-on-interruption$"
	"pipecat twilio core-careful ./cmd/callproof/ ^TestRunAudioPipecatCore$/^twilio-core-careful$"
	"pipecat twilio core-no-cancel-on-interruption ./cmd/callproof/ ^TestRunAudioPipecatCore$/^twilio-core-no-cancel-on-interruption$"
	"pipecat smallwebrtc core-careful ./cmd/callproof/ ^TestRunAudioPipecatCore$/^webrtc-core-careful$"
	"pipecat smallwebrtc core-no-cancel-on-interruption ./cmd/callproof/ ^TestRunAudioPipecatCore$/^webrtc-core-no-cancel-on-interruption$"
	"pipecat smallwebrtc cancel-on-interruption ./cmd/callproof/ ^TestRunWebRTCPipecatBot$/^[^n]"
	"pipecat smallwebrtc no-cancel-on-interruption ./cmd/callproof/ ^TestRunWebRTCPipecatBot$/^no-cancel-on-interruption$"
	"pipecat all wires-agree ./cmd/callproof/ ^TestPipecatWiresAgree$"
	"pipecat audio stt-words ./cmd/callproof/ ^TestPipecatSTTWords$"
	"livekit python careful ./cmd/callproof/ ^TestLiveKitStockAgent$/^careful-"
	"livekit python flawed ./cmd/callproof/ ^TestLiveKitStockAgent$/^flawed-"
	"livekit python mcp ./cmd/callproof/ ^TestLiveKitStockAgent$/^mcp-tools$"
	"livekit python core-careful ./cmd/callproof/ ^TestLiveKitStockCore$/^core-careful$"
	"livekit python core-flawed ./cmd/callproof/ ^TestLiveKitStockCore$/^core-flawed$"
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
	# A suite may say what the release gate makes of its calls
	# ("interop: gate holds", "interop: gate FAILS: BUCKET…", one line a
	# call): a configuration meant to fail the gate passes its test.
	gate=$(grep -oE 'interop: gate FAILS: .*' "$log" | sed -E 's/^interop: gate FAILS: //' | tr ' ' '\n' | sort -u | paste -sd, -)
	if [ -n "$gate" ]; then
		count="$count; buckets $gate"
	fi
	# Calls a suite left out of its assertions, the gate undecided only
	# because callproof's recognizer could not vouch for the agent's words
	# ("interop: left out N (…): CALLS").
	out=$(grep -oE 'interop: left out [0-9]+' "$log" | awk '{k += $4} END {if (k) print k}')
	if [ -n "$out" ]; then
		count="$count; left out $out, words unreadable"
	fi
	if [ $rc -ne 0 ]; then
		verdict="test FAILED"
		failed=1
		tail -n 60 "$log"
	elif [ -n "$gate" ]; then
		verdict=FAILS
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
