# ccmesh — see README.md. `make test` is what CI runs (.ci/run).
GO      ?= go
BIN     ?= bin/ccmesh
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/ccmesh/ccmesh/app.Version=$(VERSION)
DESKTOP_TAGS := desktop,production,webkit2_41

.PHONY: all build run ui desktop test test-go test-ui test-e2e test-desktop bench clean

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

## test: everything CI runs
test: test-go test-ui test-e2e test-desktop

test-go:
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

test-ui: frontend/node_modules/.installed
	cd frontend && npm test

test-e2e: build
	cd frontend && CCMESH_BIN=$(CURDIR)/$(BIN) npm run e2e

## test-desktop: the desktop binary under Xvfb + D-Bus (packages: see README)
test-desktop: desktop
	$(GO) vet -tags $(DESKTOP_TAGS) ./...
	CCMESH_DESKTOP_BIN=$(CURDIR)/bin/ccmesh-desktop CCMESH_ARTIFACTS=$(CURDIR)/artifacts \
		dbus-run-session -- $(GO) test -tags desktop -count=1 -v ./e2e/desktop

## bench: Go micro-benchmarks (results go to docs/BENCHMARKS.md by hand)
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./breaker ./proxy

clean:
	rm -rf bin frontend/dist/assets frontend/dist/index.html
