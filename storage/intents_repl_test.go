package storage

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// replayReplicator applies each commit to the serving engine's Pebble (as
// the serving node's replica does) and to a second engine's (another
// replica), which gets nothing else: whatever the second engine holds
// went through Replicate.
type replayReplicator struct {
	e, replica *Engine
	// intentCalls counts the Replicate calls that carried intents;
	// intentWithTS is set if any of them carried a commit timestamp.
	intentCalls   int
	intentWithTS  bool
	fail          error
	abandonReason error
}

func (r *replayReplicator) Replicate(ts hlc.Timestamp, writes []Mutation) error {
	if r.fail != nil {
		return r.fail
	}
	for _, m := range writes {
		if _, vts, ok := enginekey.DecodeVersion(m.Key); ok && m.Kind == MutationSet && isIntentTimestamp(vts) {
			r.intentCalls++
			r.intentWithTS = r.intentWithTS || !ts.IsEmpty()
			break
		}
	}
	for _, e := range []*Engine{r.e, r.replica} {
		db, _, _ := e.PebbleForReplication()
		b := db.NewBatch()
		if err := ApplyMutations(b, writes); err != nil {
			b.Close()
			return err
		}
		if err := b.Commit(pebble.NoSync); err != nil {
			b.Close()
			return err
		}
		b.Close()
	}
	return nil
}

func (r *replayReplicator) AbandonServing(reason error) { r.abandonReason = reason }

// rawTable7 renders every engine key of table 7 in e's store, versions
// and intents alike ("a@intent", "a@ts"), with the value's first bytes.
func rawTable7(t *testing.T, e *Engine) string {
	t.Helper()
	lower, upper := engineBounds(TableSpan(7))
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out []string
	for valid := it.First(); valid; valid = it.Next() {
		uk, ts, ok := enginekey.DecodeVersion(it.Key())
		if !ok {
			continue
		}
		at := "v"
		if isIntentTimestamp(ts) {
			at = fmt.Sprintf("intent%d", ts.Logical)
		}
		out = append(out, fmt.Sprintf("%s@%s", uk[len(TablePrefix(7)):], at))
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, " ")
}

