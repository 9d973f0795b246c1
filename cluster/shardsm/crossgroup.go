package shardsm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// Commits across several groups (cluster/shardrepl's crossgroup.go drives
// them; its doc.go has the protocol and why it is sound). The state
// machine's share:
//
//   - Stage keeps a group's part of a commit (a Write, checked like one:
//     the serving epoch, the generation, every key the shard's) in the
//     group's own state, under 03 04 | group | 07 | commit id, where reads
//     do not see it; it travels with snapshots (the group's state is one
//     of their spans) and is counted by Check's fingerprint, so replicas
//     agree on it. Nothing of it is applied.
//   - Decide records the commit's outcome in its coordinator group, under
//     03 04 | group | 08 | commit id. The first decision for an id wins: a
//     later Decide changes nothing and is answered with the recorded one,
//     so whoever proposes learns the one outcome. A new decision is fenced
//     by the serving epoch like a Write. A COMMITTED decision carries the
//     coordinator group's own part, applied in the same batch as the
//     record (the coordinator's part is never staged).
//   - Resolve applies a staged part (Commit: with the stats counted as a
//     Write's) or discards it, and deletes it; a part that is not there
//     (resolved already) is a no-op, so a repeat is harmless. It is not
//     fenced: it only follows a decision, whoever carries it out.
//     Decide and Resolve also delete the decision records they are told to
//     forget (Forget), those of commits whose every part is applied.
//   - ServeAt raises a group's serving epoch to the one the serving node
//     got from the first group's Serve, so that every group fences the
//     node that served before; a lower or equal epoch of another node is
//     refused (FencedError).
//
// A Split is refused while the parent holds staged parts (its span must
// not change under a part staged against it), and the child inherits the
// parent's serving epoch (both in applySplit).

// CommitID names a commit across groups: the serving epoch and a sequence
// number of the node that serves under it, so ids never repeat.
type CommitID [16]byte

// NewCommitID returns the id of commit seq under serving epoch epoch.
func NewCommitID(epoch, seq uint64) CommitID {
	var id CommitID
	binary.BigEndian.PutUint64(id[:8], epoch)
	binary.BigEndian.PutUint64(id[8:], seq)
	return id
}

func (id CommitID) String() string {
	return fmt.Sprintf("%d.%d", binary.BigEndian.Uint64(id[:8]), binary.BigEndian.Uint64(id[8:]))
}

// Decision is the outcome of a commit across groups.
type Decision byte

const (
	// DecisionCommitted: every part is to be applied.
	DecisionCommitted Decision = 1
	// DecisionAborted: every staged part is to be discarded.
	DecisionAborted Decision = 2
)

func (d Decision) String() string {
	switch d {
	case DecisionCommitted:
		return "committed"
	case DecisionAborted:
		return "aborted"
	}
	return fmt.Sprintf("decision(%d)", byte(d))
}

// Stage keeps Write, this group's part of commit ID, without applying it.
// Coordinator is the group that holds the commit's decision.
type Stage struct {
	ID          CommitID
	Coordinator raft.GroupID
	Write       Write
}

// Decide records Decision for commit ID unless one is recorded already
// (the first wins; the result carries the recorded one, DecideResult). A
// new decision needs Epoch to be the group's serving epoch. Write, with
// DecisionCommitted only, is this group's own part, applied with the
// record. Forget lists decision records to delete.
type Decide struct {
	ID       CommitID
	Decision Decision
	Epoch    uint64
	Write    *Write
	Forget   []CommitID
}

// Resolve applies (Commit) or discards the part of commit ID staged in
// this group, if it is there, and deletes the decision records in Forget.
// A zero ID resolves nothing.
type Resolve struct {
	ID     CommitID
	Commit bool
	Forget []CommitID
}

// ServeAt makes Node the group's serving node under Epoch, which must be
// above the group's (or equal, for the same node: a repeat).
type ServeAt struct {
	Node, Epoch uint64
}

