# callproof: two commands do all set-up on a fresh machine.
#   make demo   the built-in core suite against both reference agents
#   make test   every test, with the race detector
GO ?= go

.PHONY: demo test build bench vet fmt

demo:
	$(GO) run ./cmd/callproof demo

# -p 1: packages one at a time. The live-call tests run 64 calls at a
# twentieth of real time; sharing the two cores with other packages' tests
# only adds scheduler jitter to what they measure.
test:
	$(GO) vet ./...
	$(GO) test -race -count=1 -p 1 -timeout 30m ./...

build:
	$(GO) build -o bin/callproof ./cmd/callproof

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./scorer/ ./harness/ ./mockbackend/

fmt:
	gofmt -w $$(git ls-files '*.go')
