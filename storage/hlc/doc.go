// Package hlc is PivotDB's hybrid logical clock: the source of every MVCC
// timestamp (design §11, §12).
//
// # Why not Pebble sequence numbers
//
// Versions of rows must stay comparable when the shards of a table live in
// different processes (design §12), and a statement must read all of them
// at one timestamp. Sequence numbers are per Pebble instance; wall-clock
// time alone is neither unique nor monotonic. A hybrid logical clock is both
// and stays close to real time, which AS OF SYSTEM TIME '-10s' and the GC
// retention window need.
//
// # Layers
//
//   - Timestamp (timestamp.go): (WallTime ns, Logical), ordered
//     lexicographically; String/ParseTimestamp use CockroachDB's
//     "seconds.nanoseconds,logical" form.
//   - Clock (clock.go): Now hands out unique, increasing timestamps; Update
//     folds in a remote node's timestamp, refusing one more than MaxOffset
//     ahead of the local physical clock (OffsetError).
//   - HighWaterStore (highwater.go): persists a wall time that every
//     timestamp handed out is below. FileStore keeps it in one file replaced
//     atomically.
//
// # Invariants
//
//   - Every Now is after every earlier Now and every accepted Update of the
//     same clock, and — with a Store — of every clock that ran on the same
//     store before (TestClockRestart).
//   - Every timestamp handed out has WallTime < the persisted high-water
//     mark. The mark is set PersistAhead (default 5s) ahead of use: once
//     half of that is used up it is moved in the background, so Now waits
//     for the disk only when that write falls behind (or at the first
//     timestamp after a start). If it cannot be written, Now and Update fail
//     with ErrPersist at the mark rather than risk going backwards after a
//     crash. Close waits for a background write in flight.
//   - The zero Timestamp is never handed out; layers above use it for "none".
//
// # Debugging
//
// Clock.Last shows the newest timestamp without advancing the clock. The
// high-water file is text ("pivotdb-hlc-high-water v1 <ns>"). A clock that
// runs far ahead of real time after a restart means the physical clock was
// set back: it keeps counting from the mark until real time catches up,
// which is correct, and at most PersistAhead plus the setback.
package hlc
