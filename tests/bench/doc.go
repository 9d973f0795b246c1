// Command bench measures PivotDB side by side with PostgreSQL 15 on the same
// machine, with the same clients, in the same run (`make bench`).
//
// It starts a throw-away PostgreSQL (initdb in a temporary directory,
// loopback, default durability) and a throw-away PivotDB (default
// durability: synced commits), loads the same rows into both and runs each
// workload — point SELECT by key, single-row UPSERT, a 1,000-row range scan,
// an IN-list of 100 keys on a hash-sharded table, a mixed 80/20 read/write
// load, a bulk load with multi-row INSERTs — at several client counts, once
// through a Go pgx harness and once through pgbench custom scripts
// (-M prepared), and a COPY FROM STDIN of --copy-rows rows (text format,
// one connection) into an empty table. Each figure is the median of several repetitions that
// alternate which server goes first. Raw synced Pebble commits give the
// physical limit for writes. The table goes to stdout and, with --out, to a
// Markdown file (docs/benchmarks.md).
//
//	go run ./tests/bench --bin bin/pivotdb [--duration 2s] [--reps 3] [--clients 1,4,16] [--out FILE]
//	go run ./tests/bench --bin bin/pivotdb --profile "point SELECT@16"   # CPU profile of PivotDB
//	                                      # (pivotdb.cpu.pprof), with its mutex and block profiles
//	                                      # over the same seconds (pivotdb.mutex.pprof, .block.pprof)
//	go run ./tests/bench --bin bin/pivotdb --profile "correlated EXISTS, 10k x 10k rows@1" --profile-after-workloads
//	                                      # the same, after the workloads the full bench runs before it
//	go run ./tests/bench --bin bin/pivotdb --pgo cmd/pivotdb/default.pgo
//	                                      # PivotDB alone: the merged CPU profile of the workloads of
//	                                      # --pgo-workloads, for profile-guided optimisation (make pgo)
//	go run ./tests/bench --bin bin/pivotdb --copy-only --rows 1000        # only the COPY row
//	go run ./tests/bench --bin bin/pivotdb --only "correlated EXISTS" --clients 1   # only that workload's rows
//	go run ./tests/bench --bin bin/pivotdb --only bulk --rows 1000        # only the bulk load (multi-row INSERT) rows
//	make bench BENCH_FLAGS='--only "correlated EXISTS" --clients 1'
//	go run ./tests/bench --bin bin/pivotdb --growth-only [--growth-rows 10000000]
//	                                      # only the cost-as-data-grows rows (growth.go), PivotDB alone
//	make bench BENCH_FLAGS=--growth       # the full bench and those rows
//	go run ./tests/bench --bin bin/pivotdb --growth-only --only point --pivot-flags "--cache-size 536870912"
//	                                      # extra serve flags for PivotDB, named in the report
//	go run ./tests/bench --bin bin/pivotdb --cluster-only --duration 5s [--cluster-profile DIR]
//	                                      # only the cluster section (cluster.go), with each setup's CPU time
//	                                      # per operation (per node); with --cluster-profile, then a CPU
//	                                      # profile of each node under single-row UPSERTs
//	go run ./tests/bench --bin bin/pivotdb --cluster-only --only UPSERT --reps 1
//	                                      # only the cluster workloads whose name has UPSERT: the
//	                                      # rewrite of a loaded row and the UPSERT of a new row (which
//	                                      # also merges into partition's per-shard statistics counter,
//	                                      # in the row's shard group)
package main
