// Package raft is PivotDB's consensus layer: every shard, index shard and
// the metadata become a Raft group replicated on several nodes (design §12).
// It keeps the engine, github.com/lni/dragonboat/v4, behind a small
// interface of PivotDB's own so that the engine can be replaced.
//
// # Layers
//
//	callers (cluster/node, later the shard router)
//	  │  Host: StartReplica, Propose, Read, StaleRead, AddVoter, AddNonVoter,
//	  │        Promote, RemoveReplica, TransferLeadership, Leader, Membership,
//	  │        CompactLog
//	  ▼
//	dragonboatHost ── one dragonboat.NodeHost per node: Raft log store
//	  │                (Pebble v0, fsynced unless HostConfig.NoSync:
//	  │                nosync.go), snapshot streaming, message queues
//	  │                and batching per peer host
//	  │   ├─ tcpTransport (transport.go): the wire under dragonboat's
//	  │   │  transport layer, dragonboat's frame format in one write
//	  │   │  per frame and buffered reads
//	  │   └─ logKeeper (logkeeper.go): takes the snapshots that compact
//	  │      each replica's log, never past a snapshot on its way
//	  ▼
//	onDiskAdapter ── dragonboat's IOnDiskStateMachine over StateMachine
//	  ▼
//	StateMachine ── a replica's state on disk (cluster/shardsm: a shard of
//	                 the storage engine; cluster/kvsm: a key-value span,
//	                 the node registry)
//
// # Lifecycle
//
// Start opens the log store and listens on the Raft address. StartReplica
// starts one replica in one of three ways (ReplicaSpec): bootstrap a new
// group with its initial members, join a group that added it, or restart a
// replica whose data is here (HasReplicaData). Membership changes go through
// any replica of the group (dragonboat forwards them to the leader); the host
// of a new replica then starts it with Join. A removed replica is stopped
// (StopReplica; the engine may have done it) and its data deleted
// (RemoveReplicaData, and the state machine's own). Close stops everything;
// data stays for the next Start.
//
// # Invariants
//
//   - Replica ids are never reused within a group. A node whose data is gone
//     comes back under a new id: the engine panics on a replica that returns
//     without its log (dragonboat #256, #393).
//   - A state machine's Open returns an applied index no older than its data
//     (the index is written in the same atomic batch as the effects;
//     dragonboat #156, #369). Apply does not fsync: the Raft log is the
//     durable copy, one fsync per commit, and the log above Open's index is
//     replayed after a crash. The engine calls Sync before compacting the log.
//   - A replica that joined as a non-voter starts as one every time
//     (ReplicaSpec.NonVoter).
//   - Membership changes are ordered (dragonboat's OrderedConfigChange): each
//     names the membership it was decided on and is refused if another
//     change came first; the host then reads again and retries, and
//     PromoteIf re-checks its condition, so a check and its change are one
//     step. Each attempt waits at most changeAttemptTimeout (3 s): a change
//     a follower forwarded is never answered if the leader drops it (while
//     another change is committed but not applied) or loses it in an
//     election, and asking again under the same config change id cannot
//     apply it twice.
//   - Propose retries only what the engine dropped before replicating it; a
//     timeout is ambiguous (the command may still apply). A proposal a
//     follower forwarded to a leader that then died waits for its deadline,
//     so callers give attempts short deadlines and repeat commands that are
//     safe to repeat (the shard commands will need transaction ids for
//     that). Reads retry freely.
//   - HostConfig.Quiesce picks the groups that may quiesce (dragonboat's
//     Config.Quiesce, "experimental" there): a replica that saw only
//     heartbeats for ten election timeouts (5 s by default) stops
//     heartbeating and leaves its election timer alone until a proposal, a
//     read (ReadIndex) or a message other than a heartbeat wakes it; the
//     leader tells the followers to quiesce with it. A quiet group does not
//     notice that its leader died until something wakes it (the next
//     serving node's reads and proposals do), so only groups whose
//     leader's death something else detects may quiesce (cluster/shardrepl
//     QuiescesGroup: the split children). The engine still ticks a quiet
//     replica every RTT (QuiescedTick), which is most of what a quiet group
//     costs.
//   - A replica's log is compacted by the host's logKeeper, not by
//     dragonboat's automatic snapshots (Config.SnapshotEntries is 0): every
//     HostConfig.SnapshotEntries applied entries it keeps CompactionOverhead
//     entries (and every SnapshotLogBytes of applied commands, 64 MiB,
//     at most half of that: a bulk load's large entries; TestLogCompactedBySize), and never compacts past the index of a snapshot this host
//     streams, nor past what its target acknowledged since, until the
//     target caught up (a hold: it acknowledged entries after the snapshot
//     within CompactionOverhead of the leader's, and had the time to
//     install the snapshot, twice the stream's time and 5 s; logkeeper.go),
//     up to HostConfig.MaxHeldLogBytes of commands applied since the hold
//     began (512 MiB; past it the log is compacted and the target needs
//     another snapshot). Without holds a big snapshot
//     streamed under writes outlived the log after it and was streamed
//     again and again; with holds that ended when the leader sent the
//     target the entries after the snapshot, which it does before the
//     target installed it, a 1 GB snapshot was streamed twice
//     (TestSnapshotStreamKeepsTheLogAfterIt, TestSnapshotInstallKeepsTheLog,
//     TestSnapshotHoldCapped). Holds need this package's transport, which
//     sees the streams' chunks and the replicas' answers; with
//     dragonboat's (tests only) there are none.
//   - A replica whose applied membership lists it as its group's only
//     voter (a one-node cluster's groups, founded or restarted; only with
//     HostConfig.CampaignAlone, which a one-node cluster sets) campaigns
//     at once rather than after its election timeout (campaign.go: a
//     TimeoutNow handed to it through the transport's receive path every
//     RTT until it leads; TestSoleFoundingVoterCampaignsAtOnce). Groups of
//     several voters wait for the timeout as before.
//   - A group starts at log index 0: dragonboat refuses anything else. A split
//     child therefore starts as a new, empty group (design §12), its
//     founding replicas seeded from their copy of the parent; CompactLog
//     drops its log so that a replica without that copy gets a snapshot.
//
// # Memory
//
// dragonboat's default log store config takes up to 8 GiB (16 shards of
// 4×128 MiB memtables). logStoreConfig cuts it to 2 shards of up to 4×4 MiB
// memtables (one each while flushes keep up; four, not two, so that a flush
// does not make dragonboat call the store busy and pause every proposal:
// config.go; smaller on a small disk: HostConfig.LogStoreMemTableBytes,
// whose WAL files take disk space: up to 5 per shard of 110% of a memtable)
// and 1 MiB block caches; MaxInMemLogBytes bounds each replica's
// unapplied log; the send and receive queues are bounded at 64 MiB.
// BenchmarkHostMemory measures three hosts in one process after 200 writes
// per group: 9 MiB of live heap per host with one group, 53 MiB with ten,
// with dragonboat's own transport, which gives every connection 2 MiB
// buffers on each side and opens up to 4 connections per peer host (its
// internal "soft settings", which only a dragonboat-soft-settings.json file
// in the working directory can change): about 33 MiB per host with two peers
// once all are open. PivotDB's transport (transport.go) grows a
// connection's buffers as its frames need (64 KiB at least, kept up to
// 2 MiB and 64 KiB, a snapshot chunk's frame): 4 MiB per host with one
// group, 19 MiB with ten (one run each, load average 14). Each replica adds about 1 MiB (its message and
// proposal queues).
//
// # Transport
//
// transport.go replaces only dragonboat's TCP wire code (raftio.ITransport
// through ExpertConfig.TransportFactory), which wrote every message batch
// in three write calls and read it in three or more: under single-row
// UPSERTs at 16 clients on three nodes its sending and receiving were a
// fifth of the serving node's CPU. Its frames are dragonboat's byte for
// byte, so nodes of either kind talk to each other
// (TestTransportTalksToDragonboats: messages and a streamed snapshot,
// both ways); BenchmarkProposeTransport compares the two. The only
// difference is timing: a snapshot stream's last SendChunk sends the
// poison at once and returns when the receiver acknowledges it, that is
// when the receiver has saved the stream and queued it for its Raft
// (dragonboat tells the leader the snapshot arrived when that SendChunk
// returns; earlier, the leader's next entries could reach the new replica
// before the snapshot did, be refused, and make the leader stream the
// whole snapshot again; TestSnapshotLastChunkWaitsForReceiver). A
// stream's 2 MiB chunks reuse one frame buffer on the sending side and
// one payload buffer and one data buffer on the receiving side, where
// the first version of this transport allocated three 2 MiB buffers a
// chunk; the receiver's handler keeps the stream's first chunk, so that
// one's data is a copy of its own (TestSnapshotChunkStreamReusesBuffers;
// BenchmarkSnapshotChunkStream: 2.0-2.2 ms of CPU a chunk for both sides
// instead of 3.0-4.1 ms, 0.2 MB allocated instead of 6.3 MB; two pairs,
// load average 8).
//
// # Debugging
//
// dragonboat logs through global loggers; SetEngineLogLevel("info") shows
// elections, snapshots and membership changes (the tests honour
// PIVOTDB_RAFT_LOG=info), and the log keeper's holds ("raftlog: group 2:
// holding the log from index ...", "released the log ... : the replica
// acknowledged index ..., caught up"); a hold that reached its cap is a
// warning. A move that streams the same snapshot twice with no cap warning
// is a bug in the holds. A read that hangs on a replica that just caught
// up from a snapshot is a known dragonboat behaviour: the read completes on
// the next apply, so Read bounds each attempt to a second and asks again.
// LocalReplicas shows what runs on a host and who leads each group.
package raft
