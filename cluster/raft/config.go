package raft

import (
	"errors"
	"fmt"
	"time"

	"github.com/lni/dragonboat/v4/config"
)

// HostConfig configures a Host. The zero value of every tuning field takes
// the default documented beside it.
type HostConfig struct {
	// Dir holds the Raft log store and the engine's snapshot files. It must
	// survive restarts; losing it means the node comes back as a new one.
	Dir string
	// RaftAddress is host:port, where this host listens for Raft traffic and
	// how other hosts name it in memberships. It may not change between
	// restarts of the same Dir (the engine checks).
	RaftAddress string

	// RTT is the tick of the Raft clock: a round trip between hosts. 10ms by
	// default (loopback and one data centre).
	RTT time.Duration
	// ElectionTicks and HeartbeatTicks count RTTs: 50 and 2 by default, so
	// a leader that stops is replaced after about 0.5-1s. With 20 ticks
	// (200ms), a leader whose Raft goroutines waited 150-200ms for a CPU
	// (a 1M-row COPY on three nodes of a loaded 2-core machine: "had 15
	// LocalTick msgs in one batch") lost its leadership, and the COPY with
	// it; etcd's default is 1s, CockroachDB's about 2s.
	ElectionTicks  uint64
	HeartbeatTicks uint64
	// SnapshotEntries: every this many applied entries a replica records a
	// snapshot point and compacts its log below it, keeping
	// CompactionOverhead entries for followers that lag a little. 10000 and
	// 5000 by default. A replica further behind than the kept log catches up
	// from a streamed snapshot. The log is never compacted past a snapshot
	// this host is streaming, nor past what its target acknowledged since,
	// until the target caught up (logkeeper.go), up to MaxHeldLogBytes.
	SnapshotEntries    uint64
	CompactionOverhead uint64
	// MaxHeldLogBytes caps the log kept for one snapshot on its way: once
	// the commands applied since the snapshot's index reach it, the log is
	// compacted as if the snapshot were not on its way, and its target
	// will need another one. 512 MiB by default.
	MaxHeldLogBytes uint64
	// SnapshotLogBytes bounds a replica's log by size as SnapshotEntries
	// does by count: once the commands applied since the keeper's last
	// snapshot reach it, the keeper takes one, keeping at most half of it
	// (in entries of the average size since) behind the applied index, or
	// CompactionOverhead entries if that is fewer. 64 MiB by default. A
	// bulk load's entries are large: counted in entries alone, its log
	// grew to gigabytes on disk before a snapshot, and a restart read all
	// of it back to apply (logkeeper.go).
	SnapshotLogBytes uint64
	// MaxInMemLogBytes bounds the not-yet-applied log a replica keeps in
	// memory; proposals past it are refused as busy and retried. 64 MiB by
	// default.
	MaxInMemLogBytes uint64
	// LogStoreMemTableBytes is the size of each memtable of the Raft log
	// store (logStoreConfig), 4 MiB by default. Each memtable's WAL is
	// preallocated at 110% of it and the store keeps up to three used WAL
	// files per shard for reuse, so a small disk needs smaller ones
	// (LogStoreMemTableBytesFor).
	LogStoreMemTableBytes uint64
	// CampaignAlone makes a replica that is its group's only voter campaign
	// at once instead of after its election timeout (campaign.go). Set for
	// a one-node cluster (`serve` without --join), whose groups have one
	// voter each and whose start waited for two election timeouts in turn.
	// Off elsewhere: with it, TestClusterSnapshotJob's three founders
	// streamed a split child's whole shard to a founder (the child's
	// leader elected before the other founders' replicas were seeded),
	// 2 runs of 3; not looked into further.
	CampaignAlone bool
	// DeploymentID tags this host's Raft messages; hosts with different ids
	// drop each other's. PivotDB derives it from the cluster id. It may not
	// change across restarts of Dir. 0: dragonboat's shared default.
	DeploymentID uint64
	// NoSync leaves out every fsync of the Raft log store and of the
	// snapshot files (nosync.go): a commit is acknowledged once a quorum
	// wrote it to the operating system, so a machine that stops may lose
	// it, and the log may forget entries and votes Raft relies on. For
	// tests and benchmarks only (`pivotdb serve --unsafe-no-sync`).
	NoSync bool
	// Quiesce, when set, picks the groups whose replicas may quiesce
	// (dragonboat's Config.Quiesce): a replica that saw nothing but
	// heartbeats for ten election timeouts stops ticking and heartbeating
	// until a proposal, read or message wakes it. Every replica of a group
	// must decide alike (a replica that does not quiesce would campaign
	// against a quiet leader), so it goes by group id. A quiet group
	// notices a dead leader only once something wakes it. Nil: none.
	Quiesce func(GroupID) bool
	// TLS, when set, makes Raft traffic mutual TLS: hosts present CertFile
	// and accept peers whose certificates CAFile signed. Nil: plain TCP.
	TLS *TLSFiles
}

