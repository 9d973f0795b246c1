// Command pivotdb is the PivotDB server and its tools:
//
//	pivotdb serve [--data-dir ./data] [--listen 127.0.0.1:5433] [...]
//	pivotdb logictest --addr HOST:PORT FILE...
//
// serve opens the data directory (sql.Open), listens with the wire server
// (server.New) and on SIGINT/SIGTERM drains connections, then closes Pebble.
// logictest runs sqllogictest files over the wire (tests/logictest).
package main
