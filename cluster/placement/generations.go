package placement

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/pivotdb/pivotdb/cluster/kvsm"
	"github.com/pivotdb/pivotdb/cluster/node"
	"github.com/pivotdb/pivotdb/cluster/raft"
)

// Replica-id generations (issue 18): a node's replica of a group has the id
// gen<<32 | node id. Generation 0 is the node id itself, the id every
// replica had before generations existed, so old clusters need no
// migration. Dragonboat cannot demote a voter, and a removed replica id can
// never come back; a voter that moves away from node n is therefore removed
// and n rejoins the group as a non-voter under the next generation (its old
// replica stopped and its data dropped first: Rejoin), catching up from a
// snapshot. The generation in use is recorded in the metadata group:
//
//	"replica-id/" + group (8 BE) + node (8 BE)   the node's replica id in
//	                                             the group (8 BE); no key:
//	                                             generation 0
//
// It only grows: the next generation is the recorded one plus one, and it
// is recorded right after the managing node added that replica (an add
// that a crash left unrecorded is repeated with the same id, which the
// group still holds as a member, so nothing is ever reused).

// genShift: node ids stay below 2^32 (one counter in the metadata group).
const genShift = 32

// ReplicaOf is node's replica id in generation gen.
func ReplicaOf(node uint64, gen uint64) raft.ReplicaID {
	return raft.ReplicaID(gen<<genShift | node)
}

// NodeOf is the node a replica id belongs to.
func NodeOf(r raft.ReplicaID) uint64 { return uint64(r) & (1<<genShift - 1) }

// GenOf is a replica id's generation.
func GenOf(r raft.ReplicaID) uint64 { return uint64(r) >> genShift }

const (
	keyReplicaID    = "replica-id/"
	keyReplicaIDEnd = "replica-id0" // '/'+1
)

func replicaIDKey(g raft.GroupID, nodeID uint64) []byte {
	k := binary.BigEndian.AppendUint64([]byte(keyReplicaID), uint64(g))
	return binary.BigEndian.AppendUint64(k, nodeID)
}

// ReplicaIDs reads, linearizably, the replica ids of g's nodes that left
// generation 0 (a node missing from the map uses its node id).
func ReplicaIDs(ctx context.Context, h raft.Host, g raft.GroupID) (map[uint64]raft.ReplicaID, error) {
	start := binary.BigEndian.AppendUint64([]byte(keyReplicaID), uint64(g))
	end := binary.BigEndian.AppendUint64([]byte(keyReplicaID), uint64(g)+1)
	v, err := h.Read(ctx, node.MetaGroup, kvsm.Scan{Start: start, End: end})
	if err != nil {
		return nil, err
	}
	out := map[uint64]raft.ReplicaID{}
	for _, kv := range v.([]kvsm.KV) {
		if len(kv.Key) == len(start)+8 && len(kv.Value) == 8 {
			out[binary.BigEndian.Uint64(kv.Key[len(start):])] = raft.ReplicaID(binary.BigEndian.Uint64(kv.Value))
		}
	}
	return out, nil
}

// CurrentReplica is node's replica id in g as the metadata group records
// it (its node id while it never moved).
func CurrentReplica(ctx context.Context, h raft.Host, g raft.GroupID, nodeID uint64) (raft.ReplicaID, error) {
	v, err := h.Read(ctx, node.MetaGroup, kvsm.Get{Key: replicaIDKey(g, nodeID)})
	if err != nil {
		return 0, err
	}
	r := v.(kvsm.GetResult)
	if !r.Found || len(r.Value) != 8 {
		return raft.ReplicaID(nodeID), nil
	}
	return raft.ReplicaID(binary.BigEndian.Uint64(r.Value)), nil
}

func recordReplicaOp(g raft.GroupID, r raft.ReplicaID) kvsm.Op {
	return kvsm.Op{Kind: kvsm.OpPut, Key: replicaIDKey(g, NodeOf(r)), Value: binary.BigEndian.AppendUint64(nil, uint64(r))}
}

