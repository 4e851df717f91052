# TwoBits: `make run` serves against the built-in Apple sandbox; `make test` runs the whole suite.
SHELL := /bin/bash
SWIFT ?= swift
# Release builds link the Swift runtime statically, as the shipped package does (.ci/package.sh): what
# `make run`, the Python suites and the benchmark run is the binary that ships.
RELEASE := -c release --static-swift-stdlib

.PHONY: deps build release package run test test-suites test-python sanitize fuzz mutate coverage bench bench-tls bench-smoke nemesis clean

deps:
	@.ci/install-deps.sh --test

# Every build names the commit it comes from (`twobits --version`): .ci/build-commit.sh writes it first.
build: deps
	@.ci/build-commit.sh
	$(SWIFT) build

release:
	@.ci/install-deps.sh --run
	@.ci/build-commit.sh
	$(SWIFT) build $(RELEASE)

# The Debian package twobits_<version>_<arch>.deb in .build-package/ (static Swift runtime, stripped, git commit inside).
package:
	@.ci/install-deps.sh --test
	@.ci/package.sh

# Builds release, starts the sandbox and the server with a throw-away key, prints curl commands.
run: release
	@.ci/demo.sh

# Everything runs beside a throw-away PostgreSQL cluster (.ci/postgres.sh), removed at the end whatever happened.
test: deps
	@.ci/build-commit.sh
	$(SWIFT) build --build-tests
	@.ci/postgres.sh run -- $(MAKE) --no-print-directory test-suites

# TWOBITS_REQUIRE_VECTORS=1: the suites that read ../shared/vectors (docs/testing.md) fail instead of skipping without it.
test-suites:
	TWOBITS_REQUIRE_POSTGRES=1 TWOBITS_REQUIRE_VECTORS=1 $(SWIFT) test --skip-build --no-parallel
	TWOBITS_REQUIRE_VECTORS=1 $(MAKE) --no-print-directory test-python

# Python suites drive the real binaries over loopback (independent JWT checks, crash recovery, the benchmark smoke run).
test-python:
	@.ci/build-commit.sh
	$(SWIFT) build $(RELEASE)
	TWOBITS_BIN=$(CURDIR)/.build/release/twobits python3 -m pytest -q Tests/python

# The Swift suite under AddressSanitizer, then ThreadSanitizer (after proving TSan sees a deliberate race).
sanitize: deps
	@.ci/postgres.sh run -- .ci/sanitize.sh

# libFuzzer on every parser of untrusted input, FUZZ_SECONDS (default 60) each (Tests/Fuzz/README.md).
fuzz: deps
	@Tests/Fuzz/run.sh

# Plants each mutant of Tests/mutation/*.json in a copy under /tmp and checks a test kills it (long; not in CI).
# MUTATE_ARGS: e.g. --only core.stale-boundary, --list, --hints-only.
mutate: deps
	nice -n 10 python3 Tests/mutation/mutate.py $(MUTATE_ARGS)

# Line coverage per product module, Swift and Python suites together, beside a throw-away PostgreSQL cluster as
# `make test` (.ci/postgres.sh; .build-cov; report in .build-cov/coverage/). Target: 95 % of lines per module.
coverage: deps
	@.ci/build-commit.sh
	@nice -n 10 Tests/coverage/coverage.sh

# Release build, then the full matrix, each run raced against the Go peer (Benchmarks/README.md), then issue 9's
# ledger comparison (SQLite, PostgreSQL, two replicas); golang-go comes with --bench only, so `make test`
# (bench.py --smoke, no peer) never needs Go. BENCH_ARGS: more options for the matrix, e.g.
# BENCH_ARGS="--apple-link tls-h2" runs every scenario against the TLS fake Apple (as root: nginx, a mount namespace).
bench:
	@.ci/install-deps.sh --bench
	$(SWIFT) build $(RELEASE)
	python3 Benchmarks/bench.py $(BENCH_ARGS)
	python3 Benchmarks/bench.py --compare-ledgers
	TWOBITS_BIN=$(CURDIR)/.build/release/twobits python3 Benchmarks/request_proofs.py --concurrency 64 --proofs 40

# The races over each link to Apple (Benchmarks/README.md, "Over TLS"): fallback and claim at 0 and 50 ms, c=256,
# against the Go peer, BENCH_LINK_REPEAT races each, for each of BENCH_LINKS; Benchmarks/results/link-LINK.json and .md.
BENCH_LINKS ?= tls-h2 tls-h1 plain
BENCH_LINK_REPEAT ?= 5
bench-tls:
	@.ci/install-deps.sh --bench
	$(SWIFT) build $(RELEASE)
	for link in $(BENCH_LINKS); do \
	    python3 Benchmarks/bench.py --apple-link $$link --scenarios fallback,claim --latencies 0,50 --concurrency 256 \
	        --duration 8 --no-es256 --repeat $(BENCH_LINK_REPEAT) --output Benchmarks/results/link-$$link.json || exit 1; \
	done

# The fault campaign (docs/testing.md, "The fault campaign"), as root: three replicas, a PostgreSQL primary and standby
# and the sandbox, each in a network namespace of its own, under a seeded nemesis; the checker decides the history.
NEMESIS_SECONDS ?= 120
NEMESIS_SEED ?= 1
nemesis: release
	python3 Tests/nemesis/campaign.py --seconds $(NEMESIS_SECONDS) --seed $(NEMESIS_SEED) $(NEMESIS_ARGS)

clean:
	rm -rf .build .build-* run
