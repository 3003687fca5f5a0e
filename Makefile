# hostrelay — the two commands a newcomer needs are `make run` and `make test`.
GO      ?= go
BIN     := bin/hostrelay
BOT     := bin/hostrelay-bot
E2E_BIN := bin/hostrelay-e2e
NATSD   := bin/hostrelay-natsd
FUZZTIME ?= 60s

.PHONY: run run-cluster build web web-e2e build-e2e build-natsd examples deps test test-go test-web test-packages e2e fuzz vet lint helm licenses notices clean bench bench-netcode soak soak-floods vulncheck screenshots release release-npm release-host

# The version and commit stamped into the binaries (internal/buildinfo):
# the nearest v-tag without its v (0.1.0; 0.1.0-3-gabc1234def56 past it),
# 0.0.0-dev+<short commit> before the first tag, -dirty with uncommitted
# changes; 0.0.0-dev outside a git checkout. Either can be given:
# make build VERSION=0.1.0 COMMIT=<sha>.
VERSION ?= $(shell d=$$(git describe --tags --always --dirty --abbrev=12 --match 'v[0-9]*' 2>/dev/null); \
  case "$$d" in (v[0-9]*) echo "$$d" | cut -c2-;; ("") echo 0.0.0-dev;; (*) echo "0.0.0-dev+$$d";; esac)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X github.com/hostrelay/hostrelay/internal/buildinfo.version=$(VERSION) -X github.com/hostrelay/hostrelay/internal/buildinfo.commit=$(COMMIT)

