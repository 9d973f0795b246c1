// Package memory is PivotDB's byte budget: a hierarchy of monitors and
// accounts through which statements reserve the memory they are about to
// use, so that the server refuses a statement (53200, out of memory)
// instead of growing its heap until the kernel ends the process.
// CockroachDB's mon.BytesMonitor is the model.
//
// # Layers
//
//	Monitor (server-wide pool, --max-memory)
//	  └── Account (one Query, Parse or Bind message and what it runs,
//	        │       --max-query-memory)
//	        └── Account (one statement of a Query string, via Child)
//
// A Monitor holds the server's total and its limit. An Account holds what
// one user of the pool reserved, with a limit of its own; Grow reserves in
// the account, then in each ancestor, then in the Monitor, and fails with
// 53200 without reserving anything when any of them would exceed its
// limit. Close gives everything back. Root accounts take the monitor's
// bytes in chunks (Monitor.ReserveChunk), so the monitor's total may
// exceed the sum of what accounts use by a chunk or two per account. Reservations are estimates of the
// heap a step will hold, made before the step allocates:
//
//   - the server reserves a client message's body before pgproto3 reads it
//     (server/gate.go), and the estimated cost of parsing and planning it
//     from its length before it is parsed (ParseEstimate);
//   - the expression builder reserves IN lists and long constants
//     (sql/expr), the executor the rows that sorts, grouping, DISTINCT,
//     joins and an INSERT's source hold (sql/exec);
//   - the server reserves the rows it encodes for the client
//     (server/rows.go) until they are flushed.
//
// The account of a statement travels in its context.Context (WithAccount,
// FromContext), so layers between the server and the executor need not
// know about it.
//
// # Invariants
//
// Used never exceeds Limit for any account or monitor (a limit of 0 means
// none), and a monitor's Used is the sum of what its open root accounts
// reserved (at least their Used).
// Every Grow is undone by Shrink or Close; Close is idempotent, and
// Grow on a closed account fails (a bug, not a user error). A nil *Account
// accepts everything: code paths without a budget (tests, internal jobs)
// need no special case.
//
// # Returning memory to the operating system
//
// Go's runtime keeps freed heap for reuse, so after a large statement the
// process's RSS stays high although its reservations are gone. When an
// account of at least FreeOSThreshold bytes closes, the monitor schedules
// debug.FreeOSMemory, at most once per FreeOSInterval (release.go).
//
// # Debugging
//
// Monitor.Used and Monitor.Peak are what the server holds now and held at
// most; a 53200 error's detail names the request, the account's use and
// the limit that refused it. A leak (an account never closed) shows as
// Used staying above zero with no statement running.
package memory
