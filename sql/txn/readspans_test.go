package txn

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/storagetest"
)

func key(table uint64, s string) []byte { return append(storage.TablePrefix(table), s...) }

func spansString(spans []storage.Span) string {
	var b bytes.Buffer
	for i, s := range spans {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s.String())
	}
	return b.String()
}

// TestReadSpansCoalesce: spans come back sorted, overlapping and adjacent
// ones merged, a point read as [key, key+0x00); reads outside the table
// area are not recorded.
func TestReadSpansCoalesce(t *testing.T) {
	var r readSpans
	r.addSpan(storage.Span{Start: key(1, "m"), End: key(1, "p")})
	r.addKey(key(1, "b"))
	r.addSpan(storage.Span{Start: key(1, "c"), End: key(1, "f")})
	r.addSpan(storage.Span{Start: key(1, "e"), End: key(1, "h")})
	r.addKey(key(1, "b"))                                         // again
	r.addSpan(storage.Span{Start: key(1, "h"), End: key(1, "j")}) // adjacent
	r.addKey([]byte{storage.SystemPrefix, 'x'})
	r.addSpan(storage.Span{Start: key(2, "a"), End: nil}) // up to the end of the table area
	want := []storage.Span{
		{Start: key(1, "b"), End: append(key(1, "b"), 0)},
		{Start: key(1, "c"), End: key(1, "j")},
		{Start: key(1, "m"), End: key(1, "p")},
		{Start: key(2, "a"), End: []byte{storage.TableDataPrefix + 1}},
	}
	if got := r.list(); spansString(got) != spansString(want) {
		t.Fatalf("spans\n%s\nwant\n%s", spansString(got), spansString(want))
	}
	if r.condensed {
		t.Fatal("condensed below the limit")
	}
}

// TestReadSpansCondense: past the memory limit the spans are widened, per
// table first and then into one, so they stay within it, and every read
// recorded stays covered (a coarser span may fail more refreshes, never
// miss one).
func TestReadSpansCondense(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		tables, reads, limit int
	}{
		{tables: 3, reads: 500, limit: 2000},
		{tables: 40, reads: 2000, limit: 2000},
		{tables: 2, reads: 50, limit: 1 << 20},
	} {
		t.Run(fmt.Sprintf("tables=%d,limit=%d", c.tables, c.limit), func(t *testing.T) {
			r := readSpans{limit: c.limit}
			var read []storage.Span
			for i := 0; i < c.reads; i++ {
				k := key(uint64(rng.IntN(c.tables)+1), fmt.Sprintf("%06d", rng.IntN(100000)))
				if rng.IntN(2) == 0 {
					r.addKey(k)
					read = append(read, storage.Span{Start: k, End: append(bytes.Clone(k), 0)})
				} else {
					s := storage.Span{Start: k, End: append(bytes.Clone(k), 0xff)}
					r.addSpan(s)
					read = append(read, s)
				}
			}
			got := r.list()
			if c.limit < 1<<20 && (!r.condensed || r.bytes > c.limit) {
				t.Fatalf("condensed %v, %d bytes, limit %d", r.condensed, r.bytes, c.limit)
			}
			if c.limit == 1<<20 && (r.condensed || len(got) > c.reads) {
				t.Fatalf("condensed %v, %d spans of %d reads", r.condensed, len(got), c.reads)
			}
			n := 0
			for _, s := range got {
				n += spanBytes(s)
			}
			if n != r.bytes {
				t.Fatalf("%d bytes counted, %d held", r.bytes, n)
			}
			for i := 1; i < len(got); i++ {
				if bytes.Compare(got[i-1].End, got[i].Start) >= 0 {
					t.Fatalf("spans %s and %s overlap or touch", got[i-1], got[i])
				}
			}
			for _, s := range read {
				covered := false
				for _, g := range got {
					if bytes.Compare(g.Start, s.Start) <= 0 && bytes.Compare(s.End, g.End) <= 0 {
						covered = true
					}
				}
				if !covered {
					t.Fatalf("read %s not covered by %s", s, spansString(got))
				}
			}
		})
	}
}

