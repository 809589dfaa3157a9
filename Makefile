# Quarry: the two set-up commands are `make run` and `make test`.
SHELL := /bin/bash
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
ADDR ?= 127.0.0.1:8765
DATA ?=
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
export CGO_ENABLED := 1

.PHONY: all setup setup-test build run test vet lint unit fuzz fuzz-short fuzz-ingest asan bench bench-peers bench-h2o bench-h2o-join bench-tpch clean soak build-nocgo release-check release-snapshot release-ci

all: build

setup:
	@./scripts/setup.sh

build: setup
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/quarry ./cmd/quarry
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/quarry-bench ./cmd/quarry-bench

# The cgo-free build (no libhdf5, no C compiler; no HDF5, no SQL): what
# `CGO_ENABLED=0 go install github.com/quarrydb/quarry/cmd/quarry@latest` gives.
build-nocgo:
	CGO_ENABLED=0 $(GO) build -tags nohdf5 -ldflags "$(LDFLAGS)" -o bin/quarry-nocgo ./cmd/quarry

# Release archives with goreleaser, run as a Go module pinned (with its
# go.sum) in tools/goreleaser, so the main go.mod does not carry its
# dependencies (.goreleaser.yaml). release-snapshot writes dist/
# (linux/darwin/windows x amd64/arm64 cgo-free archives and the linux/amd64
# HDF5 one) and runs the host's archives; release-ci is the cut `make test`
# runs last: check, then the host's cgo-free archive built and run (its
# packages are compiled with the same flags by vet's CGO_ENABLED=0 -trimpath
# pass, and e2e TestNoCgoBuild links them; the first run on a machine also
# builds goreleaser, several minutes, then cached).
GORELEASER := $(GO) run -modfile=tools/goreleaser/go.mod github.com/goreleaser/goreleaser/v2
release-check:
	$(GORELEASER) check
# --timeout 2h: goreleaser's default (1h) ran out on a cold cache at load
# 25 on 2 cores (seven targets); it takes about 7 minutes warm.
release-snapshot: setup
	$(GORELEASER) release --snapshot --clean --timeout 2h
	./scripts/check-release.sh dist
release-ci:
	./scripts/release-ci.sh

# Serve the bundled demo data (or DATA=/path) over Streamable HTTP.
run: build
	./bin/quarry serve --transport http --addr $(ADDR) $(if $(DATA),--data $(DATA),)

# The cgo-free variant too: -tags nohdf5 over every package, and the
# CGO_ENABLED=0 build of cmd/quarry (e2e TestNoCgoBuild serves it). That one
# is vetted with -trimpath, the flags e2e TestNoCgoBuild and release-ci build
# it with (.goreleaser.yaml), so its ~740 packages are compiled once in make
# test, here, instead of once here and once more inside the e2e package.
vet: setup
	$(GO) vet ./...
	$(GO) vet -tags nohdf5 ./...
	CGO_ENABLED=0 $(GO) vet -trimpath -tags nohdf5 ./cmd/quarry

lint: setup
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) run $(STATICCHECK) ./...

# Every test, with the race detector. End-to-end tests build bin/quarry themselves.
# -ldflags=-w: the test binaries are linked without DWARF (a faster link; stack
# traces and race reports do not need it).
unit: build
	$(GO) test -race -count=1 -ldflags=-w -timeout 20m ./...

# make test runs its steps one at a time through scripts/steps.sh, which
# prints each step's wall and CPU seconds as it ends and all of them at the
# end (docs/RELIABILITY.md, "Make test's time").
TEST_STEPS := setup-test vet lint unit fuzz-short release-ci
test:
	@MAKE="$(MAKE)" ./scripts/steps.sh $(TEST_STEPS)

# make test also needs Node.js (interop, DuckDB oracle) and chromium (console).
setup-test:
	@QUARRY_NEED_NODE=1 QUARRY_NEED_BROWSER=1 QUARRY_NEED_REDIS=1 ./scripts/setup.sh

# Fuzzing over every parser (FUZZTIME per target; FUZZPKGS narrows it, e.g.
# FUZZPKGS=./mcpapi), one instrumented build per package (scripts/fuzz.sh).
# fuzz-short is make test's short pass (FUZZTIME_SHORT each, coverage guidance
# on the fuzzed package only, so its build reuses vet's and build's cache;
# nproc targets at a time, one worker each). A crasher is saved
# under the package's testdata/fuzz/FuzzX/: fix it and commit the file. See
# docs/RELIABILITY.md.
FUZZTIME ?= 20s
FUZZTIME_SHORT ?= 2s
FUZZPKGS ?= ./...
fuzz: setup
	FUZZTIME=$(FUZZTIME) FUZZPKGS="$(FUZZPKGS)" GO=$(GO) ./scripts/fuzz.sh