// Command kinds on the wire (command.go has the others).
const (
	cmdStage   byte = 7
	cmdDecide  byte = 8
	cmdResolve byte = 9
	cmdServeAt byte = 10
)

// Group state kinds (keys.go has the others).
const (
	// stateStaged: 03 04 | group | 07 | commit id → coordinator (8 BE) |
	// the encoded Write.
	stateStaged byte = 0x07
	// stateDecision: 03 04 | group | 08 | commit id → decision byte |
	// uvarint epoch of the node that decided.
	stateDecision byte = 0x08
)

func crossKey(g raft.GroupID, kind byte, id CommitID) []byte {
	return mvcc.AppendBareKey(nil, append(append(groupStatePrefix(g), kind), id[:]...))
}

// crossSpan returns the engine-key bounds of g's records of kind.
func crossSpan(g raft.GroupID, kind byte) (lo, hi []byte) {
	p := groupStatePrefix(g)
	return mvcc.AppendBareKey(nil, append(p[:len(p):len(p)], kind)), mvcc.AppendBareKey(nil, append(p[:len(p):len(p)], kind+1))
}

// EncodeStage encodes c for raft.Host.Propose.
func EncodeStage(c Stage) ([]byte, error) {
	w, err := EncodeWrite(c.Write)
	if err != nil {
		return nil, err
	}
	if c.Coordinator == 0 {
		return nil, errors.New("shardsm: a staged part without a coordinator group")
	}
	out := append([]byte{commandVersion, cmdStage}, c.ID[:]...)
	out = binary.BigEndian.AppendUint64(out, uint64(c.Coordinator))
	return appendBytes(out, w), nil
}

// EncodeDecide encodes c for raft.Host.Propose.
func EncodeDecide(c Decide) ([]byte, error) {
	if c.Decision != DecisionCommitted && c.Decision != DecisionAborted {
		return nil, fmt.Errorf("shardsm: unknown decision %d", c.Decision)
	}
	if c.Write != nil && c.Decision != DecisionCommitted {
		return nil, errors.New("shardsm: an aborted decision carries no writes")
	}
	out := append([]byte{commandVersion, cmdDecide}, c.ID[:]...)
	out = append(out, byte(c.Decision))
	out = binary.AppendUvarint(out, c.Epoch)
	if c.Write != nil {
		w, err := EncodeWrite(*c.Write)
		if err != nil {
			return nil, err
		}
		out = appendOptBytes(out, w)
	} else {
		out = appendOptBytes(out, nil)
	}
	return appendIDs(out, c.Forget), nil
}

// EncodeResolve encodes c for raft.Host.Propose.
func EncodeResolve(c Resolve) ([]byte, error) {
	out := append([]byte{commandVersion, cmdResolve}, c.ID[:]...)
	out = appendBool(out, c.Commit)
	return appendIDs(out, c.Forget), nil
}

// EncodeServeAt encodes c for raft.Host.Propose.
func EncodeServeAt(c ServeAt) ([]byte, error) {
	if c.Node == 0 || c.Epoch == 0 {
		return nil, errors.New("shardsm: serve-at needs a node and an epoch")
	}
	out := binary.BigEndian.AppendUint64([]byte{commandVersion, cmdServeAt}, c.Node)
	return binary.BigEndian.AppendUint64(out, c.Epoch), nil
}

func appendIDs(b []byte, ids []CommitID) []byte {
	b = binary.AppendUvarint(b, uint64(len(ids)))
	for _, id := range ids {
		b = append(b, id[:]...)
	}
	return b
}

func (r *reader) ids(total int) []CommitID {
	n := r.uvarint()
	if n > uint64(total)/16 {
		r.fail("a list of commit ids")
		return nil
	}
	var out []CommitID
	for i := uint64(0); i < n && r.err == nil; i++ {
		out = append(out, CommitID(r.fixed(16)))
	}
	return out
}

// decodeNestedWrite decodes an encoded Write carried inside a command.
func decodeNestedWrite(b []byte) (*Write, error) {
	c, err := decodeCommand(b)
	if err != nil {
		return nil, err
	}
	w, ok := c.(*Write)
	if !ok {
		return nil, fmt.Errorf("%w: a %T where a write belongs", errBadCommand, c)
	}
	return w, nil
}

