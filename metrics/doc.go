// Package metrics exports PivotDB's figures in Prometheus's text format
// (served at /metrics by package console's HTTP listener) with
// github.com/prometheus/client_golang.
//
// Two kinds of figures:
//
//   - counted as things happen: connections and statements, through the
//     server.Observer that Metrics implements (observer.go);
//   - read when Prometheus scrapes: shards, splits and merges, TTL
//     erasures (sql.Engine.Stats), recovered panics (package panics), the
//     disk guard (storage.Engine.DiskSpace), the memory budget
//     (sql/memory.Monitor) and Pebble's own metrics (collector.go).
//
// Every name starts with pivotdb_. Debugging: curl http://ADDR/metrics.
package metrics
