# hostrelay — the two commands a newcomer needs are `make run` and `make test`.
GO      ?= go
BIN     := bin/hostrelay
BOT     := bin/hostrelay-bot
E2E_BIN := bin/hostrelay-e2e
NATSD   := bin/hostrelay-natsd
FUZZTIME ?= 60s

.PHONY: run run-cluster build web web-e2e build-e2e build-natsd examples deps test test-go test-web test-packages e2e fuzz vet lint clean bench bench-netcode soak soak-floods vulncheck screenshots

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

## test: the whole suite (Go with -race, TypeScript, the packages packed and installed, headless Chromium)
test: build vet test-go test-web test-packages e2e

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

## soak-floods: the soak with issue 24's attackers (pong floods, endless messages, 90-request bursts) in the
## second half after warm-up; the players' lobby round-trip and game latency p99 must stay within 10 % of the
## first, quiet half. make soak-floods SOAK_PLAYERS=200 SOAK_FLOODS=12 SOAK_DURATION=4m
soak-floods:
	$(MAKE) --no-print-directory soak SOAK_FLOODS=$${SOAK_FLOODS:-12} SOAK_DURATION=$${SOAK_DURATION:-10m}

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

clean:
	rm -rf bin static/dist/assets static/dist/index.html static/dist/*.svg \
	  static/e2e/assets static/e2e/index.html static/e2e/*.svg static/sdk/*.*js* static/sdk/manifest.json \
	  web/packages/*/dist examples/*/dist