func newTestManager(t *testing.T) *Manager {
	t.Helper()
	eng, err := storage.Open("db", storage.Options{FS: storage.NewMemFS(), NoSync: true, Logger: storagetest.QuietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	shards, err := partition.Load(eng, partition.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return NewManager(eng, shards)
}

// begin starts a transaction at level whose first statement reads now.
func begin(t *testing.T, m *Manager, level Isolation) *Txn {
	t.Helper()
	tx := m.Begin()
	tx.SetIsolation(level)
	ts, err := m.Engine().ReadTimestamp()
	if err != nil {
		t.Fatal(err)
	}
	tx.SetReadTimestamp(ts)
	tx.StartStatement()
	return tx
}

// put commits key=value in a transaction of its own.
func put(t *testing.T, m *Manager, k []byte, value string) {
	t.Helper()
	tx := begin(t, m, ReadCommitted)
	if err := tx.Batch().Set(k, []byte(value)); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func scan(t *testing.T, r storage.Reader, span storage.Span) {
	t.Helper()
	it, err := r.NewIter(span)
	if err != nil {
		t.Fatal(err)
	}
	for ok := it.First(); ok; ok = it.Next() {
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestSerializableRefresh: a SERIALIZABLE transaction that writes fails
// its commit with 40001, writing nothing, when something it read — by
// point read, PointReader, scan (a phantom too), the locked re-read of
// Get, a read view — was changed by a commit after its snapshot; writes
// elsewhere do not fail it, nor its own writes of what it read; a
// read-only one always commits; REPEATABLE READ does not refresh.
func TestSerializableRefresh(t *testing.T) {
	m := newTestManager(t)
	for _, k := range []string{"a", "c", "e"} {
		put(t, m, key(1, k), "0")
	}
	out := key(2, "out") // each transaction's own write
	type step func(t *testing.T, tx *Txn)
	get := func(k string) step {
		return func(t *testing.T, tx *Txn) {
			if _, _, err := tx.Reader().Get(key(1, k)); err != nil {
				t.Fatal(err)
			}
		}
	}
	point := func(k string) step {
		return func(t *testing.T, tx *Txn) {
			pr, err := tx.Reader().NewPointReader()
			if err != nil {
				t.Fatal(err)
			}
			defer pr.Close()
			if _, _, err := pr.Get(key(1, k)); err != nil {
				t.Fatal(err)
			}
		}
	}
	span := func(from, to string) step {
		return func(t *testing.T, tx *Txn) { scan(t, tx.Reader(), storage.Span{Start: key(1, from), End: key(1, to)}) }
	}
	latest := func(from, to string) step {
		return func(t *testing.T, tx *Txn) {
			scan(t, tx.LatestReader(), storage.Span{Start: key(1, from), End: key(1, to)})
		}
	}
	locked := func(k string) step {
		return func(t *testing.T, tx *Txn) {
			if _, _, err := tx.Get(key(1, k)); err != nil {
				t.Fatal(err)
			}
		}
	}
	view := func(from, to string) step {
		return func(t *testing.T, tx *Txn) {
			v, done, err := tx.NewReadView()
			if err != nil {
				t.Fatal(err)
			}
			defer done()
			scan(t, v, storage.Span{Start: key(1, from), End: key(1, to)})
		}
	}
	clean := func(from, to string) step {
		return func(t *testing.T, tx *Txn) {
			v, ok := tx.CleanView()
			if !ok {
				t.Fatal("no clean view before any write")
			}
			scan(t, v, storage.Span{Start: key(1, from), End: key(1, to)})
		}
	}
	for _, c := range []struct {
		name     string
		level    Isolation
		read     step
		other    string // the key another transaction writes after the snapshot
		readOnly bool
		fails    bool
	}{
		{"point read, overwritten", Serializable, get("a"), "a", false, true},
		{"point read, other key", Serializable, get("a"), "c", false, false},
		{"PointReader", Serializable, point("c"), "c", false, true},
		{"scan", Serializable, span("b", "d"), "c", false, true},
		{"phantom", Serializable, span("b", "d"), "b5", false, true},
		{"scan, outside", Serializable, span("b", "d"), "d", false, false},
		{"latest reader", Serializable, latest("a", "b"), "a", false, true},
		{"locked re-read", Serializable, locked("c"), "c", false, true},
		{"read view", Serializable, view("e", "f"), "e", false, true},
		{"clean view", Serializable, clean("a", "b"), "a", false, true},
		{"read only", Serializable, get("a"), "a", true, false},
		{"repeatable read", RepeatableRead, get("a"), "a", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tx := begin(t, m, c.level)
			c.read(t, tx)
			put(t, m, key(1, c.other), "1")
			if !c.readOnly {
				if err := tx.Batch().Set(out, []byte(c.name)); err != nil {
					t.Fatal(err)
				}
			}
			err := tx.Commit()
			var se *sqlerr.Error
			switch {
			case c.fails && (!errors.As(err, &se) || se.Code != sqlerr.SerializationFailure):
				t.Fatalf("commit: %v, want 40001", err)
			case c.fails && se.Message != "could not serialize access due to read/write dependencies among transactions":
				t.Fatalf("message %q", se.Message)
			case !c.fails && err != nil:
				t.Fatalf("commit: %v", err)
			}
			v, ok, err := m.Engine().Get(out)
			if err != nil {
				t.Fatal(err)
			}
			if wrote := ok && string(v) == c.name; wrote != (!c.fails && !c.readOnly) {
				t.Fatalf("own write landed: %v", wrote)
			}
		})
	}
}

// TestSerializableOwnWrite: a transaction reading a key and then writing
// it commits (its own version lands after the check).
func TestSerializableOwnWrite(t *testing.T) {
	m := newTestManager(t)
	put(t, m, key(1, "a"), "0")
	tx := begin(t, m, Serializable)
	if _, _, err := tx.Get(key(1, "a")); err != nil {
		t.Fatal(err)
	}
	scan(t, tx.Reader(), storage.TableSpan(1))
	if err := tx.Batch().Set(key(1, "a"), []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := tx.Batch().Set(key(1, "b"), []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := spansString(tx.ReadSpans()); got != spansString([]storage.Span{storage.TableSpan(1)}) {
		t.Fatalf("read spans %s", got)
	}
}
