# ccmesh — see README.md. `make test` is what CI runs (.ci/run).
GO      ?= go
BIN     ?= bin/ccmesh
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
DATE    ?= $(shell git log -1 --format=%cI 2>/dev/null || date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS := -s -w -X github.com/ccmesh/ccmesh/app.Version=$(VERSION) \
	-X github.com/ccmesh/ccmesh/app.Commit=$(COMMIT) -X github.com/ccmesh/ccmesh/app.Date=$(DATE)
DESKTOP_TAGS := desktop,production,webkit2_41

STATICCHECK := $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: all build run ui desktop types test lint test-go test-ui test-e2e test-e2e-clients test-faults test-desktop bench bench-go clean

all: build

## build: the headless binary (no cgo), with the UI embedded
build: ui
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) .

## run: build and start headless on 127.0.0.1:3457
run: build
	./$(BIN) --headless $(ARGS)

## ui: the web UI into frontend/dist (embedded by go:embed)
ui: frontend/node_modules/.installed
	cd frontend && npm run build

frontend/node_modules/.installed: frontend/package.json frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund
	touch $@

## desktop: the Wails window + tray build (needs the packages in README)
desktop: ui
	CGO_ENABLED=1 $(GO) build -trimpath -tags $(DESKTOP_TAGS) -ldflags '$(LDFLAGS)' -o bin/ccmesh-desktop .

## types: regenerate frontend/src/api/types.gen.ts from the Go API types
## (a test in app/ fails when the committed file differs)
types:
	CCMESH_UPDATE_TYPES=1 $(GO) test ./app -run TestFrontendTypes -count=1

## test: everything CI runs
test: lint test-go test-ui test-e2e test-e2e-clients test-desktop

## lint: go vet and staticcheck (plain and desktop build), ESLint with the
## React hooks rules and tsc --noEmit for the frontend
lint: frontend/node_modules/.installed
	$(GO) vet ./...
	$(GO) vet -tags $(DESKTOP_TAGS) ./...
	$(STATICCHECK) ./...
	$(STATICCHECK) -tags $(DESKTOP_TAGS) ./...
	cd frontend && npm run lint && npm run typecheck

test-go:
	$(GO) test -race -count=1 ./...

test-ui: frontend/node_modules/.installed
	cd frontend && npm test

test-e2e: build
	cd frontend && CCMESH_BIN=$(CURDIR)/$(BIN) npm run e2e

## test-e2e-clients: Claude Code and the Anthropic/OpenAI SDKs (pinned in
## e2e/clients/package.json) through ccmesh against fake upstreams, in a
## loopback-only network namespace (`unshare --net`, needs root)
test-e2e-clients: e2e/clients/node_modules/.installed
	CGO_ENABLED=0 $(GO) build -o bin/ccmesh-e2e .
	cd e2e/clients && CCMESH_BIN=$(CURDIR)/bin/ccmesh-e2e npm test

e2e/clients/node_modules/.installed: e2e/clients/package.json e2e/clients/package-lock.json
	cd e2e/clients && npm ci --no-audit --no-fund
	touch $@

## test-faults: the fault matrix and the kill -9 test against the real
## binary on their own; `make test` runs them in test-go
test-faults:
	$(GO) test -race -count=1 ./e2e/faults

## test-desktop: the desktop binary under Xvfb + D-Bus (packages: see README)
test-desktop: desktop
	CCMESH_DESKTOP_BIN=$(CURDIR)/bin/ccmesh-desktop CCMESH_ARTIFACTS=$(CURDIR)/artifacts \
		dbus-run-session -- $(GO) test -tags desktop -count=1 -v ./e2e/desktop

## bench: ccmesh vs direct, a bare ReverseProxy and nginx, plus the Go
## micro-benchmarks (bench-go); writes docs/BENCHMARKS.md (see bench/run.sh)
bench:
	GO=$(GO) bench/run.sh

## bench-go: the Go micro-benchmarks of ./breaker, ./proxy and ./store
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./breaker ./proxy ./store

clean:
	rm -rf bin frontend/dist/assets frontend/dist/index.html
