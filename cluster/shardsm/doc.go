// Package shardsm is the Raft state machine of one shard of the storage
// engine (issue 17, design §12): a replica applies MVCC operations on the
// shard's key span — committed writes, intents, lock records, resolution,
// GC — into the node's one Pebble store, opened with the engine's key
// layout (storage/enginekey), with the applied index and the shard's stats
// counter in the same batch. It replaces cluster/kvsm's generic key-value
// commands for shards; kvsm stays for the node registry (cluster/node),
// whose keys are not in the engine layout.
//
// # Layers
//
//	raft.Host (dragonboat) ── Propose / Read / StaleRead / snapshots
//	  ▼
//	stateMachine ── one replica: Apply (statemachine.go), Lookup
//	  │              (query.go), snapshots (snapshot.go)
//	  ▼
//	storage/mvcc ── PutCommitted, DeleteCommitted, WriteIntent, AcquireLock,
//	  │              ResolveIntent/ResolveSpan, GC, Scanner, Get, ComputeStats
//	  ▼
//	Store ── the node's Pebble (OpenStore, or NewStore over the engine's)
//
// Commands (command.go): Init gives a new group its shard (its first
// command); Batch is a list of MVCC operations applied all or nothing;
// Write (write.go) is the shard's part of a storage engine commit —
// engine-key mutations the engine decided (rows versioned at the commit
// timestamp, system keys, counter merges, range deletions), applied
// verbatim once every key is found to be the shard's (RouteKey: local keys
// 0x03 <kind> route by the row key they address), with the stats counter
// kept by counting the touched keys' change: in local-lock mode (a
// cluster node) one read of their versions before the writes, with the
// writes laid over them in memory (mvcc.VersionStatsDelta: the commit path
// of every replica; one prefix seek per written row key, down to its
// newest version left after the writes, through one iterator per run of
// Writes, applyrun.go) — or none: a Write may carry the change as its
// proposer read it (StatsHint, statshint.go; cluster/shardrepl's
// Replicator adds it), which a replica takes when it knows nothing it
// applied since the hint's base index touched those row keys; else, or for a range deletion or a merge into a
// version, a recount before and after (one pass over them all,
// mvcc.ComputeStatsOfSpans: a bulk load's write touches thousands; GC's
// deletions and bulk loads are Writes too); Split cuts the shard in two; Serve
// (serving.go) makes a node the group's serving node under the next
// epoch, and a Write applies only under the current epoch (else
// FencedError: a node that served before a takeover cannot write); Close
// (closedts.go) raises the group's closed timestamp under the current
// epoch, and a Write at or below it is refused (ClosedError); a Write
// with an ID (command 22, writeonce.go) applies at most once: its record
// (group state kind 0x14, keyed by commit timestamp and id) answers a
// repeat as applied before any other check, and the Close that closes
// its timestamp deletes it (a later copy is refused as closed), so the
// proposer may repeat a Write whose answer it lost; Mark
// changes nothing but the applied index (a split child's founders open at
// applied index 0 and dragonboat stamps a streamed snapshot with the last
// index a command applied at: a snapshot stamped 0 is skipped by a new
// replica, also at 0, which then holds no shard; cluster/shardrepl marks a
// child that applied nothing before a replica is added to it).
// Commits across groups (crossgroup.go; the protocol is in
// cluster/shardrepl's doc.go): Stage keeps a group's part of such a
// commit in the group's own state without applying it (fenced and
// checked like a Write); Decide records the commit's outcome in its
// coordinator group (the first decision stands; COMMITTED carries the
// coordinator's own part, applied with the record; fenced by the epoch);
// Resolve applies or discards a staged part, idempotently; ServeAt gives
// a group the serving epoch the first group handed out. A split is
// refused while the parent holds staged parts, and the child inherits the
// parent's serving epoch. Queries Staged and Decisions list them. Results say applied, stale (the key is not
// the shard's: the answer carries the shard's descriptor for the caller's
// map), rejected (a conflict: DecodeResult returns the mvcc error with the
// holder of the lock) or malformed. Queries: Get and Scan at a timestamp,
// State, Check.
//
// # Where a replica's state lives (keys.go)
//
// The shard's data is addressed by row keys, so it is where the engine
// keeps it anyway: rows (versions and intents) in [Start, End), and the
// same span of the local kinds 0x03 0x01 (lock records), 0x03 0x02
// (transaction records), 0x03 0x03 (GC threshold) — mvcc.ShardSpans. The
// group's own state is addressed by its group id under 0x03 0x04
// (mvcc.LocalReplicaState): applied index, descriptor (span, generation),
// stats counter, a split child's founding members, and the newest commit
// timestamp a Write carried (told to the store's clock, Store.SetClock, so
// that a replica's node never commits below a version it holds), the
// serving epoch and node, the closed timestamp (told to the clock
// too), and the records of Writes applied once. The storage
// engine's schema times (0x03 0x10 <table prefix>) in the shard's span are
// the shard's too. A snapshot is these six spans. The group's own state
// also holds the staged parts (03 04 | group | 07 | commit id) and the
// decision records (03 04 | group | 08 | commit id) of commits across
// groups (crossgroup.go), so they travel with snapshots and count in
// Check's fingerprint.
//
// In local-lock mode (Store.SetLocalLocks, used under the storage engine
// by cluster/shardrepl) the lock records are the locking node's state,
// written outside commands: snapshots skip their span, and the stats
// counter and Check leave them out.
//
// # Invariants
//
//   - Each entry is applied in its own Pebble batch with its index as the
//     applied index (and the stats counter and descriptor when they change),
//     committed with NoSync: the Raft log is the one fsync. Pebble's WAL
//     keeps batches in order, so a crash leaves a prefix of them and Open's
//     index matches the data (TestClusterCrashReplay). One batch per entry
//     because a command is all or nothing and later entries read what
//     earlier ones wrote — except in local-lock mode (a cluster node's
//     commit path), where consecutive Writes of one Apply call share a
//     batch while none touches a key an earlier one of the run wrote
//     (applyrun.go: a Write reads only the versions of its own keys, so its
//     outcome is the one it would have alone); the state keys are written
//     once per run, with the run's last index. TestApplyRunsMatchOneByOne
//     compares a replica fed entry by entry with one fed random slices;
//     BenchmarkApplyWriteRuns measures it. Store.Stats counts the runs.
//   - Apply is deterministic. A malformed command, a key outside the shard,
//     an old generation and every refusal of the mvcc layer (conflicts,
//     invalid requests) are results, the same on every replica; only a
//     store failure (I/O, corruption) returns an error, which stops the
//     node. The mvcc layer's latching rule ("serialize the operations on a
//     key") is the apply loop itself.
//   - The descriptor changes only by applied commands (Init, Split) or with
//     a snapshot, so all replicas agree on it at each index; the stale
//     check against it is therefore deterministic.
//   - Stats: the counter is the sum of the deltas the mvcc operations
//     return; Check recounts (mvcc.ComputeStats) and the tests compare them
//     on every replica. A Write's carried change (statshint.go) is taken
//     only when the replica's record of the Writes since the change's base
//     index shows none touched the versions of the Write's row keys (keys
//     that are not versions, such as the statistics counter every commit
//     merges into, are no part of a change and are left out), so it is
//     the change the replica would read; a replica that cannot tell (restarted, a
//     snapshot, a Batch or a range deletion since, more than 256 Writes
//     ago) reads (TestStatsHint). A Write of more than maxHintedKeys (256)
//     keys, a bulk load's, carries no change and makes the record forget
//     what came before it, which bounds the record's memory and the cost of
//     its check (TestRecentWritesLargeWrites). A split recounts the parent's remaining span (which
//     only the parent owns, so every replica gets the same) and gives the
//     child the rest.
//   - Snapshots stream from a Pebble snapshot taken between two Applies,
//     one key at a time (bounded memory), and install as one ingested
//     sstable holding a range deletion over each of the five spans and the
//     snapshot's keys: atomic and durable (the keys of an ingested table
//     share one sequence number, so its range deletions clear only what was
//     there before). A store paces its snapshot work, streams and installs
//     together, to its snapshot rate (Store.SetSnapshotRate,
//     DefaultSnapshotRate 32 MiB/s; serve --snapshot-rate): unpaced, a
//     64 MB snapshot took a second of CPU on each side that the group's
//     writes needed, and a receiver that fell behind its sender got the
//     snapshot streamed twice. The rate may be elastic (snapshotpace.go,
//     Store.SetSnapshotRateElastic, serve --snapshot-rate-elastic, off by
//     default: a slowed big copy can outlive the leader's log): while
//     the process's scheduling latency is over 1 ms at the 99th
//     percentile (its CPU is short, as CockroachDB's elastic CPU admission
//     judges it) the share of the rate halves every 100 ms, down to an
//     eighth, and grows back by a sixteenth an interval when it is not, so
//     a snapshot yields to the writes and still ends. The staging sstable is written out as it
//     grows (512 KB at a time), not by one fsync at the end.
//   - A split writes no rows: the child's rows are the parent's, in place
//     on each replica. At the split's index the parent's span shrinks to
//     [Start, Key) under the next generation, and the child's descriptor,
//     stats, GC threshold and founding members are written (applied index
//     absent: 0, where a dragonboat group must start). If the child's state
//     is already on the store (it came by snapshot before this replica
//     applied the split), the split leaves it alone. The store's split
//     handler then starts the child replica (SplitEvent).
//   - A replica that did not apply the split (it caught up the parent from
//     a snapshot taken after it) has no child rows, so it must never be
//     sent the child's log from index 1. The child's log is compacted
//     (raft.Host.CompactLog on its replicas) before such a replica starts
//     the child; the leader then sends it a snapshot
//     (TestClusterSplitMissedGetsChildBySnapshot). The node layer must keep
//     that order.
//
// # Not done here
//
//   - The stats change a Write carries is an optional trailer of the Write
//     encoding (statshint.go): a node of an older build answers such a
//     Write malformed, so a cluster must not mix builds across it.
//   - Merge (the reverse of Split, after aligning replica sets): not
//     implemented.
//   - Transaction records have no command (h16i is settling their use in
//     the engine); the span they live in travels with snapshots and
//     splits. A record anchored at a key that is a proper prefix of the
//     shard's end key could sort past the span's bound (records are
//     03 02 <anchor><txn id>): PivotDB's split keys are whole row keys, so
//     this does not arise, but ShardSpans assumes it.
//   - Repeats: intents, locks, resolution and GC are idempotent in the mvcc
//     layer; a one-phase batch repeated after an unknown outcome is
//     answered applied when its first put or delete finds exactly its own
//     version (isReplay). A batch whose keys were written again by someone
//     else in between still answers a write conflict on its repeat: the
//     caller cannot tell that from a lost first attempt without a command
//     id, which commands do not carry yet.
//   - A replica whose parent snapshot shrank its span keeps its stale copy
//     of the child's rows until the child's snapshot replaces it; if the
//     child never comes to this node, the node must DropGroup-style clear
//     that span.
//
// # Debugging
//
// Each snapshot streamed or installed is logged with its keys, bytes and
// timings when the node set a logger (Store.SetSnapshotLogger: "group 2:
// streamed a snapshot of 67436 keys, 65.1 MB, in 1.352s", "group 2:
// installed a snapshot of ...: read and staged in ..., ingested in ...");
// Store.Stats counts their bytes; Store.SetSnapshotTracker is told of
// each stream as it goes (cluster/placement makes it a sys.jobs row).
// Query State for a replica's descriptor, applied index and counter, and
// Check for a recount and a fingerprint of everything the replica owns
// (compare replicas at equal applied indexes). Store.Groups lists the
// groups on a store; Store.Stats counts snapshots saved and installed,
// runs of Writes, and the Writes applied with their carried stats change
// (HintedWrites: near all of a follower's under single-row commits; until
// the statistics counter's merges were left out of the comparison, none
// when several commits were in flight at once).
// mvcc.FormatKey renders the keys (Pebble's tools print them through the
// comparer). The randomized test prints its seed on failure (go test
// -run TestRandomizedAgainstOracle -seed N ./cluster/shardsm/).
package shardsm