// TestIntentsReplicated: on a replicated engine a batch's flushed intents,
// their resolution at the commit, their removal by RollbackTo and by
// RollbackIntents, and the lock table's removal of one intent
// (LocalBatch.CommitShared) all go through the replicator, so a replica
// that applies only what Replicate carried holds exactly the serving
// engine's rows and intents at every step; the intents carry no commit
// timestamp, the resolution the commit's.
func TestIntentsReplicated(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{NoSync: true, GCTTL: -1})
	defer e.Close()
	replica := openMem(t, NewMemFS(), Options{NoSync: true, GCTTL: -1})
	defer replica.Close()
	r := &replayReplicator{e: e, replica: replica}
	if err := e.SetReplicator(r); err != nil {
		t.Fatal(err)
	}
	same := func(step string) string {
		t.Helper()
		got, want := rawTable7(t, replica), rawTable7(t, e)
		if got != want {
			t.Fatalf("%s: the replica holds %q, the serving engine %q", step, got, want)
		}
		return got
	}
	k := func(s string) []byte { return append(TablePrefix(7), s...) }
	mustCommit(t, e, func(b *Batch) {
		b.Set(k("a"), []byte("a0"))
		b.Set(k("c"), []byte("c0"))
	})
	owner := IntentOwner{ID: [TxnIDLen]byte{4, 2}, Anchor: k("a")}
	noop := func(*LocalBatch, []Span, [][]byte) error { return nil }

	b := e.NewBatch()
	defer func() { b.Close() }()
	if !b.CanFlushIntents() {
		t.Fatal("a replicated engine's batch cannot flush intents")
	}
	b.Set(k("a"), []byte("a1"))
	b.Delete(k("c"))
	if err := b.FlushIntents(owner, noop); err != nil {
		t.Fatal(err)
	}
	if got, want := same("after the flush"), "a@intent0 a@v c@intent0 c@v"; got != want {
		t.Fatalf("after the flush: %q, want %q", got, want)
	}
	if r.intentCalls != 1 || r.intentWithTS {
		t.Fatalf("the flush: %d Replicate calls with intents (with a commit timestamp: %v), want 1 without", r.intentCalls, r.intentWithTS)
	}
	if got, want := intentRows(t, b), "a=a1"; got != want {
		t.Fatalf("the batch shows %q, want %q", got, want)
	}
	if got, want := intentRows(t, replica), "a=a0 c=c0"; got != want {
		t.Fatalf("the replica's readers see %q, want %q", got, want)
	}
	sp, err := e.NewBatchCopy(b) // a savepoint
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	b.Set(k("b"), []byte("b1"))
	if err := b.FlushIntents(owner, noop); err != nil {
		t.Fatal(err)
	}
	same("after the second flush")
	nb, err := e.RollbackTo(b, sp)
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	b = nb
	if got, want := same("after ROLLBACK TO"), "a@intent0 a@v c@intent0 c@v"; got != want {
		t.Fatalf("after ROLLBACK TO: %q, want %q", got, want)
	}
	b.Set(k("d"), []byte("d1"))
	b.SetIntentCommit(IntentCommit{
		Flush:     noop,
		Committed: func(*LocalBatch, hlc.Timestamp, []Span) error { return nil },
		Last:      func(*LocalBatch) error { return nil },
	})
	var at hlc.Timestamp
	b.OnCommitted(func(ts hlc.Timestamp) { at = ts })
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if r.intentCalls != 3 || r.intentWithTS {
		// The flushes of a, b and the commit's own of d; none carries a
		// commit timestamp (the resolution does, and writes no intent).
		t.Fatalf("%d Replicate calls with intents (with a commit timestamp: %v), want 3 without", r.intentCalls, r.intentWithTS)
	}
	if got, want := same("after the commit"), "a@v a@v c@v c@v d@v"; got != want {
		t.Fatalf("after the commit: %q, want %q", got, want)
	}
	if got, want := intentRows(t, replica.At(at)), "a=a1 d=d1"; got != want {
		t.Fatalf("the replica at the commit: %q, want %q", got, want)
	}
	if got, want := intentRows(t, replica.At(at.Prev())), "a=a0 c=c0"; got != want {
		t.Fatalf("the replica below the commit: %q, want %q", got, want)
	}

	// ROLLBACK: the intents go from every replica.
	b2 := e.NewBatch()
	defer b2.Close()
	b2.Set(k("e"), []byte("e1"))
	if err := b2.FlushIntents(IntentOwner{ID: [TxnIDLen]byte{7}, Anchor: k("e")}, noop); err != nil {
		t.Fatal(err)
	}
	if got := same("after the rollback's flush"); !strings.Contains(got, "e@intent") {
		t.Fatalf("no intent of e: %q", got)
	}
	if err := b2.RollbackIntents(nil); err != nil {
		t.Fatal(err)
	}
	if got := same("after ROLLBACK"); strings.Contains(got, "intent") {
		t.Fatalf("intents left after ROLLBACK: %q", got)
	}

	// The lock table removes a dead transaction's intent through
	// CommitShared: from every replica too.
	b3 := e.NewBatch()
	defer b3.Close()
	b3.Set(k("f"), []byte("f1"))
	if err := b3.FlushIntents(IntentOwner{ID: [TxnIDLen]byte{8}, Anchor: k("f")}, noop); err != nil {
		t.Fatal(err)
	}
	lb := e.NewLocalBatch()
	defer lb.Close()
	lower, _ := engineBounds(Span{Start: k("f")})
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: lower})
	if err != nil {
		t.Fatal(err)
	}
	if !it.First() {
		t.Fatal("no intent of f")
	}
	if err := lb.Delete(append([]byte(nil), it.Key()...), nil); err != nil {
		t.Fatal(err)
	}
	it.Close()
	if err := lb.CommitShared(); err != nil {
		t.Fatal(err)
	}
	if got := same("after the lock table's removal"); strings.Contains(got, "intent") {
		t.Fatalf("intents left: %q", got)
	}
}

// TestIntentsReplicatedOutcomeUnknown: a commit whose record went to the
// replicator without a definite answer keeps its intents (RollbackIntents
// refuses to remove them) and tells the replicator to stop serving, so
// that the next serving node settles it from the record.
func TestIntentsReplicatedOutcomeUnknown(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{NoSync: true, GCTTL: -1})
	defer e.Close()
	replica := openMem(t, NewMemFS(), Options{NoSync: true, GCTTL: -1})
	defer replica.Close()
	r := &replayReplicator{e: e, replica: replica}
	if err := e.SetReplicator(r); err != nil {
		t.Fatal(err)
	}
	k := func(s string) []byte { return append(TablePrefix(7), s...) }
	noop := func(*LocalBatch, []Span, [][]byte) error { return nil }
	b := e.NewBatch()
	defer b.Close()
	b.Set(k("a"), []byte("a1"))
	if err := b.FlushIntents(IntentOwner{ID: [TxnIDLen]byte{3}, Anchor: k("a")}, noop); err != nil {
		t.Fatal(err)
	}
	b.SetIntentCommit(IntentCommit{
		Flush: noop,
		Committed: func(w *LocalBatch, _ hlc.Timestamp, _ []Span) error {
			r.fail = fmt.Errorf("proposal timed out: %w", ErrOutcomeUnknown)
			return w.Set(bareKey([]byte{0x01, 'r'}), []byte("committed"), nil)
		},
	})
	if err := b.Commit(); !errors.Is(err, ErrOutcomeUnknown) {
		t.Fatalf("commit: %v, want the outcome unknown", err)
	}
	if r.abandonReason == nil {
		t.Fatal("the replicator was not told to stop serving")
	}
	r.fail = nil
	if err := b.RollbackIntents(nil); err == nil {
		t.Fatal("RollbackIntents removed the intents of a commit whose outcome is unknown")
	}
	if got := rawTable7(t, replica); got != "a@intent0" {
		t.Fatalf("the replica holds %q, want the intent kept", got)
	}
}