// replicaOn returns node id's replica in mem (any generation) and whether it
// votes; ok is false when the node holds none.
func replicaOn(mem raft.Membership, id uint64) (r raft.ReplicaID, voter, ok bool) {
	for v := range mem.Voters {
		if NodeOf(v) == id {
			return v, true, true
		}
	}
	for nv := range mem.NonVoters {
		if NodeOf(nv) == id {
			return nv, false, true
		}
	}
	return 0, false, false
}

// Rejoin switches this host's replica of g from old to new, a later
// generation that the group added as a non-voter: it stops old (the engine
// may have stopped it when it applied its removal), deletes its log data
// and, through drop, the state machine's data of g, then starts new as a
// joining non-voter, which catches up from a snapshot. old's data must go:
// the new replica's log starts empty, and a state machine that claims an
// applied index its log never had would not be sent the entries or the
// snapshot it needs. It is safe to repeat after a failure part-way.
func Rejoin(ctx context.Context, h raft.Host, g raft.GroupID, old, new raft.ReplicaID, drop func() error, create raft.CreateStateMachine) error {
	if NodeOf(old) != NodeOf(new) || GenOf(new) <= GenOf(old) {
		return fmt.Errorf("placement: rejoining group %d as replica %#x after %#x: not a later generation of the same node", g, new, old)
	}
	if err := h.StopReplica(g); err != nil && !errors.Is(err, raft.ErrGroupNotFound) {
		return fmt.Errorf("placement: stopping replica %#x of group %d: %w", old, g, err)
	}
	// Every older generation whose log is still here (a rejoin that
	// stopped half-way left one).
	for gen := uint64(0); gen < GenOf(new); gen++ {
		r := ReplicaOf(NodeOf(new), gen)
		if h.HasReplicaData(g, r) {
			if err := h.RemoveReplicaData(ctx, g, r); err != nil {
				return fmt.Errorf("placement: removing replica %#x's data of group %d: %w", r, g, err)
			}
		}
	}
	if err := drop(); err != nil {
		return fmt.Errorf("placement: dropping group %d's state: %w", g, err)
	}
	spec := raft.ReplicaSpec{Group: g, Replica: new, Join: true, NonVoter: true}
	if err := h.StartReplica(spec, create); err != nil && !errors.Is(err, raft.ErrGroupExists) {
		return fmt.Errorf("placement: starting replica %#x of group %d: %w", new, g, err)
	}
	return nil
}

// moveVoter moves g's voter on node from to node to, whose non-voter has
// caught up (the allocator's voter moves, plan.go): to's replica is
// promoted while from's still votes (the group never has fewer voters),
// from's is removed, and from gets a non-voter of the next generation,
// added here and recorded in the metadata group; from's node notices the
// record and rejoins under it (Rejoin, cluster/shardrepl). A REPLICA MOVE
// job with these three steps. The group's leader's voter never moves.
func (m *Manager) moveVoter(ctx context.Context, g Group, from, to uint64, why string) error {
	if !g.Generations {
		return fmt.Errorf("placement: %s's voters cannot move: its replicas do not change generations", g.Name)
	}
	m.moveMu.Lock()
	defer m.moveMu.Unlock()
	h := m.cfg.Node.Host()
	mem, err := h.Membership(ctx, g.ID)
	if err != nil {
		return err
	}
	rFrom, fromVotes, ok1 := replicaOn(mem, from)
	rTo, toVotes, ok2 := replicaOn(mem, to)
	if !ok1 || !fromVotes || !ok2 || toVotes {
		return fmt.Errorf("moving a voter of %s from node %d to node %d: the membership changed", g.Name, from, to)
	}
	if l, _, ok, err := h.Leader(g.ID); err != nil || !ok || l == rFrom {
		return fmt.Errorf("moving a voter of %s from node %d to node %d: node %d leads it (or no leader is known)", g.Name, from, to, from)
	}
	addr := mem.Voters[rFrom]
	job := m.startJob(KindReplicaMove, fmt.Sprintf("move a voter of %s from node %d to node %d (%s); node %d keeps a non-voter", g.Name, from, to, why, from))
	const steps = 3
	job.progress(0, steps)
	err = m.swapVoter(ctx, g, rFrom, rTo, addr, job)
	job.finish(err)
	if err == nil {
		m.cfg.Logf("node %d: moved a voter of %s from node %d to node %d (%s); node %d rejoins as a non-voter", m.self, g.Name, from, to, why, from)
	}
	return err
}