// decodeCross decodes the commands of this file (kind is the command byte,
// r reads what follows it; total is the command's length).
func decodeCross(kind byte, r *reader, total int) (any, error) {
	switch kind {
	case cmdStage:
		c := &Stage{ID: CommitID(r.fixed(16)), Coordinator: raft.GroupID(r.u64())}
		w := r.bytes()
		if r.err != nil {
			return nil, fmt.Errorf("%w: %v", errBadCommand, r.err)
		}
		nw, err := decodeNestedWrite(w)
		if err != nil {
			return nil, err
		}
		c.Write = *nw
		return c, nil
	case cmdDecide:
		c := &Decide{ID: CommitID(r.fixed(16)), Decision: Decision(r.byte()), Epoch: r.uvarint()}
		if w := r.optBytes(); w != nil && r.err == nil {
			nw, err := decodeNestedWrite(w)
			if err != nil {
				return nil, err
			}
			c.Write = nw
		}
		c.Forget = r.ids(total)
		if r.err == nil && c.Decision != DecisionCommitted && c.Decision != DecisionAborted {
			return nil, fmt.Errorf("%w: decision %d", errBadCommand, c.Decision)
		}
		return c, nil
	case cmdResolve:
		c := &Resolve{ID: CommitID(r.fixed(16)), Commit: r.bool()}
		c.Forget = r.ids(total)
		return c, nil
	case cmdServeAt:
		return &ServeAt{Node: r.u64(), Epoch: r.u64()}, nil
	}
	return nil, fmt.Errorf("%w: command kind %d", errBadCommand, kind)
}

// DecideResult returns the decision a Decide's result carries: the one
// recorded for the commit, which is not necessarily the one proposed.
func DecideResult(res raft.Result) (Decision, error) {
	if err := DecodeResult(res); err != nil {
		return 0, err
	}
	if len(res.Data) != 1 {
		return 0, fmt.Errorf("shardsm: decide result of %d bytes", len(res.Data))
	}
	return Decision(res.Data[0]), nil
}

// crossOutcome is what applying one of this file's commands changes.
type crossOutcome struct {
	out     outcome
	delta   mvcc.Stats
	maxTS   hlc.Timestamp // the newest commit timestamp after it
	serving Serving
}