// TestRecoveryHold: a replicated engine whose store holds a transaction
// record closes no timestamp until its recovery ends the hold.
func TestRecoveryHold(t *testing.T) {
	fs := NewMemFS()
	e := openMem(t, fs, Options{NoSync: true, GCTTL: -1})
	defer e.Close()
	lb := e.NewLocalOp()
	if err := lb.Set(bareKey([]byte{0x03, LocalTxnRecord, 'a', 1}), []byte("rec"), nil); err != nil {
		t.Fatal(err)
	}
	if err := lb.CommitNoSync(); err != nil {
		t.Fatal(err)
	}
	lb.Close()
	if err := e.SetReplicator(&loopReplicator{e: e}); err != nil {
		t.Fatal(err)
	}
	if ts, err := e.ClosableTimestamp(0); err != nil || !ts.IsEmpty() {
		t.Fatalf("closable with a record left: %v %v, want nothing", ts, err)
	}
	e.EndRecoveryHold()
	if ts, err := e.ClosableTimestamp(0); err != nil || ts.IsEmpty() {
		t.Fatalf("closable after the recovery: %v %v", ts, err)
	}
}

// TestIntentsReplicatedResolveAfterTakeover: a commit whose record is
// COMMITTED but whose resolution failed (its only chunk never landed: the
// caller's last hook failed) fails with IntentResolveError and stops the
// node serving; the replica,
// serving next with a replicator of its own, resolves the intents at the
// commit timestamp from what it holds (what Manager.Recover does with a
// COMMITTED record), and both stores then hold the same versions.
func TestIntentsReplicatedResolveAfterTakeover(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{NoSync: true, GCTTL: -1})
	defer e.Close()
	replica := openMem(t, NewMemFS(), Options{NoSync: true, GCTTL: -1})
	defer replica.Close()
	r := &replayReplicator{e: e, replica: replica}
	if err := e.SetReplicator(r); err != nil {
		t.Fatal(err)
	}
	k := func(s string) []byte { return append(TablePrefix(7), s...) }
	noop := func(*LocalBatch, []Span, [][]byte) error { return nil }
	owner := IntentOwner{ID: [TxnIDLen]byte{5}, Anchor: k("a")}
	b := e.NewBatch()
	defer b.Close()
	b.Set(k("a"), []byte("a1"))
	b.Set(k("b"), []byte("b1"))
	if err := b.FlushIntents(owner, noop); err != nil {
		t.Fatal(err)
	}
	var commitTS hlc.Timestamp
	var spans []Span
	b.SetIntentCommit(IntentCommit{
		Flush: noop,
		Committed: func(w *LocalBatch, ts hlc.Timestamp, sp []Span) error {
			commitTS, spans = ts, sp
			return nil
		},
		Last: func(*LocalBatch) error {
			return errors.New("the first resolution chunk did not apply")
		},
	})
	var re *IntentResolveError
	if err := b.Commit(); !errors.As(err, &re) {
		t.Fatalf("commit: %v, want an IntentResolveError", err)
	}
	if r.abandonReason == nil {
		t.Fatal("the replicator was not told to stop serving")
	}
	if got := rawTable7(t, replica); got != "a@intent0 b@intent0" {
		t.Fatalf("the replica holds %q, want the intents", got)
	}
	// The replica serves next.
	r2 := &replayReplicator{e: replica, replica: e}
	if err := replica.SetReplicator(r2); err != nil {
		t.Fatal(err)
	}
	if _, err := replica.ResolveIntents(owner.ID, spans, commitTS, true, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := rawTable7(t, replica), "a@v b@v"; got != want || rawTable7(t, e) != want {
		t.Fatalf("after the recovery: the replica %q, the old serving node %q, want %q", got, rawTable7(t, e), want)
	}
	if got, want := intentRows(t, replica.At(commitTS)), "a=a1 b=b1"; got != want {
		t.Fatalf("at the commit timestamp: %q, want %q", got, want)
	}
}
