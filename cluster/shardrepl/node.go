package shardrepl

import (
	"context"
	"errors"
	"fmt"

	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/cluster/shardsm"
	"github.com/pivotdb/pivotdb/storage"
)

// FirstGroup is the group of the first shard, which a new cluster's
// shard map starts with: WholeSpan. Group 1 is the metadata group
// (cluster/node.MetaGroup), which runs on the same hosts.
const FirstGroup raft.GroupID = 2

// WholeSpan is every row key the storage engine writes through a commit:
// the system area (0x01: catalog, shard maps, statistics, settings) and the
// tables (0x02). The local keys (0x03) route by the row key they address
// (shardsm.RouteKey).
var WholeSpan = storage.Span{Start: []byte{storage.SystemPrefix}, End: []byte{storage.TableDataPrefix + 1}}

// OpenEngine opens the storage engine in dir for replication: as a
// replica's (storage.Options.Replica: its GC loop collects only once a
// Replicator is set, through it, so that every replica deletes the same
// versions) and the shard store over its Pebble, staging snapshots in
// dir/raft-staging. The engine writes through the Raft groups only once a
// Replicator is set on it; a follower's engine is never written by
// anything but its replicas' state machines.
func OpenEngine(dir string, opts storage.Options) (*storage.Engine, *shardsm.Store, error) {
	opts.Replica = true
	e, err := storage.Open(dir, opts)
	if err != nil {
		return nil, nil, err
	}
	db, popts, _ := e.PebbleForReplication()
	st, err := shardsm.NewStore(db, popts, popts.FS.PathJoin(dir, "raft-staging"))
	if err != nil {
		e.Close()
		return nil, nil, err
	}
	// The engine's lock records are its own sessions' (storage/locals.go).
	st.SetLocalLocks()
	if opts.NoSync {
		st.SetNoSync()
	}
	// Every commit timestamp a replica applies moves the engine's clock.
	st.SetClock(e.Clock().Update)
	return e, st, nil
}

// StartReplica starts this host's replica r of g: with the founding
// members when the log store has nothing of it yet, else a restart.
func StartReplica(h raft.Host, st *shardsm.Store, g raft.GroupID, r raft.ReplicaID, members map[raft.ReplicaID]string) error {
	spec := raft.ReplicaSpec{Group: g, Replica: r}
	if !h.HasReplicaData(g, r) {
		spec.InitialMembers = members
	}
	return h.StartReplica(spec, st.NewStateMachine)
}

// InitGroup gives group g its shard (shardsm.Init) unless it has one: the
// first command of a new cluster's first group. A group that holds a
// different shard is an error.
func InitGroup(ctx context.Context, h raft.Host, g raft.GroupID, span storage.Span) error {
	v, err := h.Read(ctx, g, shardsm.State{})
	if err != nil {
		return fmt.Errorf("shardrepl: reading group %d: %w", g, err)
	}
	if st := v.(shardsm.StateResult); st.Initialized {
		return nil
	}
	cmd, err := shardsm.EncodeInit(shardsm.Init{Descriptor: shardsm.Descriptor{Span: span, Generation: 1}})
	if err != nil {
		return err
	}
	res, err := h.Propose(ctx, g, cmd)
	if err != nil {
		return fmt.Errorf("shardrepl: initializing group %d: %w", g, err)
	}
	if err := shardsm.DecodeResult(res); err != nil {
		// Another node's Init won the race: fine if it gave the same span.
		v, rerr := h.Read(ctx, g, shardsm.State{})
		if rerr != nil {
			return errors.Join(err, rerr)
		}
		st := v.(shardsm.StateResult)
		if !st.Initialized || string(st.Descriptor.Span.Start) != string(span.Start) || string(st.Descriptor.Span.End) != string(span.End) {
			return fmt.Errorf("shardrepl: initializing group %d: %w", g, err)
		}
	}
	return nil
}
