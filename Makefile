# PivotDB. `make run` starts a server on 127.0.0.1:5433 with data in ./data;
# `make test` runs every test (unit, end-to-end over the wire, SQL files).

GO      ?= go
BIN     := bin/pivotdb
DATA    ?= ./data
LISTEN  ?= 127.0.0.1:5433
PKGS    := ./...

.PHONY: all build run cluster test test-short test-cluster deps vet bench bench-go pgo fuzz clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/pivotdb

run: build
	./$(BIN) serve --data-dir $(DATA) --listen $(LISTEN)

# cluster: three nodes on loopback (data in $(DATA)/n1..n3), issue 17 so
# far: the group leader's node serves SQL, the others forward to it,
# commits are replicated to all three (README "Running a cluster"). Ctrl-C
# stops them.
cluster: build
	@J=127.0.0.1:7101,127.0.0.1:7102,127.0.0.1:7103; mkdir -p "$$(dirname $(DATA))"; \
	trap 'kill $$(jobs -p) 2>/dev/null; wait' INT TERM EXIT; \
	for i in 1 2 3; do \
		./$(BIN) serve --data-dir $(DATA)/n$$i --listen 127.0.0.1:544$$i \
			--cluster-listen 127.0.0.1:710$$i --raft-listen 127.0.0.1:720$$i --join $$J \
			> $(DATA)-n$$i.log 2>&1 & \
	done; \
	echo "SQL: 127.0.0.1:5441, :5442, :5443 (any node: the serving one or forwarded to it); logs in $(DATA)-n1..3.log"; \
	wait

# deps installs what the tests need that Go modules do not bring: psql,
# pgbench and the client drivers the driver tests run (.ci/install-deps).
deps:
	bash .ci/install-deps

vet:
	$(GO) vet $(PKGS)

# The race detector runs on every package: most of them have concurrent code
# (sessions, locks, the server) and the suite stays well inside its budget.
test: deps build vet
	PIVOTDB_BIN=$(CURDIR)/$(BIN) $(GO) test -race -timeout 20m $(PKGS)

# test-cluster: the multi-process nemesis of the consensus layer: three node
# processes on loopback, SIGKILL + restart and SIGSTOP/SIGCONT of one node at
# a time for NEMESIS_DURATION, register reads and writes through all three
# checked for linearizability with porcupine (cluster/node/nemesis_test.go).
NEMESIS_DURATION ?= 10m
test-cluster:
	PIVOTDB_NEMESIS_DURATION=$(NEMESIS_DURATION) $(GO) test -race -count=1 -timeout 40m -run '^TestNemesis$$' -v ./cluster/node/

test-short: build
	PIVOTDB_BIN=$(CURDIR)/$(BIN) $(GO) test -short $(PKGS)

# bench: PivotDB and a throw-away PostgreSQL 15 side by side (installed from
# Debian when missing): the same workloads through pgx and pgbench at 1, 4
# and 16 clients; prints the table and writes it to docs/benchmarks.md.
# BENCH_FLAGS passes options through, e.g. BENCH_FLAGS="--reps 1".
BENCH_FLAGS ?=
bench: build
	bash .ci/install-postgres
	$(GO) run ./tests/bench --bin $(CURDIR)/$(BIN) --out docs/benchmarks.md $(BENCH_FLAGS)

# pgo regenerates cmd/pivotdb/default.pgo, the CPU profile that go build
# uses for profile-guided optimisation of the server (inlining and
# devirtualisation of the hot paths; `go build` picks it up by itself for
# the main package, so `make build` and `go build ./cmd/pivotdb` use it,
# and `-pgo=off` builds without). It runs PivotDB alone through the bench
# workloads of issue 23 (tests/bench/pgo.go: point SELECT, UPSERT, range
# scan, IN-list, mixed), profiling each, and merges the profiles. The
# profile is taken from a build without PGO so that it does not feed on
# itself; commit the result after the hot paths change.
pgo:
	$(GO) build -pgo=off -o $(BIN).nopgo ./cmd/pivotdb
	$(GO) run ./tests/bench --bin $(CURDIR)/$(BIN).nopgo --pgo $(CURDIR)/cmd/pivotdb/default.pgo
	rm -f $(BIN).nopgo

bench-go:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

# fuzz runs every fuzz target of the repository (each `func FuzzX` of a
# _test.go file) for FUZZTIME, one after the other: 30 minutes each by
# default, e.g. `make fuzz FUZZTIME=2m` for a quick pass. Crashers it finds
# are written to testdata/fuzz/<Target>/ beside the package: fix them and
# commit them, and they run as regression tests in every `go test`.
FUZZTIME ?= 30m
fuzz:
	@set -e; grep -rl --include='*_test.go' --exclude-dir=node_modules --exclude-dir=.git '^func Fuzz' . | sort | while read -r f; do \
		pkg=./$$(dirname "$${f#./}"); \
		for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$$f"); do \
			echo "== $$t ($$pkg, $(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) "$$pkg"; \
		done; \
	done

clean:
	rm -rf bin
