# PivotDB. `make run` starts a server on 127.0.0.1:5433 with data in ./data;
# `make test` runs every test (unit, end-to-end over the wire, SQL files).

GO      ?= go
BIN     := bin/pivotdb
DATA    ?= ./data
LISTEN  ?= 127.0.0.1:5433
PKGS    := ./...

.PHONY: all build run test test-short deps vet bench bench-go fuzz clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/pivotdb

run: build
	./$(BIN) serve --data-dir $(DATA) --listen $(LISTEN)

# deps installs what the tests need that Go modules do not bring (psql).
deps:
	bash .ci/install-deps

vet:
	$(GO) vet $(PKGS)

# The race detector runs on every package: most of them have concurrent code
# (sessions, locks, the server) and the suite stays well inside its budget.
test: deps build vet
	PIVOTDB_BIN=$(CURDIR)/$(BIN) $(GO) test -race -timeout 20m $(PKGS)

test-short: build
	PIVOTDB_BIN=$(CURDIR)/$(BIN) $(GO) test -short $(PKGS)

# bench: wire-level throughput (point SELECT, single-row UPSERT, range scan)
# at several client counts, plus the Go micro-benchmarks.
bench: build
	PIVOTDB_BIN=$(CURDIR)/$(BIN) $(GO) run ./tests/bench --bin $(CURDIR)/$(BIN)

bench-go:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

# fuzz runs each fuzz target for FUZZTIME (default 30s).
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME) ./sql/parser
	$(GO) test -run '^$$' -fuzz FuzzConn -fuzztime $(FUZZTIME) ./server

clean:
	rm -rf bin
