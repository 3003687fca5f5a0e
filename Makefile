# hostrelay — the two commands a newcomer needs are `make run` and `make test`.
GO      ?= go
BIN     := bin/hostrelay
BOT     := bin/hostrelay-bot
E2E_BIN := bin/hostrelay-e2e
NATSD   := bin/hostrelay-natsd
FUZZTIME ?= 60s

.PHONY: run run-cluster build web web-e2e build-e2e build-natsd examples deps test test-go test-web test-packages e2e fuzz vet lint clean bench bench-netcode soak vulncheck screenshots release release-npm release-host

# npm ci only when the lockfile or a workspace's package.json changed since the last install.
node_modules/.installed: package.json package-lock.json $(wildcard web/packages/*/package.json games/*/package.json examples/*/package.json)
	npm ci --no-audit --no-fund
	@touch $@

deps: node_modules/.installed

# The web app is built into static/dist, which the Go binary embeds; the
# check fails the build if test code (the e2e build's hooks) got into it.
web: deps
	npm run build
	@touch static/dist/.gitkeep # vite empties dist; the embed needs a file before the first build
	npm run --silent check:bundle -- production static/dist

# The end-to-end tests' build of the web app (with the test hooks) and the
# server binary that embeds it instead of static/dist.
web-e2e: deps
	npm run build:e2e
	@touch static/e2e/.gitkeep
	npm run --silent check:bundle -- e2e static/e2e

build-e2e: web-e2e
	$(GO) build -tags e2e -o $(E2E_BIN) ./server/cmd/hostrelay

# The NATS server (JetStream, loopback) the cluster's browser test runs its two nodes on.
build-natsd:
	$(GO) build -o $(NATSD) ./cluster/cmd/hostrelay-natsd

build: web
	$(GO) build -o $(BIN) ./server/cmd/hostrelay
	$(GO) build -o $(BOT) ./client/cmd/hostrelay-bot

## run: build everything and start the server on :8080 (TURN on 3478 UDP+TCP)
run: build
	./$(BIN) $(ARGS)

## run-cluster: two nodes (:8081 eu-west, :8082 us-east) and NATS on this machine, to try a cluster (docs/cluster.md); Ctrl-C stops them
run-cluster: build build-natsd
	deploy/run-cluster.sh $(ARGS)

## test: the whole suite (Go with -race, TypeScript, the packages packed and installed, this machine's release archive run, headless Chromium)
test: build vet release-host test-go test-web test-packages e2e

## vet: go mod tidy (go.mod and go.sum as tidy leaves them), go vet, golangci-lint (.golangci.yml, the pinned version below), the TypeScript type check and the import check (no circle, layers kept)
# golangci-lint is built from source by `go install` into bin/tools, one
# binary per version, so a version bump installs the new one.
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := bin/tools/golangci-lint-$(GOLANGCI_LINT_VERSION)

$(GOLANGCI_LINT):
	@mkdir -p bin/tools
	GOBIN=$(abspath bin/tools) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv bin/tools/golangci-lint $@

lint: $(GOLANGCI_LINT)
	$(GOLANGCI_LINT) run ./...

vet: lint deps
	$(GO) mod tidy -diff
	$(GO) vet ./...
	npm run typecheck
	npm run --silent check:imports

test-go:
	$(GO) test -race -count=1 -timeout 8m ./...

test-web: deps
	npm test

# npm pack of @hostrelay/protocol, sdk and netcode, installed from the
# tarballs into an empty project and type-checked there (web/packages/install.pack-test.ts).
test-packages: deps
	npm run test:packages

## examples: the packages built as published (their dist/), then examples/pong type-checked and built against them into examples/pong/dist
examples: deps
	npm run build:packages
	npm run build -w hostrelay-example-pong

e2e: build build-e2e build-natsd examples
	HOSTRELAY_BIN=$(abspath $(E2E_BIN)) HOSTRELAY_BOT_BIN=$(abspath $(BOT)) HOSTRELAY_NATSD_BIN=$(abspath $(NATSD)) npm run e2e

## screenshots: every lobby screen and the game at 390×844 and 1280×800, both games on a touch phone, a malformed share link, the admin page, and a cluster's room list with regions, as PNGs in test-results/screenshots
screenshots: build-e2e build-natsd
	HOSTRELAY_SCREENSHOTS=$(abspath test-results/screenshots) HOSTRELAY_BIN=$(abspath $(E2E_BIN)) HOSTRELAY_NATSD_BIN=$(abspath $(NATSD)) \
	  npx vitest run --config vitest.e2e.config.ts e2e/screens.test.ts e2e/game.test.ts e2e/share-link.test.ts e2e/touch.test.ts e2e/admin.test.ts e2e/cluster.test.ts

## fuzz: run every Go fuzz target for FUZZTIME each under a 4 GiB address-space cap
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$target"; \
	    (ulimit -v 4194304; $(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg) || exit 1; \
	  done; \
	done

## bench: TURN vs coturn, latency, allocations, lobby, browser, capacity; one table (not part of test); then bench-netcode
bench: build
	bench/run.sh $(BENCHARGS)
	@$(MAKE) --no-print-directory bench-netcode

## bench-netcode: game bytes per second per client, delta compression on and off, 2/4/8 players (simulated time, seconds)
bench-netcode: deps
	@npm run --silent bench:netcode

## soak: 500 players in rooms of 8 through TURN with churn for 30 minutes; RSS, goroutines, open files,
## allocations must stay flat and players lose nothing (not part of test; exit 1 if not). A short run:
## make soak SOAK_DURATION=2m SOAK_PLAYERS=48 (every flag of bench/cmd/soak has a SOAK_* variable)
## The server binary is built without the web app step: the soak never loads the page.
soak:
	$(GO) build -o $(BIN) ./server/cmd/hostrelay
	$(GO) build -o bin/bench/soak ./bench/cmd/soak
	bin/bench/soak -hostrelay $(BIN) $(SOAKARGS)

## vulncheck: govulncheck over every package (needs vuln.go.dev; says SKIPPED when unreachable)
## (VULNDB=file:///path or https://mirror points it at another copy of the database)
GOVULNCHECK_VERSION := v1.1.4
VULNDB ?=
vulncheck:
	@$(GO) install golang.org/x/vuln/cmd/govulncheck@$(GOVULNCHECK_VERSION)
	@out=$$($$($(GO) env GOPATH)/bin/govulncheck $(if $(VULNDB),-db $(VULNDB)) ./... 2>&1); rc=$$?; \
	if [ $$rc -ne 0 ] && echo "$$out" | grep -q 'fetching vulnerabilities'; then \
	  echo "govulncheck: SKIPPED, the vulnerability database is unreachable:"; echo "$$out" | tail -1; \
	else echo "$$out"; exit $$rc; fi

## release: make release VERSION=x.y.z: static binaries for linux and darwin (amd64, arm64) and windows/amd64 with the web app embedded, archived with README and LICENSE, a CycloneDX SBOM per binary, SHA256SUMS, and the npm tarballs of @hostrelay/protocol, sdk and netcode in dist/npm (GoReleaser, .goreleaser.yaml, in snapshot mode: nothing is published; RELEASING.md)
# GoReleaser and cyclonedx-gomod are built from source by `go install` into
# bin/tools, one per version, as golangci-lint is.
GORELEASER_VERSION := v2.15.1
GORELEASER := bin/tools/goreleaser-$(GORELEASER_VERSION)
CYCLONEDX_GOMOD_VERSION := v1.10.0
# In a folder of its own: .goreleaser.yaml runs it by its name, from PATH.
CYCLONEDX_GOMOD_DIR := bin/tools/cyclonedx-gomod-$(CYCLONEDX_GOMOD_VERSION)
NPM_PACKAGES := protocol sdk netcode
VERSION ?=
# GoReleaser drops all it read from git (commit, date) when the clone has no
# remote, as it asks for the remote's URL among the rest: a clone without one
# gets the project's, for GoReleaser's git commands alone.
RELEASE_GIT_ENV = $(if $(shell git remote),,GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=https://github.com/hostrelay/hostrelay.git)

$(GORELEASER):
	@mkdir -p bin/tools
	GOBIN=$(abspath bin/tools) $(GO) install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)
	mv bin/tools/goreleaser $@

$(CYCLONEDX_GOMOD_DIR)/cyclonedx-gomod:
	GOBIN=$(abspath $(CYCLONEDX_GOMOD_DIR)) $(GO) install github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@$(CYCLONEDX_GOMOD_VERSION)

release: $(GORELEASER) $(CYCLONEDX_GOMOD_DIR)/cyclonedx-gomod
	@echo '$(VERSION)' | grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$$' || \
	  { echo 'usage: make release VERSION=x.y.z (semver, no leading v)'; exit 2; }
	$(RELEASE_GIT_ENV) VERSION=$(VERSION) PATH="$(abspath $(CYCLONEDX_GOMOD_DIR)):$$PATH" GOMODCACHE="$$($(GO) env GOMODCACHE)" \
	  $(GORELEASER) release --snapshot --clean
	mkdir -p dist/npm
	cp $(foreach p,$(NPM_PACKAGES),bin/npm/hostrelay-$(p)-$(VERSION).tgz) dist/npm/
	@ls -l dist/*.tar.gz dist/*.zip dist/*.cdx.json dist/SHA256SUMS dist/npm/*.tgz

# .goreleaser.yaml's before hook: npm pack of the published packages (prepack
# builds each and copies LICENSE in) into bin/npm, refusing a package whose
# version is not VERSION.
release-npm: deps
	@for p in $(NPM_PACKAGES); do \
	  v=$$(node -p "require('./web/packages/$$p/package.json').version"); \
	  [ "$$v" = '$(VERSION)' ] || { echo "web/packages/$$p is version $$v, not $(VERSION): npm version $(VERSION) -w @hostrelay/$$p (RELEASING.md)"; exit 1; }; \
	done
	rm -rf bin/npm && mkdir -p bin/npm
	npm pack --pack-destination bin/npm $(foreach p,$(NPM_PACKAGES),-w @hostrelay/$(p))

## release-host: the release archive for this machine's platform alone, in dist/host (the same .goreleaser.yaml with its targets line replaced; no SBOM, no npm): what make test's archive test unpacks and runs
RELEASE_HOST_VERSION ?= 0.0.0-test
RELEASE_HOST_TARGET = $(shell $(GO) env GOOS)_$(shell $(GO) env GOARCH)
release-host: $(GORELEASER) web
	@grep -q '^    targets: \[' .goreleaser.yaml || { echo '.goreleaser.yaml: no "    targets: [...]" line for release-host to replace'; exit 1; }
	{ sed 's/^    targets: \[.*\]$$/    targets: [$(RELEASE_HOST_TARGET)]/' .goreleaser.yaml; echo 'dist: dist/host'; } | \
	  $(RELEASE_GIT_ENV) VERSION=$(RELEASE_HOST_VERSION) $(GORELEASER) release --config - --snapshot --clean --skip=before,sbom

clean:
	rm -rf dist bin static/dist/assets static/dist/index.html static/dist/*.svg \
	  static/e2e/assets static/e2e/index.html static/e2e/*.svg web/packages/*/dist examples/*/dist
