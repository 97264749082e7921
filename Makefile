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
# build/package is its own module (nfpm stays out of ccmesh's module graph)
PACKAGER := $(GO) -C build/package run .
RELEASE_TARGETS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64

.PHONY: all build run ui desktop types test lint test-go test-ui test-e2e test-e2e-clients test-faults test-desktop bench bench-go clean \
	deps package test-package package-windows test-package-windows release test-release

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

## test: everything CI runs; deps first installs the Debian packages it
## needs (as root), or stops with the apt-get line that does
test: deps lint test-go test-ui test-e2e test-e2e-clients test-desktop test-package

## deps: the Debian packages make test needs (list and rules: build/deps.sh)
deps:
	bash build/deps.sh

## lint: go vet and staticcheck (plain and desktop build), ESLint with the
## React hooks rules and tsc --noEmit for the frontend
lint: frontend/node_modules/.installed
	$(GO) vet ./...
	$(GO) vet -tags $(DESKTOP_TAGS) ./...
	$(STATICCHECK) ./...
	$(STATICCHECK) -tags $(DESKTOP_TAGS) ./...
	$(GO) -C build/package vet ./...
	cd build/package && $(STATICCHECK) ./...
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

## package: the Linux .deb of the desktop build, made with nfpm by
## build/package → dist/ccmesh_<version>_<arch>.deb (the Debian version
## made of VERSION: build/package/version.go)
package: desktop
	$(PACKAGER) deb -binary $(CURDIR)/bin/ccmesh-desktop -icon $(CURDIR)/build/appicon.png \
		-version '$(VERSION)' -date '$(DATE)' -out $(CURDIR)/dist

## test-package: build/package's Go tests, then install the .deb with
## apt-get, check and run it, purge it (needs root; build/package/test-package.sh)
test-package: package
	$(GO) -C build/package test -count=1 ./...
	CCMESH_VERSION='$(VERSION)' CCMESH_DEB_VERSION="$$($(PACKAGER) version '$(VERSION)')" \
		bash build/package/test-package.sh

## package-windows: the Windows desktop build (windows/amd64, no cgo, GUI
## subsystem) with its icon, manifest and version resource, and its
## per-user NSIS installer (needs makensis: Debian's nsis) →
## bin/ccmesh-desktop.exe, dist/windows/ccmesh_<version>_windows_amd64_setup.exe
## (build/windows/package.sh). Not part of make test: nothing here runs it.
package-windows: ui
	GO=$(GO) VERSION='$(VERSION)' DATE='$(DATE)' LDFLAGS='$(LDFLAGS)' TAGS=desktop,production \
		bash build/windows/package.sh

## test-package-windows: the exe's PE headers and resources, go version -m,
## the installer's files under 7z and the .nsi's registry entries
## (build/windows/check.sh; needs 7z: Debian's p7zip-full)
test-package-windows: package-windows
	GO=$(GO) CCMESH_VERSION='$(VERSION)' CCMESH_DEB_VERSION="$$($(PACKAGER) version '$(VERSION)')" \
		bash build/windows/check.sh

## release: headless binaries (no cgo, UI embedded) for RELEASE_TARGETS and
## their SHA256SUMS → dist/release/ccmesh_<version>_<os>_<arch>[.exe], and the
## Windows installer of package-windows beside them
release: ui package-windows
	rm -rf dist/release
	mkdir -p dist/release
	v="$$($(PACKAGER) version '$(VERSION)')" && for t in $(RELEASE_TARGETS); do \
		os=$${t%/*} arch=$${t#*/} ext=; [ $$os != windows ] || ext=.exe; \
		echo "release: $$os/$$arch"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags '$(LDFLAGS)' \
			-o dist/release/ccmesh_$${v}_$${os}_$${arch}$$ext . || exit 1; \
	done
	cp dist/windows/ccmesh_*_windows_amd64_setup.exe dist/release/
	cd dist/release && sha256sum ccmesh_* > SHA256SUMS

## test-release: what make release wrote: names, GOOS/GOARCH (go version -m),
## SHA256SUMS, and the native binary run (build/package/test-release.sh)
test-release: release
	GO=$(GO) RELEASE_TARGETS='$(RELEASE_TARGETS)' CCMESH_VERSION='$(VERSION)' \
		CCMESH_DEB_VERSION="$$($(PACKAGER) version '$(VERSION)')" bash build/package/test-release.sh

## bench: ccmesh vs direct, a bare ReverseProxy and nginx, plus the Go
## micro-benchmarks (bench-go); writes docs/BENCHMARKS.md (see bench/run.sh)
bench:
	GO=$(GO) bench/run.sh

## bench-go: the Go micro-benchmarks of ./breaker, ./proxy and ./store, and
## the translation of the 1 MB request (BenchmarkTranslateBig)
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./breaker ./proxy ./store
	$(GO) test -run '^$$' -bench 'TranslateBig' -benchmem -count=1 -benchtime 20x ./proxy/translate

clean:
	rm -rf bin dist frontend/dist/assets frontend/dist/index.html
