// Package console is PivotDB's HTTP listener (serve --http-listen): the
// Prometheus metrics at /metrics (package metrics), a health check at
// /health for load balancers, and a read-only web console at /.
//
// Layers:
//
//	server.go   the listener, its loopback rule and the routes
//	health.go   /health: 200 while the node serves, 503 while it shuts
//	            down or refuses writes for lack of disk space
//	history.go  a small in-memory time series, sampled every
//	            Config.SampleInterval: shards, splits and merges (from
//	            sql.Engine.Stats) and each shard's read and write counters,
//	            whose differences are the rates the console shows
//	page.go     the console's data: databases, tables and their shards
//	            read through an ordinary session from pg_database and
//	            sys.partitions, as a client would
//	chart.go    the splits-and-merges chart, an SVG drawn on the server
//	assets/     the page template and its style sheet, embedded in the
//	            binary (go:embed): no CDN, no script
//
// Invariants: nothing here writes; the console's session runs as the
// built-in user and only SELECTs. The listener takes loopback addresses
// only (see server.go).
//
// Debugging: curl http://ADDR/health, /metrics, or open / in a browser;
// the test renders the page in headless Chromium (console_test.go).
package console
