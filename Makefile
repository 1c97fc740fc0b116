# callproof: two commands do all set-up on a fresh machine.
#   make demo   the built-in core suite against both reference agents
#   make test   every test, with the race detector
#   make check  the quick loop: vet, the Go tests without the live-call
#               suites (-short, no race detector), pytest
#   make interop  the third-party interop suites in full, one line each
GO ?= go

.PHONY: demo test check deps build wheel bench vet fmt fuzz mutation stress interop

demo:
	$(GO) run ./cmd/callproof demo

# The tools the tests use, installed where missing: Debian's flite,
# espeak-ng and pocketsphinx (scripts/install-speech.sh), the pinned
# npm packages of the third-party agent (scripts/install-node-agents.sh),
# chromium for the HTML report's browser test (scripts/install-browser.sh),
# janus for the WebRTC interop test (scripts/install-janus.sh), the
# LiveKit server for the LiveKit tests, built with go install into
# bin/livekit/ (scripts/install-livekit.sh) and the hash-pinned Python
# test packages in .venv (scripts/install-python.sh).
# scripts/deps.sh builds the LiveKit server beside the other installs.
deps:
	GO=$(GO) ./scripts/deps.sh

# Every Go test with -race (packages one at a time) but the long interop
# halves `make interop` runs; beside them, on one core, go vet, the
# calibration gate and pytest; ends with the time each package took
# (scripts/test.sh).
test: deps
	GO=$(GO) ./scripts/test.sh full

# The third-party interop suites in full (the OpenAI Agents SDK and
# Pipecat over Twilio, janus, the reference agents over WebRTC), one line
# each:
# `interop <framework> <wire> <config>: gate holds|FAILS (integrity k/N)`.
# `make test` skips their long halves (INTEROP_ONLY in scripts/test.sh);
# in both, a missing framework fails (docs/INTEROP.md, "make interop").
interop: deps
	GO=$(GO) ./scripts/interop.sh

# The quick loop for developers: a few minutes.
check: deps
	GO=$(GO) ./scripts/test.sh check

build:
	$(GO) build -o bin/callproof ./cmd/callproof

# The Python wheels (`pip install callproof`) into dist/: the static binary
# for linux x86_64 and aarch64 and macOS arm64, each in its platform wheel
# (scripts/build_wheel.py, standard library only; docs/CLI.md, "Python wheels").
wheel:
	GO=$(GO) python3 scripts/build_wheel.py --out dist

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./scorer/ ./harness/ ./mockbackend/

# Every Fuzz target in the repo, one by one, FUZZTIME each (scripts/fuzz.sh
# finds them). Plain `go test`, so `make test`, already replays their seed
# corpora and every crash committed under testdata/fuzz/.
FUZZTIME ?= 30s
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh

# Mutation testing of scorer/ with gremlins (pinned, installed into
# bin/tools/ by the script). Slow (tens of minutes on two cores), so not in
# CI; fails below 95 % test efficacy or mutant coverage. Figures and the
# equivalent live mutants: docs/PERFORMANCE.md, docs/SCORING.md.
mutation:
	GO=$(GO) ./scripts/mutation.sh

# The tests that once failed on timing, 20 times each under a CPU hog on
# the second core, then the live-call packages 3 times, all with -race;
# fails on any failure, keeping each failing run's whole output in
# STRESS_LOGS (scripts/stress.sh, docs/PERFORMANCE.md, Flakes).
stress:
	GO=$(GO) ./scripts/stress.sh

fmt:
	gofmt -w $$(git ls-files '*.go')