// applyCross applies a Stage, Decide, Resolve or ServeAt into b (the
// state machine's hook in applyOne). Only an I/O error is returned.
func (m *stateMachine) applyCross(b *pebble.Batch, cmd any, desc Descriptor, initialized bool, maxTS hlc.Timestamp, serving Serving, closed hlc.Timestamp) (crossOutcome, error) {
	x := crossOutcome{maxTS: maxTS, serving: serving}
	applied := raft.Result{Value: ResultApplied}
	switch c := cmd.(type) {
	case *Stage:
		if c.Write.Epoch != serving.Epoch {
			x.out.res = rejected(&FencedError{WriteEpoch: c.Write.Epoch, Serving: serving})
			return x, nil
		}
		// A part at or below the closed timestamp could change what a
		// follower read saw once resolved (closedts.go): refused, so the
		// commit is discarded.
		if out, ok := closedFence(&c.Write, closed); !ok {
			x.out = out
			return x, nil
		}
		if res, ok := checkWrite(&c.Write, desc, initialized); !ok {
			x.out.res = res
			return x, nil
		}
		w, err := EncodeWrite(c.Write)
		if err != nil {
			x.out.res = rejected(err)
			return x, nil
		}
		v := binary.BigEndian.AppendUint64(nil, uint64(c.Coordinator))
		if err := b.Set(crossKey(m.group, stateStaged, c.ID), append(v, w...), nil); err != nil {
			return x, err
		}
		x.out = outcome{res: applied, keep: true}
	case *Decide:
		rec, ok, err := get(b, crossKey(m.group, stateDecision, c.ID))
		if err != nil {
			return x, err
		}
		decided := c.Decision
		if ok && len(rec) > 0 {
			decided = Decision(rec[0]) // the first decision stands
		} else {
			if c.Epoch != serving.Epoch {
				x.out.res = rejected(&FencedError{WriteEpoch: c.Epoch, Serving: serving})
				return x, nil
			}
			if c.Write != nil {
				if out, ok := closedFence(c.Write, closed); !ok {
					x.out = out
					return x, nil
				}
				out, delta, err := m.applyWrite(b, c.Write, desc, initialized)
				if err != nil || !out.keep {
					x.out = out
					return x, err
				}
				x.delta = delta
				if maxTS.Less(c.Write.Timestamp) {
					x.maxTS = c.Write.Timestamp
				}
			}
			v := binary.AppendUvarint([]byte{byte(c.Decision)}, c.Epoch)
			if err := b.Set(crossKey(m.group, stateDecision, c.ID), v, nil); err != nil {
				return x, err
			}
		}
		if err := m.forget(b, c.Forget); err != nil {
			return x, err
		}
		x.out = outcome{res: raft.Result{Value: ResultApplied, Data: []byte{byte(decided)}}, keep: true}
	case *Resolve:
		key := crossKey(m.group, stateStaged, c.ID)
		v, ok, err := get(b, key)
		if err != nil {
			return x, err
		}
		if ok {
			if c.Commit {
				if len(v) < 8 {
					return x, fmt.Errorf("shardsm: group %d: staged part %s of %d bytes", m.group, c.ID, len(v))
				}
				w, err := decodeNestedWrite(v[8:])
				if err != nil {
					return x, fmt.Errorf("shardsm: group %d: staged part %s: %w", m.group, c.ID, err)
				}
				out, delta, err := m.applyWrite(b, w, desc, initialized)
				if err != nil || !out.keep {
					// Splits wait for staged parts, so the part still
					// fits the shard; every replica answers alike anyway.
					x.out = out
					return x, err
				}
				x.delta = delta
				if maxTS.Less(w.Timestamp) {
					x.maxTS = w.Timestamp
				}
			}
			if err := b.Delete(key, nil); err != nil {
				return x, err
			}
		}
		if err := m.forget(b, c.Forget); err != nil {
			return x, err
		}
		x.out = outcome{res: applied, keep: true}
	case *ServeAt:
		switch {
		case c.Epoch > serving.Epoch:
			x.serving = Serving{Epoch: c.Epoch, Node: c.Node}
		case c.Epoch == serving.Epoch && c.Node == serving.Node:
		default:
			x.out.res = rejected(&FencedError{WriteEpoch: c.Epoch, Serving: serving})
			return x, nil
		}
		x.out = outcome{res: raft.Result{Value: ResultApplied, Data: binary.BigEndian.AppendUint64(nil, x.serving.Epoch)}, keep: true}
	default:
		return x, fmt.Errorf("shardsm: applyCross: %T", cmd)
	}
	return x, nil
}

func (m *stateMachine) forget(b *pebble.Batch, ids []CommitID) error {
	for _, id := range ids {
		if err := b.Delete(crossKey(m.group, stateDecision, id), nil); err != nil {
			return err
		}
	}
	return nil
}

// checkWrite checks what applyWrite checks before writing: the shard is
// initialized, the generation current, every key the shard's.
func checkWrite(c *Write, desc Descriptor, initialized bool) (raft.Result, bool) {
	if !initialized || (c.Generation != 0 && c.Generation != desc.Generation) {
		return stale(desc, initialized), false
	}
	for _, mu := range c.Mutations {
		var sp storage.Span
		if mu.Kind == storage.MutationDeleteRange {
			var err error
			if sp, err = routeRange(mu.Key, mu.Value); err != nil {
				return rejected(err), false
			}
		} else {
			k, err := RouteKey(mu.Key)
			if err != nil {
				return rejected(err), false
			}
			sp = storage.Span{Start: k, End: append(k[:len(k):len(k)], 0)}
		}
		if !desc.ContainsSpan(sp) {
			return stale(desc, initialized), false
		}
	}
	return raft.Result{}, true
}