func (m *Manager) swapVoter(ctx context.Context, g Group, rFrom, rTo raft.ReplicaID, addr string, job *jobHandle) error {
	h := m.cfg.Node.Host()
	if err := m.promoteWhileVoter(ctx, g, rTo, rFrom); err != nil {
		return err
	}
	job.progress(1, 3)
	if err := retry(ctx, func(ctx context.Context) error { return h.RemoveReplica(ctx, g.ID, rFrom) }); err != nil {
		return fmt.Errorf("removing node %d's voter of %s: %w", NodeOf(rFrom), g.Name, err)
	}
	job.progress(2, 3)
	if err := m.addNextGeneration(ctx, g, rFrom, addr); err != nil {
		return err
	}
	job.progress(3, 3)
	return nil
}

// addNextGeneration adds node NodeOf(old)'s replica of the generation
// after old (and after the recorded one) as a non-voter at addr, then
// records it.
func (m *Manager) addNextGeneration(ctx context.Context, g Group, old raft.ReplicaID, addr string) error {
	h := m.cfg.Node.Host()
	id := NodeOf(old)
	cur, err := CurrentReplica(ctx, h, g.ID, id)
	if err != nil {
		return err
	}
	next := ReplicaOf(id, max(GenOf(cur), GenOf(old))+1)
	CompactBeforeAdd(ctx, h, g.ID, m.cfg.Logf)
	if err := retry(ctx, func(ctx context.Context) error { return h.AddNonVoter(ctx, g.ID, next, addr) }); err != nil {
		return fmt.Errorf("adding node %d's replica %#x of %s as a non-voter: %w", id, next, g.Name, err)
	}
	if err := m.metaPut(ctx, recordReplicaOp(g.ID, next)); err != nil {
		return fmt.Errorf("recording node %d's replica %#x of %s: %w", id, next, g.Name, err)
	}
	return nil
}

// metaPut applies idempotent puts to the metadata group, repeating an
// attempt that timed out.
func (m *Manager) metaPut(ctx context.Context, ops ...kvsm.Op) error {
	cmd, err := kvsm.Command{Ops: ops}.Encode()
	if err != nil {
		return err
	}
	for {
		actx, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, err := m.cfg.Node.Host().Propose(actx, node.MetaGroup, cmd)
		cancel()
		if errors.Is(err, raft.ErrTimeout) && ctx.Err() == nil {
			continue
		}
		return err
	}
}

// gaveUp reports whether node id held a replica of the group that was
// removed and holds none now (a voter that moved keeps a non-voter of a
// later generation: that is not giving up).
func gaveUp(mem raft.Membership, id uint64) bool {
	if _, _, ok := replicaOn(mem, id); ok {
		return false
	}
	for r := range mem.Removed {
		if NodeOf(r) == id {
			return true
		}
	}
	return false
}

// lastRemoved is node id's removed replica of the highest generation.
func lastRemoved(mem raft.Membership, id uint64) raft.ReplicaID {
	var last raft.ReplicaID
	for r := range mem.Removed {
		if NodeOf(r) == id && (last == 0 || GenOf(r) > GenOf(last)) {
			last = r
		}
	}
	return last
}

// CompactBeforeAdd compacts this host's log of g (the leader's, on the
// managing node) before a new replica is added, so that the replica
// catches up from a snapshot rather than from the log. Replayed from the
// log, a group's recent history (a bulk load: 64 MB of entries and more)
// lands in the new replica's in-memory log faster than it applies it, and
// once that holds more than the host's MaxInMemLogBytes the new replica
// reports itself rate-limited, which makes the leader refuse every
// proposal of the group as busy until it has applied them: a non-voter
// catching up stopped the group's writes for seconds
// (BenchmarkClusterReplicaMove). A snapshot is installed whole, outside
// the in-memory log. On-disk state machines make the compaction cheap (a
// sync and a marker, no copy). A failure is logged, not returned: the add
// works without it, only slower on the writers.
func CompactBeforeAdd(ctx context.Context, h raft.Host, g raft.GroupID, logf func(string, ...any)) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := h.CompactLog(cctx, g); err != nil && logf != nil {
		logf("compacting group %d's log before adding a replica: %v", g, err)
	}
}
