# bucketctl: `make test` installs what the tests need (redis-server) and runs every test.

GO        ?= go
PKGS      ?= ./...
SUDO      := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: test deps vet fmt-check build bench clean

test: deps vet fmt-check
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

# redis-server (with redis-benchmark and redis-cli) from Debian's packages when it is absent.
deps:
	@command -v redis-server >/dev/null 2>&1 || { \
		echo "redis-server not found: installing it (apt-get)"; \
		$(SUDO) apt-get update && $(SUDO) apt-get install -y redis-server; }
	@command -v redis-server >/dev/null 2>&1 || { echo "redis-server is still missing"; exit 1; }

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

build:
	$(GO) build -o bin/bucketctl .

bench: deps
	$(GO) test ./bucket -run NONE -bench Take -benchmem

clean:
	rm -rf bin dist