// TLSFiles names the PEM files of a node's mutual TLS.
type TLSFiles struct {
	CAFile, CertFile, KeyFile string
}

func (t *TLSFiles) validate() error {
	if t.CAFile == "" || t.CertFile == "" || t.KeyFile == "" {
		return errors.New("raft: TLS needs a CA file, a certificate file and a key file")
	}
	return nil
}

const (
	defaultRTT                = 10 * time.Millisecond
	defaultElectionTicks      = 50
	defaultHeartbeatTicks     = 2
	defaultSnapshotEntries    = 10000
	defaultCompactionOverhead = 5000
	defaultMaxInMemLogBytes   = 64 << 20
	defaultMaxHeldLogBytes    = 512 << 20
	defaultSnapshotLogBytes   = 64 << 20

	defaultLogStoreMemTableBytes = 4 << 20
	minLogStoreMemTableBytes     = 1 << 20
)

func (c HostConfig) withDefaults() (HostConfig, error) {
	if c.Dir == "" {
		return c, errors.New("raft: HostConfig.Dir is empty")
	}
	if c.RaftAddress == "" {
		return c, errors.New("raft: HostConfig.RaftAddress is empty")
	}
	if c.RTT == 0 {
		c.RTT = defaultRTT
	}
	if c.RTT < time.Millisecond {
		return c, errors.New("raft: HostConfig.RTT is below 1ms")
	}
	if c.ElectionTicks == 0 {
		c.ElectionTicks = defaultElectionTicks
	}
	if c.HeartbeatTicks == 0 {
		c.HeartbeatTicks = defaultHeartbeatTicks
	}
	if c.ElectionTicks <= 2*c.HeartbeatTicks {
		return c, errors.New("raft: ElectionTicks must exceed twice HeartbeatTicks")
	}
	if c.SnapshotEntries == 0 {
		c.SnapshotEntries = defaultSnapshotEntries
	}
	if c.CompactionOverhead == 0 {
		c.CompactionOverhead = defaultCompactionOverhead
	}
	if c.TLS != nil {
		if err := c.TLS.validate(); err != nil {
			return c, err
		}
	}
	if c.MaxInMemLogBytes == 0 {
		c.MaxInMemLogBytes = defaultMaxInMemLogBytes
	}
	if c.MaxHeldLogBytes == 0 {
		c.MaxHeldLogBytes = defaultMaxHeldLogBytes
	}
	if c.SnapshotLogBytes == 0 {
		c.SnapshotLogBytes = defaultSnapshotLogBytes
	}
	if c.LogStoreMemTableBytes == 0 {
		c.LogStoreMemTableBytes = defaultLogStoreMemTableBytes
	}
	if c.LogStoreMemTableBytes < minLogStoreMemTableBytes {
		return c, fmt.Errorf("raft: HostConfig.LogStoreMemTableBytes %d is below %d", c.LogStoreMemTableBytes, minLogStoreMemTableBytes)
	}
	return c, nil
}

