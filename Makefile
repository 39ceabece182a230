# bucketctl: `make test` installs what the tests need (redis-server) and runs every test.

GO        ?= go
PKGS      ?= ./...
SUDO      := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: test deps vet fmt-check build bench clean screenshots

test: deps vet fmt-check
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

# redis-server (with redis-benchmark and redis-cli) when it is absent: Homebrew on macOS,
# apt-get on Debian and Ubuntu; elsewhere the message says what to install.
deps:
	@command -v redis-server >/dev/null 2>&1 || { \
		if [ "$$(uname -s)" = Darwin ] && command -v brew >/dev/null 2>&1; then \
			echo "redis-server not found: installing it (brew install redis)"; \
			brew install redis; \
		elif command -v apt-get >/dev/null 2>&1; then \
			echo "redis-server not found: installing it (apt-get)"; \
			$(SUDO) apt-get update && $(SUDO) apt-get install -y redis-server; \
		else \
			echo "redis-server not found: install Redis 6 or later (brew install redis, apt-get install redis-server, dnf install redis)"; \
		fi; }
	@command -v redis-server >/dev/null 2>&1 || { echo "redis-server is still missing"; exit 1; }

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

build:
	$(GO) build -buildvcs=auto -o bin/bucketctl .

# The README's pictures, drawn from the real binary on pseudo-terminals against the demo's
# sandbox (Linux); a test fails when a picture's command no longer runs.
screenshots: deps build
	$(GO) run ./scripts/screenshots --bin bin/bucketctl --out scripts/screenshots

# The comparisons of the README's performance figures ('bucketctl help performance'), on
# loopback redis-servers the benchmarks start themselves: server script time per decision
# and Take side by side with go-redis/redis_rate, load against redis-benchmark, start-up
# against redis-cli, list of 1M buckets against SCAN + GET; scripts/bench/benchtable echoes their output and ends with the table
# (date, cores and load average included), failing when a command gave no figures. A few
# minutes on two cores: run it on an otherwise idle machine. benchtable is built first, so
# its compilation does not run beside the first benchmark.
bench: deps
	$(GO) build -o bin/benchtable ./scripts/bench/benchtable
	{ $(GO) test ./bucket -run NONE -bench 'Take$$' -benchmem -passes 5; \
	  $(GO) test ./bucket -run NONE -bench ServerCost -benchtime 1x; \
	  scripts/bench/load-vs-redis-benchmark.sh; \
	  scripts/bench/startup.sh; \
	  scripts/bench/list-vs-floor.sh; } | bin/benchtable

clean:
	rm -rf bin dist dist-gen

# Generated files. `make gen` rewrites the committed shell completions in completions/
# (a test fails when they are stale); man pages are made at release time only.
.PHONY: gen release-snapshot
gen:
	$(GO) run ./scripts/gen --dir . --man=false

# A local release build with GoReleaser, installed when missing (not part of `make test`:
# it builds every platform). Archives, .debs and checksums land in dist/. v2.15.1 is the
# newest GoReleaser that builds with this Go from the module proxy alone.
GORELEASER_VERSION ?= v2.15.1
GORELEASER ?= $(or $(shell command -v goreleaser 2>/dev/null),$(or $(shell $(GO) env GOBIN),$(shell $(GO) env GOPATH)/bin)/goreleaser)
release-snapshot:
	@test -x "$(GORELEASER)" || { echo "goreleaser not found: installing $(GORELEASER_VERSION) (go install)"; \
		$(GO) install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION); }
	$(GORELEASER) check
	$(GORELEASER) release --snapshot --clean --skip=publish
