package kvsm

import (
	"fmt"
	"path/filepath"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pivotdb/pivotdb/cluster/raft"
)

// Store is a node's Pebble store holding the state of all its replicas, one
// span per group (keys.go). It makes the state machines of raft.Host's
// replicas (NewStateMachine).
type Store struct {
	db      *pebble.DB
	ownsDB  bool
	fs      vfs.FS // db's file system
	staging string // recovered snapshots are built here before ingestion
	// writerOpts writes the staging sstables the way db writes its own.
	writerOpts sstable.WriterOptions

	snapshotsSaved     atomic.Int64
	snapshotsRecovered atomic.Int64
}

// OpenStore opens (creating it if needed) a store in dir: Pebble in
// dir/data, snapshot staging files in dir/staging.
func OpenStore(dir string, opts *pebble.Options) (*Store, error) {
	if opts == nil {
		opts = &pebble.Options{}
	}
	// Recovering a snapshot excises the group's span and ingests the new
	// one in one step (IngestAndExcise), which needs virtual sstables.
	if opts.FormatMajorVersion < pebble.FormatVirtualSSTables {
		opts.FormatMajorVersion = pebble.FormatNewest
	}
	db, err := pebble.Open(filepath.Join(dir, "data"), opts)
	if err != nil {
		return nil, fmt.Errorf("kvsm: open %s: %w", dir, err)
	}
	s, err := NewStore(db, opts, filepath.Join(dir, "staging"))
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	s.ownsDB = true
	return s, nil
}

// NewStore makes a store over an open Pebble instance shared with other
// users, which must leave the area byte 0x03 to it; opts are the options db
// was opened with. db must use a comparer
// that treats the span bounds of keys.go as whole keys (Pebble's default
// does) and a format that supports IngestAndExcise. Staging files go to
// stagingDir, which must be on the same file system as db.
func NewStore(db *pebble.DB, opts *pebble.Options, stagingDir string) (*Store, error) {
	if opts == nil {
		opts = &pebble.Options{}
	}
	o := opts.Clone()
	o.EnsureDefaults()
	if v := db.FormatMajorVersion(); v < pebble.FormatVirtualSSTables {
		return nil, fmt.Errorf("kvsm: store format %d is older than %d (virtual sstables), which snapshot recovery needs", v, pebble.FormatVirtualSSTables)
	}
	// Left-overs of a recovery interrupted by a crash: the recovery is
	// repeated from the engine's snapshot file.
	if err := o.FS.RemoveAll(stagingDir); err != nil {
		return nil, fmt.Errorf("kvsm: clearing %s: %w", stagingDir, err)
	}
	if err := o.FS.MkdirAll(stagingDir, 0o755); err != nil {
		return nil, fmt.Errorf("kvsm: %w", err)
	}
	return &Store{db: db, fs: o.FS, staging: stagingDir, writerOpts: o.MakeWriterOptions(0, db.TableFormat())}, nil
}

// DB returns the Pebble instance.
func (s *Store) DB() *pebble.DB { return s.db }

// Close closes Pebble if OpenStore opened it. Close the raft.Host first:
// its replicas use the store until they stop.
func (s *Store) Close() error {
	if !s.ownsDB {
		return nil
	}
	return s.db.Close()
}

// NewStateMachine is a raft.CreateStateMachine for this store.
func (s *Store) NewStateMachine(g raft.GroupID, r raft.ReplicaID) raft.StateMachine {
	return &stateMachine{store: s, group: g, replica: r, applied: appliedKey(g)}
}

// DropGroup deletes group g's state from the store, durably: for a replica
// removed from its group (after raft.Host.StopReplica).
func (s *Store) DropGroup(g raft.GroupID) error {
	start, end := groupSpan(g)
	return s.db.DeleteRange(start, end, pebble.Sync)
}

// AppliedIndex reads g's applied index as the store holds it.
func (s *Store) AppliedIndex(g raft.GroupID) (uint64, error) {
	return readApplied(s.db, appliedKey(g))
}

// Stats counts snapshot work since the store was opened.
type Stats struct {
	SnapshotsSaved     int64 // streamed to another replica (or exported)
	SnapshotsRecovered int64 // received and installed
}

// Stats returns the store's counters.
func (s *Store) Stats() Stats {
	return Stats{SnapshotsSaved: s.snapshotsSaved.Load(), SnapshotsRecovered: s.snapshotsRecovered.Load()}
}