// logStoreConfig is the Raft log store's configuration: dragonboat's default
// (GetDefaultLogDBConfig) gives its log store 16 Pebble shards of 4×128 MiB
// memtables, up to 8 GiB, and even its "tiny" preset allows 256 MiB. PivotDB
// runs many groups on one log store and keeps the data in its own engine, so
// the log store gets 2 Pebble shards, each with up to 4×4 MiB memtables and
// a 1 MiB block cache: at most 32 MiB of memtables
// (config.LogDBConfig.MemorySizeMB), of which a shard holds one (4 MiB) but
// while a flush lags, and 2 MiB of cache. Log writes are small and fsynced
// per batch; bigger memtables only delay flushes.
//
// Four memtables, not two: dragonboat pauses every proposal of the groups
// on a log store shard while that shard is "busy", which it decides at each
// memtable switch, flush end and compaction end as "the memtables' arenas,
// and batches too big for a memtable (over half of one: a bulk load's
// Raft entries), reach 95% of KVWriteBufferSize × KVMaxWriteBufferNumber"
// (its pebble kv_pebble.go). With two memtables, the one being flushed and
// the new one make the whole budget at every switch, so every 4 MiB of log
// writes paused the groups' proposals until the flush ended ("new LogDB busy
// state is true" per replica, ErrSystemBusy to the proposer). And the state
// is set by goroutines that race (a switch's notice computed before a flush
// ended can land after the flush's), so a "busy" could stick until the
// shard's next switch, which the paused groups no longer bring: the likely
// cause of FirstGroup refusing every proposal as busy for over 10 s during
// a COPY with groups off. With four, busy means three full memtables wait
// for a flush: real back-pressure, which the proposer waits out
// (retryDropped) up to its deadline. Measured (three nodes, load 10-14):
// TestClusterCopy of 400k rows with groups off, busy transitions in the
// three nodes' logs: 22 and 27 with 2×4 MiB, 9 and 11 with 4×2 MiB (the
// COPY's batches over 1 MiB count whole), 0 and 0 with 4×4 MiB;
// BenchmarkBulkProposals. TestLogStoreFlushIsNotBusy holds the rule.
//
// Shards may not change once a directory has been written; the memtable
// size (HostConfig.LogStoreMemTableBytes) may.
//
// On disk the store takes, besides its sstables, up to five WAL files of
// 110% of a memtable per shard (the live one and those its Pebble keeps for
// reuse: MemTableStopWritesThreshold+1, the four memtables): 44 MiB with
// 4 MiB memtables.
// On a 64 MB filesystem that was most of the room (TestDiskFull with
// PIVOTDB_TEST_ONE_NODE_CLUSTER=1 refused the test's first 10 MB), hence
// LogStoreMemTableBytesFor.
func logStoreConfig(memTableBytes uint64) config.LogDBConfig {
	c := config.GetTinyMemLogDBConfig()
	c.Shards = 2
	c.KVWriteBufferSize = memTableBytes
	c.KVMaxWriteBufferNumber = 4
	c.KVTargetFileSizeBase = 4 << 20
	c.KVMaxBytesForLevelBase = 64 << 20
	c.KVLRUCacheSize = 1 << 20
	c.SaveBufferSize = 32 << 10
	c.MaxSaveBufferSize = 4 << 20
	return c
}

// engineConfig sizes dragonboat's worker pools (goroutines, not memory):
// its default is 16 to 48 workers per stage. ExecShards may not change once
// a directory has been written.
func engineConfig() config.EngineConfig {
	return config.EngineConfig{
		ExecShards:     8,
		CommitShards:   8,
		ApplyShards:    8,
		SnapshotShards: 8,
		CloseShards:    4,
	}
}

// LogStoreMemTableBytesFor is HostConfig.LogStoreMemTableBytes for a log
// store on a filesystem of totalBytes (0: unknown): 1/128 of the disk, at
// least 1 MiB and at most the 4 MiB default, so that the store's WAL files
// (see logStoreConfig: ten of 110% of a memtable) take at most about a
// twelfth of a small disk, as
// storage's defaultMemTableSize does for the engine.
func LogStoreMemTableBytesFor(totalBytes uint64) uint64 {
	if totalBytes == 0 {
		return defaultLogStoreMemTableBytes
	}
	return min(defaultLogStoreMemTableBytes, max(totalBytes/128, minLogStoreMemTableBytes))
}
