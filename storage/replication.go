package storage

import (
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// Replication (issue 17, design §12). An engine with a Replicator does not
// apply its commits to Pebble itself: Batch.commit hands the commit's
// writes — engine keys, table rows already versioned at the commit
// timestamp — to the replicator, which cuts them by its shard map, proposes
// each shard's part to that shard's Raft group and returns once the groups
// applied them on this node (cluster/shardrepl). The groups' state machines
// write into this engine's Pebble (PebbleForReplication), without fsync:
// the Raft log's fsync is the commit's one. Reads are unchanged: they read
// the local Pebble, and a commit stays in flight (commitTracker) until
// Replicate returns, so no read at or above its timestamp starts before
// its writes are applied here.
//
// Without a replicator (the default) a commit is one Pebble batch, as it
// always was: the hook is one nil check (Engine.apply).
//
// Writes that do not go through Batch.commit are replicated too, never
// applied to one replica only:
//
//   - GC (gc.go, gcthreshold.go): the serving node decides the threshold
//     and which versions go, as on one node, and proposes the threshold
//     key and then the deletions, in batches, through the replicator
//     (commitGC), so every replica removes the same versions and keeps the
//     same threshold key. The deletions are decided on the serving node's
//     store, which holds every acknowledged commit; later commits only add
//     versions above the threshold, so every replica deletes the same
//     keys whatever commits come between. A replica's engine (Options.
//     Replica) runs its GC loop only while a replicator is set: on the
//     nodes that do not serve, the loop does nothing.
//   - Bulk ingestion (IngestVersioned; replbulk.go): the sorted keys go as
//     bounded replicated writes at the ingestion's commit timestamp, under
//     a pending record that a node taking over uses to roll back a load its
//     predecessor did not finish (RollBackBulkLoads).
//
//   - Intents (intents.go): a transaction block's flushes, their
//     resolution at its commit and their removal go through the
//     replicator as writes without (flush, removal) or with (resolution)
//     the commit timestamp (commitShared); so do the lock table's removals
//     of another transaction's intents and records (LocalBatch.
//     CommitShared).
//
// Lock records (LocalBatch) stay local to the node that holds the locks:
// they are the leader's in-memory state kept in the store, not shard data.

// MutationKind is the kind of one write of a commit.
type MutationKind byte

const (
	// MutationSet sets Key to Value.
	MutationSet MutationKind = iota + 1
	// MutationDelete deletes Key.
	MutationDelete
	// MutationSingleDelete deletes Key, which was set once (a lock record:
	// LocalBatch.SingleDelete).
	MutationSingleDelete
	// MutationDeleteRange deletes every engine key in [Key, Value).
	MutationDeleteRange
	// MutationMerge merges Value into Key with the engine's counter merge
	// operator (counters.go).
	MutationMerge
)

func (k MutationKind) String() string {
	switch k {
	case MutationSet:
		return "set"
	case MutationDelete:
		return "delete"
	case MutationSingleDelete:
		return "single-delete"
	case MutationDeleteRange:
		return "delete-range"
	case MutationMerge:
		return "merge"
	}
	return fmt.Sprintf("mutation(%d)", byte(k))
}

// Mutation is one write of a commit, on engine keys (storage/enginekey):
// a versioned row's key carries its commit timestamp.
type Mutation struct {
	Kind  MutationKind
	Key   []byte
	Value []byte // Set, Merge: the value; DeleteRange: the end key
}

// Replicator takes an engine's commits in place of Pebble (SetReplicator).
type Replicator interface {
	// Replicate makes writes durable on a quorum of replicas of the shards
	// they belong to and applies them to this engine's store, and returns
	// once they are applied here. ts is the commit timestamp of versioned
	// writes (zero for a commit of system keys only). writes and the
	// slices in them are only valid during the call. An error means the
	// commit's outcome is the error's: the caller reports the commit
	// failed.
	Replicate(ts hlc.Timestamp, writes []Mutation) error
}

// ErrOutcomeUnknown is wrapped by a replicator's error when it cannot
// tell whether the commit was applied (a proposal that timed out): it may
// still be. The SQL layer reports 08007 (transaction resolution unknown).
var ErrOutcomeUnknown = errors.New("storage: commit outcome unknown")

// ErrReplicated is the error of an operation a replicated engine does not
// support yet: it would change one replica's data only. The error returned
// is a *ReplicatedError naming the operation.
var ErrReplicated = errors.New("storage: not supported on a replicated engine yet")

// ReplicatedError names the operation ErrReplicated refused.
type ReplicatedError struct {
	Op string // "garbage collection", "bulk ingestion"
}

func (e *ReplicatedError) Error() string {
	return fmt.Sprintf("storage: %s is not supported on a replicated engine yet", e.Op)
}

// Is makes errors.Is(err, ErrReplicated) hold.
func (e *ReplicatedError) Is(target error) bool { return target == ErrReplicated }

// SetReplicator makes every later commit, GC pass and bulk ingestion go
// through r. Set it before the engine's first commit and never change it;
// an engine whose GC loop runs must be a replica's (Options.Replica): the
// loop of any other engine may have deleted versions on this store alone.
func (e *Engine) SetReplicator(r Replicator) error {
	if r == nil {
		return errors.New("storage: nil replicator")
	}
	if e.gc != nil && !e.replica {
		return fmt.Errorf("%w (open the engine with Options.Replica, or GCTTL < 0)", &ReplicatedError{Op: "garbage collection"})
	}
	if e.repl != nil {
		return errors.New("storage: the engine has a replicator already")
	}
	if err := e.holdClosingIfRecords(); err != nil {
		return err
	}
	e.repl = r
	e.replOn.Store(true)
	return nil
}

// gcAllowed reports whether GC may run: always, except on a replica's
// engine (Options.Replica) without a replicator, whose store only its
// replicas write.
func (e *Engine) gcAllowed() bool { return !e.replica || e.replOn.Load() }

// commitGC commits a batch of GC's (a threshold key, version deletions):
// through the replicator when there is one, as a write without a commit
// timestamp, else to Pebble without fsync (losing it in a crash leaves
// garbage for the next pass).
func (e *Engine) commitGC(b *pebble.Batch) error {
	if e.replOn.Load() {
		return e.replicate(b, hlc.Timestamp{})
	}
	return e.commitPebble(b, pebble.NoSync)
}

// Replicated reports whether the engine's commits go through a replicator.
func (e *Engine) Replicated() bool { return e.repl != nil }

// PebbleForReplication returns the engine's Pebble instance, the options it
// was opened with, and the data directory: what a replica's state machine
// store (cluster/shardsm.NewStore) shares the engine's store through. The
// options carry the engine's key layout and counter merge operator, which
// replicated writes need. Nothing else may write through it.
func (e *Engine) PebbleForReplication() (*pebble.DB, *pebble.Options, string) {
	// Writes through it are not counted: point reads stop reusing
	// iterators (pointiter.go).
	e.points.rawWriters.Store(true)
	return e.db, e.popts, e.dir
}

// apply commits a batch of engine keys: to Pebble, or through the
// replicator. It is the one place Batch.commit writes.
func (e *Engine) apply(pb *pebble.Batch, ts hlc.Timestamp, opts *pebble.WriteOptions) error {
	if e.repl != nil {
		return e.replicate(pb, ts)
	}
	if err := e.refuse.Load(); err != nil && !pb.Empty() {
		return *err // closedts.go
	}
	return e.commitPebble(pb, opts)
}

// replicate decodes pb into mutations and hands them to the replicator.
func (e *Engine) replicate(pb *pebble.Batch, ts hlc.Timestamp) error {
	if pb.Empty() {
		return nil
	}
	ms := make([]Mutation, 0, pb.Count())
	r := pb.Reader()
	for {
		kind, k, v, ok, err := r.Next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		var m Mutation
		switch kind {
		case pebble.InternalKeyKindSet:
			m = Mutation{Kind: MutationSet, Key: k, Value: v}
		case pebble.InternalKeyKindDelete:
			m = Mutation{Kind: MutationDelete, Key: k}
		case pebble.InternalKeyKindSingleDelete:
			m = Mutation{Kind: MutationSingleDelete, Key: k}
		case pebble.InternalKeyKindRangeDelete:
			m = Mutation{Kind: MutationDeleteRange, Key: k, Value: v}
		case pebble.InternalKeyKindMerge:
			m = Mutation{Kind: MutationMerge, Key: k, Value: v}
		case pebble.InternalKeyKindLogData:
			continue
		default:
			return fmt.Errorf("storage: a commit holds a %s write, which replication cannot carry", kind)
		}
		ms = append(ms, m)
	}
	if len(ms) == 0 {
		return nil
	}
	// Applied here before Replicate returns, by writes into Pebble that
	// storage does not see (so the engine reuses no iterators,
	// pointiter.go); counted anyway.
	e.points.writing()
	defer e.points.wrote()
	return e.repl.Replicate(ts, ms)
}

// ApplyMutations writes ms to w (a Pebble batch of a replica's state
// machine): how a replica applies what Replicate was given.
func ApplyMutations(w *pebble.Batch, ms []Mutation) error {
	for _, m := range ms {
		var err error
		switch m.Kind {
		case MutationSet:
			err = w.Set(m.Key, m.Value, nil)
		case MutationDelete:
			err = w.Delete(m.Key, nil)
		case MutationSingleDelete:
			err = w.SingleDelete(m.Key, nil)
		case MutationDeleteRange:
			err = w.DeleteRange(m.Key, m.Value, nil)
		case MutationMerge:
			err = w.Merge(m.Key, m.Value, nil)
		default:
			err = fmt.Errorf("storage: unknown mutation kind %d", m.Kind)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// commitShared writes a batch of shard data that is not a commit's (a
// flush of intents, a chunk of their resolution or removal, a lock-table
// cleanup of an intent) without fsync: through the replicator when there
// is one, so that every replica of the keys' shards holds it, at ts (zero:
// no commit timestamp), else to Pebble. Lock records in it stay local
// (the Replicator's rule).
func (e *Engine) commitShared(b *pebble.Batch, ts hlc.Timestamp) error {
	if e.repl != nil {
		return e.replicate(b, ts)
	}
	return e.commitPebble(b, pebble.NoSync)
}

// abandonServing tells a replicator that can stop its node serving
// (BulkAbandoner) that the store may hold a commit this node cannot
// finish: the next serving node settles it.
func (e *Engine) abandonServing(reason error) {
	if a, ok := e.repl.(BulkAbandoner); ok {
		a.AbandonServing(reason)
	}
}
