// Command pivotdb is the PivotDB server and its tools:
//
//	pivotdb serve [--data-dir ./data] [--listen 127.0.0.1:5433] [...]
//	pivotdb logictest --addr HOST:PORT FILE...
//
// serve opens the data directory (sql.Open), listens with the wire server
// (server.New) and on SIGINT/SIGTERM drains connections, then closes Pebble.
// With --join (cluster.go) serve is a node of a cluster: cluster/shardrepl
// forms or joins it (cluster/node), opens the engine with its commits going
// through a Raft group of three replicas, and node 1 serves SQL while the
// others refuse connections (57P03) naming node 1's address; the Raft host
// stops before the engine closes.
// logictest runs sqllogictest files over the wire (tests/logictest).
package main
