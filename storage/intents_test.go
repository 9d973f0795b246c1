package storage

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/storage/hlc"
)

// intentRows renders what r shows of table 7 (forward scan).
func intentRows(t *testing.T, r Reader) string {
	t.Helper()
	var out []string
	if err := Scan(r, TableSpan(7), func(k, v []byte) error {
		out = append(out, fmt.Sprintf("%s=%s", k[len(TablePrefix(7)):], v))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, " ")
}

// TestIntentsInBatch: the versioned writes FlushIntents moves to the
// store are read by the batch (and its copies made after the flush) only;
// LatestVersion ignores them; the system keys stay in the batch; the
// commit runs the caller's hooks in order and leaves versions at one
// timestamp and no intent.
func TestIntentsInBatch(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{NoSync: true})
	defer e.Close()
	k := func(s string) []byte { return append(TablePrefix(7), s...) }
	mustCommit(t, e, func(b *Batch) {
		b.Set(k("a"), []byte("a0"))
		b.Set(k("c"), []byte("c0"))
	})
	owner := IntentOwner{ID: [TxnIDLen]byte{1, 2, 3}, Anchor: k("a")}
	var log []string
	record := func(w *LocalBatch, spans []Span, flushed [][]byte) error {
		log = append(log, fmt.Sprintf("flush %d keys, %d spans", len(flushed), len(spans)))
		return nil
	}
	b := e.NewBatch()
	defer b.Close()
	b.Set(k("a"), []byte("a1"))
	b.Delete(k("c"))
	b.Set([]byte{0x01, 'x'}, []byte("system"))
	before, err := e.NewBatchCopy(b) // sees a1 and the delete from its own copy
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close()
	if err := b.FlushIntents(owner, record); err != nil {
		t.Fatal(err)
	}
	if b.Len() == 0 || !b.HasIntents() || b.Empty() {
		t.Fatalf("after the flush: len %d, intents %v, empty %v", b.Len(), b.HasIntents(), b.Empty())
	}
	b.Set(k("b"), []byte("b1"))
	if got, want := intentRows(t, b), "a=a1 b=b1"; got != want {
		t.Fatalf("the batch shows %q, want %q", got, want)
	}
	if got, want := intentRows(t, b.At(MaxTimestamp)), "a=a1 b=b1"; got != want {
		t.Fatalf("the batch at MaxTimestamp shows %q, want %q", got, want)
	}
	if got, want := intentRows(t, before), "a=a1"; got != want {
		t.Fatalf("a copy from before the flush shows %q, want %q", got, want)
	}
	if got, want := intentRows(t, e), "a=a0 c=c0"; got != want {
		t.Fatalf("the engine shows %q, want %q", got, want)
	}
	if v, ok, err := b.Get([]byte{0x01, 'x'}); err != nil || !ok || string(v) != "system" {
		t.Fatalf("the system key in the batch: %q %v %v", v, ok, err)
	}
	if _, ok, _ := e.Get([]byte{0x01, 'x'}); ok {
		t.Fatal("the flush wrote the batch's system key")
	}
	ts, ok, err := b.LatestVersion(k("a"))
	if err != nil || !ok || isIntentTimestamp(ts) {
		t.Fatalf("LatestVersion of a: %v %v %v, want the committed version", ts, ok, err)
	}
	b.SetIntentCommit(IntentCommit{
		Flush: record,
		Committed: func(w *LocalBatch, ts hlc.Timestamp, spans []Span) error {
			log = append(log, "committed")
			return nil
		},
		Last: func(w *LocalBatch) error {
			log = append(log, "last")
			return w.Set(bareKey([]byte{0x01, 'y'}), []byte("done"), nil)
		},
	})
	var at hlc.Timestamp
	b.OnCommitted(func(ts hlc.Timestamp) { at = ts; log = append(log, "on committed") })
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(log, ", "), "flush 2 keys, 1 spans, flush 1 keys, 1 spans, committed, last, on committed"; got != want {
		t.Fatalf("hooks: %s, want %s", got, want)
	}
	if got, want := intentRows(t, e.At(at)), "a=a1 b=b1"; got != want {
		t.Fatalf("at the commit timestamp: %q, want %q", got, want)
	}
	if got, want := intentRows(t, e.At(at.Prev())), "a=a0 c=c0"; got != want {
		t.Fatalf("below the commit timestamp: %q, want %q", got, want)
	}
	if v, ok, _ := e.Get([]byte{0x01, 'y'}); !ok || string(v) != "done" {
		t.Fatal("the last hook's write is missing")
	}
	n := 0
	if err := e.Intents(owner.ID, []Span{TableSpan(7)}, func([]byte) error { n++; return nil }); err != nil || n != 0 {
		t.Fatalf("%d intents left after the commit (%v)", n, err)
	}
}

// TestIntentsRollbackTo: intents flushed after a copy (a savepoint) go
// with RollbackTo, the ones before stay, and RollbackIntents removes all.
func TestIntentsRollbackTo(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{NoSync: true})
	defer e.Close()
	k := func(s string) []byte { return append(TablePrefix(7), s...) }
	owner := IntentOwner{ID: [TxnIDLen]byte{9}, Anchor: k("a")}
	noop := func(*LocalBatch, []Span, [][]byte) error { return nil }
	b := e.NewBatch()
	b.Set(k("a"), []byte("a1"))
	if err := b.FlushIntents(owner, noop); err != nil {
		t.Fatal(err)
	}
	sp, err := e.NewBatchCopy(b)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	b.Set(k("a"), []byte("a2"))
	b.Set(k("b"), []byte("b2"))
	if err := b.FlushIntents(owner, noop); err != nil {
		t.Fatal(err)
	}
	if got, want := intentRows(t, b), "a=a2 b=b2"; got != want {
		t.Fatalf("before: %q, want %q", got, want)
	}
	for i := range 2 {
		nb, err := e.RollbackTo(b, sp)
		if err != nil {
			t.Fatal(err)
		}
		b.Close()
		b = nb
		if got, want := intentRows(t, b), "a=a1"; got != want {
			t.Fatalf("after RollbackTo #%d: %q, want %q", i+1, got, want)
		}
		b.Set(k("c"), []byte("c3"))
		if err := b.FlushIntents(owner, noop); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.RollbackIntents(nil); err != nil {
		t.Fatal(err)
	}
	b.Close()
	n := 0
	if err := e.Intents(owner.ID, []Span{TableSpan(7)}, func([]byte) error { n++; return nil }); err != nil || n != 0 {
		t.Fatalf("%d intents left after RollbackIntents (%v)", n, err)
	}
}