fuzz-short: setup
	FUZZTIME=$(FUZZTIME_SHORT) FUZZINSTRUMENT=package FUZZJOBS=$$(nproc) FUZZPKGS="$(FUZZPKGS)" GO=$(GO) ./scripts/fuzz.sh

# Soak: SOAK_CLIENTS mcp-go clients over Streamable HTTP run a mixed workload
# (catalog, schema, estimates, handle paging, Parquet artifacts read back,
# distinct values, aggregates, CSV artifacts, HDF5 slices, a 3M-row file, a
# file replaced under load) for SOAK_CALLS calls each (or SOAK_DURATION if
# SOAK_CALLS is empty) against a server in the test process, checking every
# answer and that goroutines, open files, the live heap and RSS return to the
# post-warm-up baseline; then TestSoakBigQueries: 8 parallel 10M-group
# queries against bin/quarry under --server-memory 512MiB, peak RSS checked.
# Not part of `make test` (build tag soak). See docs/RELIABILITY.md.
SOAK_DURATION ?= 5m
SOAK_CLIENTS ?= 64
SOAK_CALLS ?= 1000
soak: setup
	QUARRY_SOAK_DURATION=$(SOAK_DURATION) QUARRY_SOAK_CLIENTS=$(SOAK_CLIENTS) QUARRY_SOAK_CALLS=$(SOAK_CALLS) $(GO) test -tags soak -count=1 -timeout 0 -run '^TestSoak$$' -v ./internal/app
	$(GO) test -tags soak -count=1 -timeout 0 -run '^TestSoakBigQueries$$' -v ./e2e

# CSV type inference against DuckDB's sniffer on 100,000 generated CSV files
# (the default test run does 2,000); INGEST_SEED picks another set.
INGEST_CSVS ?= 100000
INGEST_SEED ?= 1
fuzz-ingest: setup
	QUARRY_INGEST_CSVS=$(INGEST_CSVS) QUARRY_INGEST_SEED=$(INGEST_SEED) $(GO) test -count=1 -timeout 3h -run '^TestIngestAgainstDuckDB$$' -v ./e2e

# AddressSanitizer and UndefinedBehaviorSanitizer over the cgo boundary: the
# internal/h5 (and h5write) and catalog/hdf5 tests (FuzzChunkDecode's corpus included)
# built with `go test -asan` (gcc's libasan) and the shim compiled with
# -fsanitize=undefined, stopping at the first finding. libhdf5 and zlib are
# not instrumented, but their heap accesses through the intercepted
# malloc/memcpy are checked. It takes several minutes (most of it building
# every dependency instrumented), so it is not part of `make test`.
ASAN_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=undefined -fno-sanitize-recover=undefined
asan: setup
	CGO_CFLAGS="$(ASAN_CFLAGS)" CGO_LDFLAGS="-fsanitize=undefined" \
	  $(GO) test -asan -count=1 -timeout 30m ./internal/h5/... ./catalog/hdf5

# Micro-benchmarks: every package's, then CSV parsing MB/s and cache scans on
# 1 and 2 cores (GOMAXPROCS set per process: go test -cpu does not give the
# same results). QUARRY_BENCH_CSV=/path/to/sales.csv measures that file
# instead of a generated 95 MB one. See docs/BENCHMARKS.md.
# HDF5 slice benchmarks read the peer harness's sales.h5 (make bench-peers
# generates it) when it exists: QUARRY_BENCH_H5 overrides the path.
QUARRY_BENCH_H5 ?= $(firstword $(wildcard /tmp/peerbench/data/n5000000_s*/sales.h5))
bench: build
	QUARRY_BENCH_H5=$(QUARRY_BENCH_H5) $(GO) test -run '^$$' -bench . -benchmem $$($(GO) list ./... | grep -v -e '/catalog/csv$$' -e '/internal/colcache$$')
	@if [ -n "$(QUARRY_BENCH_H5)" ]; then echo "== h5py on $(QUARRY_BENCH_H5)"; /usr/bin/python3 bench/h5py_roundtrip.py $(QUARRY_BENCH_H5) 40; fi
	@for p in 1 2; do echo "== GOMAXPROCS=$$p"; \
	  GOMAXPROCS=$$p $(GO) test -run '^$$' -bench . -benchmem ./catalog/csv ./internal/colcache || exit 1; done
	$(GO) test -tags soak -count=1 -timeout 0 -run '^TestSoakJoinSpill$$' -v ./e2e

