# sqlfork-proxy developer targets. `make help` lists them.

SHELL := /bin/bash
GO    ?= go

BIN     := bin/sqlfork-proxy
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)

# A hang guard. In CI (CI=true, a clean machine) it stays inside CI's
# 20-minute budget. The integration package, run as one process, had come
# to 16-18 min with -race on a 2-core machine (953-1080 s, 2026-12-01);
# scripts/test.sh runs it as two processes beside the other packages, and
# the whole of .ci/run on a fresh clone took 680 s. Elsewhere the machine
# may be busy: with two CPU-bound processes beside it on the same 2 cores,
# the whole of make test took 1177 s on a fresh clone (2026-12-01; 2177 s
# before the split), so the guard is 50 minutes.
ifeq ($(CI),true)
TEST_TIMEOUT ?= 18m
else
TEST_TIMEOUT ?= 50m
endif
FUZZTIME     ?= 30s
BENCH_ARGS   ?=
RUN_ARGS     ?=
# honnef.co/go/tools v0.8.2 = staticcheck 2026.2.2, the newest release; it
# builds and runs with Go 1.26. (The proxy only serves semver tags, so
# "@2025.1.1" style versions do not resolve; 2025.1.1 is v0.6.1.)
STATICCHECK_VERSION ?= v0.8.2

# With CI=true, integration tests fail instead of skipping when MariaDB is
# missing (integration/testdb.Require).
ifeq ($(CI),true)
export CI
endif

.PHONY: all help build run test bench lint fuzz clean

all: build

help:
	@echo "make build   build $(BIN) (VERSION=$(VERSION) COMMIT=$(COMMIT))"
	@echo "make image   the container image $(IMAGE) (Containerfile; podman, or CONTAINER_ENGINE=docker)"
	@echo "make image-test  run the image against a throwaway MariaDB: a sandbox, a diff and a promote"
	@echo "make run     build, then scripts/run.sh (throwaway MariaDB + proxy on 127.0.0.1:3307)"
	@echo "make test    go vet + go test -race (CI=true: integration tests must not skip)"
	@echo "make screenshots  the web console's screenshots in docs/screenshots/ (needs chromium)"
	@echo "make bench   Go benchmarks, then go run ./integration/bench \$$BENCH_ARGS"
	@echo "make lint    go vet + staticcheck $(STATICCHECK_VERSION)"
	@echo "make fuzz    run every Fuzz* target for FUZZTIME=$(FUZZTIME)"
	@echo "make clean   remove bin/, stop the throwaway MariaDB and delete .sqlfork/"

# A static binary (no cgo): the same one runs on any Linux and, built by
# `make image`, in the container image.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/sqlfork-proxy

# The container image: the Containerfile copies `make build`'s binary, built
# into bin/image/ with -s -w (no symbol table or DWARF: 26 MB, not 34; panics
# still name functions and lines), and the host's CA bundle into an empty
# image (scripts/image.sh). podman by default, installed with apt-get when
# neither it nor docker is; scripts/container.sh has the settings it needs.
# image-test runs it against a throwaway MariaDB (scripts/image-test.sh).
IMAGE            ?= sqlfork-proxy:dev
CONTAINER_ENGINE ?=
IMAGE_DIR        := bin/image

.PHONY: image image-test

image:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS) -s -w" -o $(IMAGE_DIR)/sqlfork-proxy ./cmd/sqlfork-proxy
	IMAGE='$(IMAGE)' VERSION='$(VERSION)' COMMIT='$(COMMIT)' CONTAINER_ENGINE='$(CONTAINER_ENGINE)' \
		bash scripts/image.sh $(IMAGE_DIR)

image-test: image
	IMAGE='$(IMAGE)' CONTAINER_ENGINE='$(CONTAINER_ENGINE)' bash scripts/image-test.sh

run: build
	bash scripts/run.sh $(RUN_ARGS)

test:
	$(GO) vet ./...
	GO=$(GO) bash scripts/test.sh $(TEST_TIMEOUT)

# The web console's screenshots the README shows (docs/screenshots/*.png,
# 1280x800): its browser test, in chromium against a throwaway MariaDB,
# writes them.
.PHONY: screenshots
screenshots:
	SQLFORK_SCREENSHOTS=$(CURDIR)/docs/screenshots $(GO) test -count=1 -run '^TestConsoleBrowser$$' ./integration/

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
	@if [ -d integration/bench ]; then \
		echo "$(GO) run ./integration/bench $(BENCH_ARGS)"; \
		$(GO) run ./integration/bench $(BENCH_ARGS); \
	else \
		echo "integration/bench does not exist yet; skipping the end-to-end benchmark"; \
	fi

lint:
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

# `go test -list` prints a package's matching test names followed by
# "ok <package> <time>"; turn that into "<package> <Fuzz...>..." lines.
fuzz:
	@set -euo pipefail; \
	targets="$$($(GO) test -list '^Fuzz' ./... | awk '/^Fuzz/ { names = names " " $$1; next } /^ok / { if (names != "") print $$2 names; names = "" }')"; \
	if [ -z "$$targets" ]; then echo "no fuzz targets found"; exit 0; fi; \
	while read -r pkg names; do \
		for name in $$names; do \
			echo "==> $$pkg $$name (fuzztime $(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) "$$pkg"; \
		done; \
	done <<< "$$targets"

clean:
	bash scripts/stop-mariadb.sh
	rm -rf bin
