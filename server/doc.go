// Package server speaks the PostgreSQL wire protocol (version 3.0) so that
// psql, pgx, lib/pq, JDBC and pgbench can talk to PivotDB. It owns the
// sockets, the protocol state machine and the translation between wire
// formats and types.Value; everything SQL happens in a Session of the
// engine, which the server reaches only through the Engine and Session
// interfaces in engine.go (FromSQL adapts *sql.Engine).
//
// # Layers
//
//	listener (server.go)     Serve accepts; one goroutine per connection.
//	  └ conn (conn.go)       the connection's state and command loop.
//	      ├ startup.go       SSLRequest (TLS when Config.TLS is set, else
//	      │                  'N'), GSSENCRequest ('N'), CancelRequest, the
//	      │                  startup packet, MaxConnections, the Session,
//	      │                  ParameterStatus, BackendKeyData, ReadyForQuery.
//	      ├ auth.go          trust, or SCRAM-SHA-256 (xdg-go/scram) against
//	      │                  the verifiers of Config.Passwords, or a
//	      │                  cleartext password checked against the same
//	      │                  verifiers (AuthPassword, auth.CheckPassword);
//	      │                  refusal of plaintext clients under
//	      │                  Config.TLSRequired.
//	      ├ authdelay.go     failed logins answered after a delay that grows
//	      │                  per client address (auth_delay, doubling).
//	      ├ query.go         simple protocol: Query → statements in turn.
//	      ├ extended.go      Parse/Bind/Describe/Execute/Close/Sync/Flush,
//	      │                  prepared statements and portals (a Bind's
//	      │                  text parameters share one string).
//	      ├ copy.go          the copy sub-protocol of COPY FROM STDIN /
//	      │                  TO STDOUT (CopyIn/OutResponse, CopyData,
//	      │                  CopyDone, CopyFail), in either protocol.
//	      └ rows.go          RowDescription and DataRow; the binary formats
//	                         (arrays too) are sql/pgbinary's (binary.go
//	                         adapts them).
//
// The connection's goroutine does everything for its client: it reads a
// message, runs it against the session, writes the answer, and only then
// reads the next one. That is also how PostgreSQL's backends work, and it
// keeps the session single-threaded as its contract requires. Pipelining
// needs nothing more: pgproto3 buffers what the client sent ahead, and
// answers are buffered until Sync, Flush, a simple Query's end, or 64 KiB of
// rows (so a large result streams instead of piling up in memory).
//
// # Ownership
//
// The connection creates its Session after the startup packet and closes it
// when the connection ends, however it ends (Terminate, EOF, protocol error,
// shutdown, panic); Session.Close rolls back an open transaction. Prepared
// statements and portals belong to the connection. A portal holds the
// sql.Result of a statement suspended by a row limit and closes it when the
// portal goes: on Close, when a new unnamed portal replaces it, at a Sync or
// simple Query that leaves the session outside a transaction block (each
// such cycle is an implicit transaction), and when the connection ends.
//
// # What runs
//
// activity.go enters each connection that completes its startup in
// Config.Activity (package activity) with the PID of its BackendKeyData,
// marks it active around each statement (startStatement, which also feeds
// Config.Observer's metrics and the slow-query log) and idle at each
// ReadyForQuery; the session gets the entry (pg_backend_pid,
// pg_stat_activity) and the statement context carries it, so that
// sql/txn can mark a lock wait. pg_cancel_backend calls the entry's Cancel
// (cancelRunning, as a CancelRequest), pg_terminate_backend its Terminate
// (terminate: 57P01, then the connection ends).
//
// clientcheck.go: while a statement runs nothing reads the socket, so a
// watcher peeks at the sockets of busy connections every
// ClientCheckInterval (MSG_PEEK, never consuming a pipelined message) and
// cancels the connection of a client that closed its end.
//
// # Cancellation
//
// Each connection has a context derived from Serve's. Each statement runs
// under a context derived from the connection's, and while it runs its
// cancel function is registered on the connection (conn.running). A portal's
// context lives as long as the portal, because the engine may tie a Result
// to the context it was executed with and a suspended portal is resumed by a
// later Execute. Deriving a context per statement and per Bind, and
// cancelling it after, cost about 3% of a point SELECT's server CPU, so a
// context that was never cancelled is kept when its statement or portal
// ends (conn.spareCtx, giveBackContext: after the portal's Result is
// closed and its cancel function unregistered) and taken by the next
// (takeContext). Two open portals never share one, and a cancelled one is
// never handed out again, so a CancelRequest still cancels only the
// statement it hit (TestContextReuse, TestCancelRequest;
// BenchmarkStatementContext).
//
// A CancelRequest arrives on a new connection. startup.go reads it before
// any pgproto3 state exists, looks the target up by process id, compares
// the secret (4 random bytes from crypto/rand, compared in constant time),
// and calls the target's registered cancel function with errCancelRequest as
// the cause. The engine aborts; errorFor sees the cause and reports 57014
// "canceling statement due to user request". A request that arrives between
// statements finds nothing registered and does nothing, as in PostgreSQL.
// The requester gets no answer either way.
//
// # Shutdown
//
// Shutdown stops accepting, then ends every idle connection (one blocked
// reading its next message) with FATAL 57P01, writing straight to the socket
// from Shutdown's goroutine. A busy connection finishes its message and
// ends itself on its way back to idle (becomeIdle checks the draining flag
// under the same lock that endIfIdle takes, so no connection slips between
// the two). When Shutdown's context ends first, every connection's context
// is cancelled with errShutdown: a running statement fails and its
// connection ends with FATAL 57P01; the sockets of connections still
// running after forceCloseGrace are closed. Cancelling Serve's
// context is that hard stop directly.
//
// # Errors
//
// Errors the client may see are *sqlerr.Error; anything else is reported as
// XX000. An error inside the extended protocol makes the connection discard
// messages until Sync. Errors a client cannot recover from (a message longer
// than Config.MaxMessageSize, a length below 4, an unknown message type, a
// body that does not decode, EOF inside a message) are reported as FATAL
// 08P01 and close that connection only. A panic in a connection is
// recovered (package panics: logged with its stack and counted), reported to
// that client as FATAL XX000, and the connection is closed; the server
// carries on.
//
// Memory per connection is bounded by MaxMessageSize for input: pgproto3
// checks the length prefix before it allocates for the body. Startup packets
// are capped at PostgreSQL's 10,000 bytes.
//
// # Memory budget
//
// Every Query, Parse and Bind message has an account in Config.Memory
// (--max-memory) limited by Config.MaxStatementMemory (memory.go; the
// budget itself is sql/memory). The gate (gate.go) reads message headers
// before pgproto3 does and reserves a large body first; a body the budget
// cannot hold is dropped unread and replaced by an empty message of its
// type, which the connection answers with the reservation's 53200. Before
// parsing, the account grows by memory.ParseEstimate of the text; the
// statement's context carries it to the binder and the executor; sendRow
// reserves large rows until they are flushed. A Query's account closes
// after the Query, a Parse's after the Parse, a Bind's with its portal
// (or as soon as the portal finished), and handled messages forget their
// text (forgetMessage), so an idle connection holds no statement memory.
//
// # Debugging
//
// Config.Logger receives connection-level errors at debug level and
// recovered panics at error level, each with the connection's pid (the
// process id the client saw in BackendKeyData). pgproto3's Backend.Trace can
// be attached in conn.acceptStartupMessage to print the messages received;
// what the server sends does not go through the Backend (see Output), so
// print c.wbuf in flush to see it.
//
// # Output
//
// Messages are encoded into the connection's own buffer (conn.send, and
// sendRow for DataRow) and written with one write call per flush: at
// ReadyForQuery, Flush, the copy sub-protocol's turns, and whenever 64 KiB
// of rows are queued. sendRow appends each value's text or binary form
// straight into the message (types.Value.AppendText, pgbinary.Append) and
// fills in the length prefixes after, so a row costs no allocation.
// CommandComplete and ReadyForQuery, sent for every statement, are
// appended to the buffer directly (sendCommandComplete, readyForQuery),
// and a statement's RowDescription is kept encoded (describeCache) for
// libpq's Describe of every portal, so a prepared point SELECT builds no
// message structs (TestDirectEncodingMatchesPgproto3 checks the bytes).
// The buffer is kept across flushes up to 128 KiB (pgproto3's Backend.Flush
// reallocated its buffer after every flush over 1 KiB, which a result of a
// few hundred rows paid for on every statement).
//
// A plain projection of stored columns (`SELECT k, v FROM t WHERE ...`
// read by a primary-key scan or point lookups) skips the typed values:
// rowSender asks the engine for sql.WireRows, whose fields are appended
// straight from each row's stored key and value (rowenc.WireEncoder;
// sendWireRow writes the DataRow around them). The bytes are those sendRow
// would send (TestWireRowsMatchTyped); a range scan of 1,000 rows costs
// about a third less CPU that way (issue 23's note). The encoder's memory
// is kept per prepared statement (statement.wire; conn.simpleWire for the
// simple protocol) and lent to one portal at a time, so executing a
// prepared point SELECT again sets it up without allocating
// (TestWireRowsReuse covers two open portals, other formats and a schema
// change between executions). BenchmarkWire
// (wire_bench_test.go) measures the bench rows of tests/bench in process
// in CPU time per operation.
package server