# npm ci only when the lockfile or a workspace's package.json changed since the last install.
node_modules/.installed: package.json package-lock.json $(wildcard web/packages/*/package.json web/games/*/package.json examples/*/package.json)
	npm ci --no-audit --no-fund
	@touch $@

deps: node_modules/.installed

# The web app is built into static/dist and the script-tag SDK into
# static/sdk (web/bundle/build.ts), which the Go binary embeds; the check
# fails the build if test code (the e2e build's hooks) got into the app.
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
	$(GO) build -tags e2e -ldflags "$(LDFLAGS)" -o $(E2E_BIN) ./server/cmd/hostrelay

# The NATS server (JetStream, loopback) the cluster's browser test runs its two nodes on.
build-natsd:
	$(GO) build -o $(NATSD) ./cluster/cmd/hostrelay-natsd

build: web
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./server/cmd/hostrelay
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BOT) ./client/cmd/hostrelay-bot

## run: build everything and start the server on :8080 (TURN on 3478 UDP+TCP)
run: build
	./$(BIN) $(ARGS)

## run-cluster: two nodes (:8081 eu-west, :8082 us-east) and NATS on this machine, to try a cluster (docs/cluster.md); Ctrl-C stops them
run-cluster: build build-natsd
	deploy/run-cluster.sh $(ARGS)

## test: the whole suite (Go with -race, TypeScript, the packages packed and installed, this machine's release archive run, headless Chromium, licenses, the Helm chart)
test: build vet helm licenses release-host test-go test-web test-packages e2e

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

## licenses: every third-party Go package in the binaries has a license on licenses/allowed.txt (go-licenses check), licenses/go-notices.txt is as make notices writes it, and the check refuses GPL, MPL and unknown licenses on fixtures; the web app's build (make web) fails on an npm package with such a license itself
# go-licenses is built from licenses/tool/go.mod, which pins its version, into
# bin/tools (`go install …@version` cannot install it here: see that go.mod).
GO_LICENSES := bin/tools/go-licenses
GO_BINARIES := ./server/cmd/hostrelay ./client/cmd/hostrelay-bot
LICENSES_ALLOWED := $(shell grep -v '^\#' licenses/allowed.txt | paste -sd, -)

$(GO_LICENSES): licenses/tool/go.mod licenses/tool/go.sum
	@mkdir -p bin/tools
	$(GO) build -C licenses/tool -o $(abspath $@) github.com/google/go-licenses/v2

licenses: $(GO_LICENSES) web
	GOPROXY=off $(GO_LICENSES) check --logtostderr=false --stderrthreshold=ERROR --log_file=/dev/null \
	  --ignore github.com/hostrelay/hostrelay --allowed_licenses=$(LICENSES_ALLOWED) $(GO_BINARIES)
	$(GO) run ./licenses/cmd/gennotices -check -go-licenses $(GO_LICENSES) $(GO_BINARIES)
	HOSTRELAY_GO_LICENSES=$(abspath $(GO_LICENSES)) HOSTRELAY_GO_LICENSES_ALLOWED=$(LICENSES_ALLOWED) \
	  $(GO) test -count=1 ./licenses/...
	npx vitest run licenses/

## notices: write licenses/go-notices.txt (the Go packages' licenses and NOTICE files, embedded in the binaries) with go-licenses
notices: $(GO_LICENSES)
	$(GO) run ./licenses/cmd/gennotices -go-licenses $(GO_LICENSES) $(GO_BINARIES)


## helm: build the pinned helm into bin/tools, which deploy/helm_test.go runs (helm lint and helm template on deploy/helm/hostrelay)
# Built from source like golangci-lint, one binary per version; a big
# build, done once. deploy/helm_test.go reads HELM_VERSION to find it and
# skips, saying so, where it is not built (go test outside make).
HELM_VERSION := v3.22.0
HELM := bin/tools/helm-$(HELM_VERSION)

$(HELM):
	@mkdir -p bin/tools
	GOBIN=$(abspath bin/tools) $(GO) install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)
	mv bin/tools/helm $@

helm: $(HELM)

test-go: helm
	HOSTRELAY_HELM=$(abspath $(HELM)) $(GO) test -race -count=1 -timeout 8m ./...

test-web: deps
	npm test

# npm pack of @hostrelay/protocol, sdk, netcode and react, installed from the
# tarballs into an empty project and type-checked there (web/packages/install.pack-test.ts).
test-packages: deps
	npm run test:packages

## examples: the packages built as published (their dist/), then examples/pong, examples/phaser and examples/react-lobby type-checked and built against them into their dist/
examples: deps
	npm run build:packages
	npm run build -w hostrelay-example-pong
	npm run build -w hostrelay-example-phaser
	npm run build -w hostrelay-example-react-lobby

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
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./server/cmd/hostrelay
	$(GO) build -o bin/bench/soak ./bench/cmd/soak
	bin/bench/soak -hostrelay $(BIN) $(SOAKARGS)

## soak-floods: the soak with issue 24's attackers (pong floods, endless messages, 90-request bursts) in every
## other of 12 slices after warm-up; the players' lobby round-trip and game latency p99 in the flood slices must
## stay within 10 % of the quiet ones'. make soak-floods SOAK_PLAYERS=200 SOAK_FLOODS=12 SOAK_DURATION=4m
soak-floods:
	$(MAKE) --no-print-directory soak SOAK_FLOODS=$${SOAK_FLOODS:-12} SOAK_DURATION=$${SOAK_DURATION:-10m} \
		SOAK_FLOOD_PHASES=$${SOAK_FLOOD_PHASES:-12}

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

## release: make release VERSION=x.y.z: static binaries for linux and darwin (amd64, arm64) and windows/amd64 with the web app embedded, archived with README and LICENSE, a CycloneDX SBOM per binary, SHA256SUMS, and the npm tarballs of @hostrelay/protocol, sdk, netcode and react in dist/npm (GoReleaser, .goreleaser.yaml, in snapshot mode: nothing is published; RELEASING.md)
# GoReleaser and cyclonedx-gomod are built from source by `go install` into
# bin/tools, one per version, as golangci-lint is.
GORELEASER_VERSION := v2.15.1
GORELEASER := bin/tools/goreleaser-$(GORELEASER_VERSION)
CYCLONEDX_GOMOD_VERSION := v1.10.0
# In a folder of its own: .goreleaser.yaml runs it by its name, from PATH.
CYCLONEDX_GOMOD_DIR := bin/tools/cyclonedx-gomod-$(CYCLONEDX_GOMOD_VERSION)
NPM_PACKAGES := protocol sdk netcode react
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
	  static/e2e/assets static/e2e/index.html static/e2e/*.svg static/sdk/*.*js* static/sdk/manifest.json \
	  web/packages/*/dist examples/*/dist
