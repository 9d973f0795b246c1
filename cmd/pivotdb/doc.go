// Command pivotdb is the PivotDB server and its tools:
//
//	pivotdb serve [--data-dir ./data] [--listen 127.0.0.1:5433] [...]
//	pivotdb logictest --addr HOST:PORT FILE...
//	pivotdb node decommission NODE_ID [--host HOST:PORT]
//	pivotdb node status [--host HOST:PORT]
//
// serve opens the data directory (sql.Open), listens with the wire server
// (server.New) and on SIGINT/SIGTERM drains connections, then closes Pebble.
// With --join (cluster.go) serve is a node of a cluster: cluster/shardrepl
// forms or joins it (cluster/node), opens the engine with its commits going
// through a Raft group of three replicas, and node 1 serves SQL while the
// others refuse connections (57P03) naming node 1's address; the Raft host
// stops before the engine closes.
// --dead-node-timeout and the cluster's part of SQL (sys.nodes, ALTER
// CLUSTER DECOMMISSION NODE) are placement.go: cluster/placement's
// Manager adapted to sql.ClusterAdmin. `pivotdb node` connects to the
// serving node's SQL address: decommission runs the statement and prints
// the node's replicas left each second; status prints sys.nodes.
// logictest runs sqllogictest files over the wire (tests/logictest).
package main
