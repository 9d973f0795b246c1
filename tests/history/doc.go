// Package history checks histories of concurrent operations recorded over
// the wire against what an isolation level promises, as Jepsen does.
//
// # List-append (Elle)
//
// A list-append history is made of transactions (Txn) of two kinds of
// micro-operations on integer keys: append v to k, and read k, which
// returns the whole list of k in append order. Every appended value is
// unique per key, so a read names exactly which appends it saw and in
// which order. Over SQL, an append is an INSERT of a row (k, v) and a read
// is SELECT v FROM t WHERE k = $1 ORDER BY the insertion order.
//
// CheckListAppend infers, as Kingsbury and Alvaro's Elle does:
//
//   - each key's version order, from the longest read of it (every other
//     read must be a prefix of it: else "incompatible-order");
//   - write-write (ww) dependencies between the writers of consecutive
//     versions, write-read (wr) from the writer of a read's last element to
//     the reader, and read-write anti-dependencies (rw) from a reader to the
//     writer of the next version it did not see;
//   - real-time (rt) edges from a transaction that completed to every one
//     invoked after that, for strict serializability;
//
// and reports the anomalies it finds (the cycles only as far as the level
// forbids them: a READ COMMITTED check does not look for G-single):
//
//	G1a           a committed transaction read a value written by an aborted one
//	G1b           ... read an intermediate state of another transaction's appends
//	G0            a cycle of ww edges only (dirty write)
//	G1c           a cycle of ww and wr edges (circular information flow)
//	G-single      a cycle with exactly one rw edge (read skew)
//	G2-item       a cycle with rw edges and no G-single (write skew)
//	X-realtime    a cycle of kind X that needs an rt edge
//	internal      a transaction's read missed its own earlier appends
//	duplicate-elements, garbage-read, incompatible-order
//	              corrupt reads: a value twice, a value nobody appended,
//	              two reads that disagree on the order of a key
//
// Which anomalies fail a history depends on the level (Level.Forbids):
// READ COMMITTED forbids G0, G1a, G1b and G1c; REPEATABLE READ, which is
// snapshot isolation in PostgreSQL (and PivotDB), also G-single; SERIALIZABLE
// also G2-item; strict serializability also the realtime cycles. The
// corrupt-read kinds fail every level.
//
// Transactions whose outcome is unknown (a timeout, a lost connection:
// StatusInfo) may or may not have committed: their appends count only when
// a read saw them, and they get no real-time edges out.
//
// # Registers (porcupine)
//
// CheckRegisters checks single-key read / write / compare-and-set
// operations for linearizability with github.com/anishathalye/porcupine,
// partitioned by key. An operation with an unknown outcome may take effect
// at any time after its call, or never (a CAS either way).
//
// # Debugging
//
// A failed check's Result.String lists every anomaly with the transactions
// of its cycle and the edges between them ("T3 -ww(k=1)-> T7"); the wire
// workloads in tests/ log the full history of a failing run. The unit
// tests here build small histories by hand, one per anomaly, and clean ones
// that must pass.
package history