// splitCross is applySplit's share: the split is refused (a result, ok
// false) while the parent holds staged parts; otherwise, when the split
// seeds the child, the child inherits the parent's serving epoch, so that
// it fences the same nodes from its first entry.
func (m *stateMachine) splitCross(b *pebble.Batch, child raft.GroupID, seeded bool) (raft.Result, bool, error) {
	n, err := countStaged(b, m.group)
	if err != nil {
		return raft.Result{}, false, err
	}
	if n > 0 {
		return rejected(fmt.Errorf("shardsm: group %d holds staged parts of %d commit(s) across groups; split it once they are resolved", m.group, n)), false, nil
	}
	if seeded {
		sv, err := readServing(b, m.group)
		if err != nil {
			return raft.Result{}, false, err
		}
		if sv != (Serving{}) {
			if err := b.Set(stateKey(child, stateServing), encodeServing(sv), nil); err != nil {
				return raft.Result{}, false, err
			}
		}
	}
	return raft.Result{}, true, nil
}

func countStaged(r mvcc.Reader, g raft.GroupID) (int, error) {
	lo, hi := crossSpan(g, stateStaged)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return 0, err
	}
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	return n, it.Close()
}

// Staged asks for the parts staged in the group (StagedPart each).
type Staged struct{}

// StagedPart is one part staged in a group.
type StagedPart struct {
	ID          CommitID
	Coordinator raft.GroupID
	Timestamp   hlc.Timestamp
	Mutations   int
}

// Decisions asks for the decision records the group holds
// (DecisionRecord each).
type Decisions struct{}

// DecisionRecord is one recorded decision.
type DecisionRecord struct {
	ID       CommitID
	Decision Decision
	Epoch    uint64
}

// lookupCross answers Staged and Decisions (Lookup's hook).
func (m *stateMachine) lookupCross(query any) (any, error) {
	switch query.(type) {
	case Staged:
		var out []StagedPart
		err := m.scanCross(stateStaged, func(id CommitID, v []byte) error {
			if len(v) < 8 {
				return fmt.Errorf("shardsm: group %d: staged part %s of %d bytes", m.group, id, len(v))
			}
			w, err := decodeNestedWrite(v[8:])
			if err != nil {
				return err
			}
			out = append(out, StagedPart{ID: id, Coordinator: raft.GroupID(binary.BigEndian.Uint64(v)),
				Timestamp: w.Timestamp, Mutations: len(w.Mutations)})
			return nil
		})
		return out, err
	case Decisions:
		var out []DecisionRecord
		err := m.scanCross(stateDecision, func(id CommitID, v []byte) error {
			r := reader{b: v}
			d := DecisionRecord{ID: id, Decision: Decision(r.byte()), Epoch: r.uvarint()}
			if err := r.done(); err != nil {
				return fmt.Errorf("shardsm: group %d: decision %s: %w", m.group, id, err)
			}
			out = append(out, d)
			return nil
		})
		return out, err
	}
	return nil, fmt.Errorf("shardsm: unknown query %T", query)
}

func (m *stateMachine) scanCross(kind byte, f func(CommitID, []byte) error) error {
	lo, hi := crossSpan(m.group, kind)
	it, err := m.store.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return err
	}
	prefix := len(groupStatePrefix(m.group)) + 1
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		uk := k[:len(k)-1] // a bare key: the user key and a 0 byte
		if len(uk) != prefix+16 || !bytes.Equal(uk[:prefix-1], groupStatePrefix(m.group)) {
			it.Close()
			return fmt.Errorf("shardsm: group %d: bad key %x in its %d records", m.group, k, kind)
		}
		v, err := it.ValueAndErr()
		if err == nil {
			err = f(CommitID(uk[prefix:]), v)
		}
		if err != nil {
			it.Close()
			return err
		}
	}
	return it.Close()
}