# Quarry side by side with DuckDB, Polars and h5py (../shared/bench; the first
# run installs npm packages and generates ~1.3 GB under /tmp/peerbench).
PEERBENCH ?= ../shared/bench
N ?= 5000000
REPS ?= 5
# Afterwards bench/check_peers.py compares the run with the committed one
# (taken from git before the run overwrites it): it fails when ours/DuckDB's
# cold or warm geomean over Q1-Q8 is more than 5 % above it, or an answer
# differs (docs/BENCHMARKS.md, "Regression check").
PEERS_BASELINE := /tmp/quarry-peers-baseline-n$(N).jsonl
bench-peers: build
	git show HEAD:bench/results/n$(N)/runs.jsonl > $(PEERS_BASELINE)
	N=$(N) REPS=$(REPS) OURS_CMD="$(CURDIR)/bin/quarry-bench" OURS_MODES=cold,warm \
	  PEERS=duckdb,polars,h5py,ours RESULTS=$(CURDIR)/bench/results/n$(N) \
	  $(PEERBENCH)/run.sh --ratio-to ours-warm
	/usr/bin/python3 bench/check_peers.py $(PEERS_BASELINE) bench/results/n$(N)

# H2O / DuckDB Labs db-benchmark groupby (bench/h2o/README.md): Quarry and DuckDB
# warm, side by side, with ratios. H2O_N=1000000 for a quick run; the data
# (G1_<N>_1e2 CSV, 0.5 GB at 10M rows) goes to /tmp/peerbench/h2o.
H2O_N ?= 10000000
H2O_REPS ?= 3
bench-h2o: build
	$(PEERBENCH)/setup.sh
	PEERBENCH=$(PEERBENCH) /usr/bin/python3 bench/h2o/h2o.py --n $(H2O_N) --reps $(H2O_REPS) \
	  --peerbench $(PEERBENCH) --ours-cmd "$(CURDIR)/bin/quarry-bench" --results $(CURDIR)/bench/results/h2o_n$(H2O_N)

# H2O db-benchmark join questions (bench/h2o/README.md): x (H2O_N rows) joined with
# small, medium and big (J1 tables of bench/h2o/joingen, in /tmp/peerbench/h2o/J1_<N>),
# through bench/tpch's runner (advanced_query's path for Quarry).
H2O_JOIN_DATA = /tmp/peerbench/h2o/J1_$(H2O_N)_s42
bench-h2o-join: build
	$(PEERBENCH)/setup.sh
	test -f $(H2O_JOIN_DATA)/x.csv || go run ./bench/h2o/joingen -n $(H2O_N) -seed 42 -dir $(H2O_JOIN_DATA)
	PEERBENCH=$(PEERBENCH) /usr/bin/python3 bench/tpch/tpch.py --data $(H2O_JOIN_DATA) --qdir bench/h2o/join \
	  --tables small,medium,big,x --unordered --title "H2O join J1 N=$(H2O_N)" --reps $(H2O_REPS) \
	  --peerbench $(PEERBENCH) --ours-cmd "$(CURDIR)/bin/quarry-bench --sql-confirm --sql-format parquet --query-timeout 30m" \
	  --results $(CURDIR)/bench/results/h2o_join_n$(H2O_N)

# TPC-H-style queries (bench/tpch/README.md): Quarry through advanced_query's path and
# DuckDB, warm, side by side, with ratios and the answers compared. SF=0.1 for a quick
# run; the data (about 1 GB of CSV at SF 1) goes to /tmp/peerbench/tpch/sf<SF>.
SF ?= 1
TPCH_REPS ?= 3
bench-tpch: build
	$(PEERBENCH)/setup.sh
	PEERBENCH=$(PEERBENCH) /usr/bin/python3 bench/tpch/tpch.py --sf $(SF) --reps $(TPCH_REPS) \
	  --peerbench $(PEERBENCH) --ours-cmd "$(CURDIR)/bin/quarry-bench" --results $(CURDIR)/bench/results/tpch_sf$(SF)

clean:
	rm -rf bin
