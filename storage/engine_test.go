package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

func openMem(t *testing.T, fs FS, opts Options) *Engine {
	t.Helper()
	opts.FS = fs
	if opts.Logger == nil {
		opts.Logger = quietLogger{}
	}
	e, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func mustCommit(t *testing.T, e *Engine, ops func(b *Batch)) {
	t.Helper()
	b := e.NewBatch()
	defer b.Close()
	ops(b)
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
}

// scan renders the keys and values of span as "k=v k=v", forwards or, if
// reverse, backwards.
func scan(t *testing.T, r Reader, span Span, reverse bool) string {
	t.Helper()
	it, err := r.NewIter(span)
	if err != nil {
		t.Fatal(err)
	}
	var kvs []string
	if reverse {
		for ok := it.Last(); ok; ok = it.Prev() {
			kvs = append(kvs, string(it.Key())+"="+string(it.Value()))
		}
	} else {
		for ok := it.First(); ok; ok = it.Next() {
			kvs = append(kvs, string(it.Key())+"="+string(it.Value()))
		}
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(kvs, " ")
}

func getString(t *testing.T, r Reader, key string) string {
	t.Helper()
	v, ok, err := r.Get([]byte(key))
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return "<absent>"
	}
	return string(v)
}

func set(t *testing.T, b *Batch, kvs ...string) {
	t.Helper()
	for i := 0; i < len(kvs); i += 2 {
		if err := b.Set([]byte(kvs[i]), []byte(kvs[i+1])); err != nil {
			t.Fatal(err)
		}
	}
}

func span(start, end string) Span {
	s := Span{Start: []byte(start)}
	if end != "" {
		s.End = []byte(end)
	}
	return s
}

func TestBatchReadYourWrites(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{})
	defer e.Close()
	mustCommit(t, e, func(b *Batch) { set(t, b, "a", "1", "b", "2", "c", "3", "e", "5", "f", "6", "g", "7") })

	b := e.NewBatch()
	defer b.Close()
	set(t, b, "b", "20", "d", "4")
	if err := b.Delete([]byte("c")); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteRange(span("e", "g")); err != nil {
		t.Fatal(err)
	}
	set(t, b, "f", "60") // Written after the range deletion: visible.

	all := Span{}
	if got, want := scan(t, b, all, false), "a=1 b=20 d=4 f=60 g=7"; got != want {
		t.Errorf("batch scan = %q, want %q", got, want)
	}
	if got, want := scan(t, b, all, true), "g=7 f=60 d=4 b=20 a=1"; got != want {
		t.Errorf("batch reverse scan = %q, want %q", got, want)
	}
	for k, want := range map[string]string{"a": "1", "b": "20", "c": "<absent>", "d": "4", "e": "<absent>", "f": "60"} {
		if got := getString(t, b, k); got != want {
			t.Errorf("batch Get(%s) = %s, want %s", k, got, want)
		}
	}
	// Nothing leaks to the engine before Commit.
	if got, want := scan(t, e, all, false), "a=1 b=2 c=3 e=5 f=6 g=7"; got != want {
		t.Errorf("engine scan before commit = %q, want %q", got, want)
	}
	if b.Empty() || b.Count() != 5 || b.Len() == 0 {
		t.Errorf("Empty, Count, Len = %v, %d, %d", b.Empty(), b.Count(), b.Len())
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, want := scan(t, e, all, false), "a=1 b=20 d=4 f=60 g=7"; got != want {
		t.Errorf("engine scan after commit = %q, want %q", got, want)
	}
}

// TestBatchIterSeesWritesBeforeNewIter pins down Pebble's rule for batch
// iterators: they see the batch as of NewIter.
func TestBatchIterSeesWritesBeforeNewIter(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{})
	defer e.Close()
	b := e.NewBatch()
	defer b.Close()
	set(t, b, "a", "1")
	it, err := b.NewIter(Span{})
	if err != nil {
		t.Fatal(err)
	}
	set(t, b, "b", "2")
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("iterator saw %d keys, want 1", n)
	}
	if got := scan(t, b, Span{}, false); got != "a=1 b=2" {
		t.Errorf("new iterator sees %q", got)
	}
}

func TestBatchLifecycle(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{})
	defer e.Close()

	b := e.NewBatch()
	if !b.Empty() || b.Count() != 0 {
		t.Error("new batch is not empty")
	}
	set(t, b, "a", "1")
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"Commit":      b.Commit(),
		"Set":         b.Set([]byte("x"), nil),
		"Delete":      b.Delete([]byte("x")),
		"DeleteRange": b.DeleteRange(span("a", "b")),
	} {
		if !errors.Is(err, ErrBatchCommitted) {
			t.Errorf("%s after Commit: %v, want ErrBatchCommitted", name, err)
		}
	}
	if _, _, err := b.Get([]byte("a")); !errors.Is(err, ErrBatchCommitted) {
		t.Errorf("Get after Commit: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := b.Set([]byte("x"), nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Set after Close: %v, want ErrClosed", err)
	}
	if _, err := b.NewIter(Span{}); !errors.Is(err, ErrClosed) {
		t.Errorf("NewIter after Close: %v, want ErrClosed", err)
	}
	if !b.Empty() || b.Len() != 0 || b.Count() != 0 {
		t.Error("closed batch is not empty")
	}

	b = e.NewBatch()
	if err := b.Set(nil, []byte("v")); !errors.Is(err, ErrEmptyKey) {
		t.Errorf("Set of the empty key: %v, want ErrEmptyKey", err)
	}
	if err := b.Delete([]byte{}); !errors.Is(err, ErrEmptyKey) {
		t.Errorf("Delete of the empty key: %v, want ErrEmptyKey", err)
	}
	if err := b.DeleteRange(Span{End: []byte{0x00}}); err != nil || !b.Empty() {
		t.Errorf("DeleteRange [/Min, 0x00): %v, Empty %v", err, b.Empty())
	}
	b.Close()

	// An abandoned batch leaves no trace.
	b = e.NewBatch()
	set(t, b, "z", "26")
	b.Close()
	if got := getString(t, e, "z"); got != "<absent>" {
		t.Errorf("closed uncommitted batch wrote z=%s", got)
	}
	// An empty value is found, and is not nil.
	mustCommit(t, e, func(b *Batch) { set(t, b, "empty", "") })
	if v, ok, err := e.Get([]byte("empty")); err != nil || !ok || v == nil || len(v) != 0 {
		t.Errorf("Get(empty) = %q, %v, %v", v, ok, err)
	}
}

func TestGetReturnsCopy(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{})
	defer e.Close()
	mustCommit(t, e, func(b *Batch) { set(t, b, "k", "value") })
	v, _, _ := e.Get([]byte("k"))
	v[0] = 'X'
	if got := getString(t, e, "k"); got != "value" {
		t.Errorf("modifying Get's result changed the stored value to %q", got)
	}
}

func TestCommitPersistsAcrossReopen(t *testing.T) {
	for _, noSync := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoSync=%v", noSync), func(t *testing.T) {
			dir := t.TempDir()
			opts := Options{NoSync: noSync, Logger: quietLogger{}}
			e, err := Open(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			mustCommit(t, e, func(b *Batch) {
				set(t, b, "a", "1", "b", "2")
				if err := b.DeleteRange(span("b", "c")); err != nil {
					t.Fatal(err)
				}
			})
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			if err := e.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			if e, err = Open(dir, opts); err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			if got := scan(t, e, Span{}, false); got != "a=1" {
				t.Errorf("after reopen: %q", got)
			}
		})
	}
}

// TestCommitSurvivesCrash checks that Commit syncs: a crash right after it
// (a clone of the filesystem keeping only synced data) keeps the write. With
// NoSync it may be lost, and on this filesystem it is, which shows the
// option reaches Pebble.
func TestCommitSurvivesCrash(t *testing.T) {
	for _, noSync := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoSync=%v", noSync), func(t *testing.T) {
			fs := vfs.NewCrashableMem()
			e := openMem(t, fs, Options{NoSync: noSync})
			defer e.Close()
			mustCommit(t, e, func(b *Batch) { set(t, b, "k", "v") })

			crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
			e2 := openMem(t, crashed, Options{})
			defer e2.Close()
			want := "v"
			if noSync {
				want = "<absent>"
			}
			if got := getString(t, e2, "k"); got != want {
				t.Errorf("after crash: k = %s, want %s", got, want)
			}
		})
	}
}

func TestSnapshotIsolation(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{})
	defer e.Close()
	mustCommit(t, e, func(b *Batch) { set(t, b, "a", "1", "b", "2", "c", "3") })

	s := e.NewSnapshot()
	defer s.Close()
	mustCommit(t, e, func(b *Batch) {
		set(t, b, "a", "10", "d", "4")
		if err := b.Delete([]byte("b")); err != nil {
			t.Fatal(err)
		}
		if err := b.DeleteRange(span("c", "d")); err != nil {
			t.Fatal(err)
		}
	})
	if err := e.Flush(); err != nil { // The snapshot must survive a flush too.
		t.Fatal(err)
	}
	if got, want := scan(t, s, Span{}, false), "a=1 b=2 c=3"; got != want {
		t.Errorf("snapshot scan = %q, want %q", got, want)
	}
	if got := getString(t, s, "a"); got != "1" {
		t.Errorf("snapshot Get(a) = %s", got)
	}
	if got := getString(t, s, "d"); got != "<absent>" {
		t.Errorf("snapshot Get(d) = %s", got)
	}
	if got, want := scan(t, e, Span{}, false), "a=10 d=4"; got != want {
		t.Errorf("engine scan = %q, want %q", got, want)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, _, err := s.Get([]byte("a")); !errors.Is(err, ErrClosed) {
		t.Errorf("Get after Close: %v", err)
	}
}

func TestIteratorBounds(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{})
	defer e.Close()
	mustCommit(t, e, func(b *Batch) {
		for c := 'a'; c <= 'h'; c++ {
			set(t, b, string(c), strings.ToUpper(string(c)))
		}
	})

	for _, tc := range []struct {
		span     Span
		fwd, rev string
	}{
		{span("c", "f"), "cde", "edc"},
		{span("", "c"), "ab", "ba"},
		{span("f", ""), "fgh", "hgf"},
		{Span{}, "abcdefgh", "hgfedcba"},
		{span("c", "c"), "", ""},
		{span("bb", "dd"), "cd", "dc"},
		{span("x", "z"), "", ""},
	} {
		keys := func(reverse bool) string {
			return strings.Map(func(r rune) rune {
				if r >= 'a' && r <= 'z' {
					return r
				}
				return -1
			}, strings.ReplaceAll(scan(t, e, tc.span, reverse), "=", "0"))
		}
		if got := keys(false); got != tc.fwd {
			t.Errorf("%s forward: %q, want %q", tc.span, got, tc.fwd)
		}
		if got := keys(true); got != tc.rev {
			t.Errorf("%s reverse: %q, want %q", tc.span, got, tc.rev)
		}
	}

	it, err := e.NewIter(span("c", "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	for _, tc := range []struct {
		op, key string
		want    string // "" for invalid.
	}{
		{"SeekGE", "a", "c"}, // Clamped to Start.
		{"SeekGE", "d", "d"},
		{"SeekGE", "dd", "e"},
		{"SeekGE", "f", ""},
		{"SeekGE", "z", ""},
		{"SeekLT", "z", "e"}, // Clamped to End.
		{"SeekLT", "e", "d"},
		{"SeekLT", "c", ""},
	} {
		var ok bool
		if tc.op == "SeekGE" {
			ok = it.SeekGE([]byte(tc.key))
		} else {
			ok = it.SeekLT([]byte(tc.key))
		}
		got := ""
		if ok {
			got = string(it.Key())
			if string(it.Value()) != strings.ToUpper(got) {
				t.Errorf("value at %s is %s", got, it.Value())
			}
		}
		if got != tc.want || ok != it.Valid() {
			t.Errorf("%s(%s) = %q (valid %v), want %q", tc.op, tc.key, got, it.Valid(), tc.want)
		}
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if err := it.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	if _, err := e.NewIter(span("d", "c")); !errors.Is(err, ErrInvertedSpan) {
		t.Errorf("inverted span: %v, want ErrInvertedSpan", err)
	}
}

func TestDeleteRange(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{})
	defer e.Close()
	load := func() {
		mustCommit(t, e, func(b *Batch) {
			for _, id := range []uint64{1, 2, 3} {
				for k := range int64(5) {
					if err := b.Set(AppendInt64(TablePrefix(id), k), []byte{byte(id)}); err != nil {
						t.Fatal(err)
					}
				}
			}
		})
	}
	count := func(s Span) int {
		it, err := e.NewIter(s)
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		n := 0
		for ok := it.First(); ok; ok = it.Next() {
			n++
		}
		return n
	}
	load()
	if err := e.Flush(); err != nil { // Range deletion over sstables and memtable alike.
		t.Fatal(err)
	}
	load()

	mustCommit(t, e, func(b *Batch) {
		if err := b.DeleteRange(TableSpan(2)); err != nil {
			t.Fatal(err)
		}
		// Rows 1..3 of table 3: the tuple (k) for k in [1, 4).
		lo, hi := AppendInt64(TablePrefix(3), 1), AppendInt64(TablePrefix(3), 4)
		if err := b.DeleteRange(Span{Start: lo, End: hi}); err != nil {
			t.Fatal(err)
		}
		if err := b.DeleteRange(span("x", "x")); err != nil {
			t.Errorf("empty span: %v", err)
		}
		if err := b.DeleteRange(span("x", "")); !errors.Is(err, ErrUnboundedSpan) {
			t.Errorf("unbounded span: %v, want ErrUnboundedSpan", err)
		}
		if err := b.DeleteRange(span("y", "x")); !errors.Is(err, ErrInvertedSpan) {
			t.Errorf("inverted span: %v, want ErrInvertedSpan", err)
		}
	})
	for id, want := range map[uint64]int{1: 5, 2: 0, 3: 2} {
		if got := count(TableSpan(id)); got != want {
			t.Errorf("table %d has %d rows, want %d", id, got, want)
		}
	}
}

func TestEstimateDiskUsageAndCompact(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{})
	defer e.Close()
	value := bytes.Repeat([]byte("v"), 1000)
	for _, id := range []uint64{1, 2} {
		mustCommit(t, e, func(b *Batch) {
			for k := range uint64(1000) {
				if err := b.Set(AppendUint64(TablePrefix(id), k), value); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	usage := func(s Span) uint64 {
		n, err := e.EstimateDiskUsage(s)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	t1, t2, all := usage(TableSpan(1)), usage(TableSpan(2)), usage(Span{})
	if t1 == 0 || t2 == 0 || all < t1 || all < t2 {
		t.Fatalf("usage: table 1 %d, table 2 %d, all %d", t1, t2, all)
	}
	if n := usage(TableSpan(3)); n > t1/10 {
		t.Errorf("usage of empty table 3: %d", n)
	}

	mustCommit(t, e, func(b *Batch) {
		if err := b.DeleteRange(TableSpan(1)); err != nil {
			t.Fatal(err)
		}
	})
	if err := e.Compact(context.Background(), Span{}); err != nil {
		t.Fatal(err)
	}
	if after := usage(TableSpan(1)); after >= t1/10 {
		t.Errorf("table 1 uses %d bytes after delete and compaction, %d before", after, t1)
	}
	if m := e.Metrics(); m.Compact.Count == 0 {
		t.Errorf("metrics report no compaction: %s", m)
	}
	if err := e.Compact(context.Background(), TableSpan(9)); err != nil {
		t.Errorf("compacting an empty span: %v", err)
	}
}

// TestConcurrentReadersAndWriters runs writers that each commit pairs of keys
// atomically, and readers that check through snapshots and iterators that
// they never see half a pair. It is meant for go test -race.
func TestConcurrentReadersAndWriters(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{NoSync: true, MemTableSizeBytes: 256 << 10})
	defer e.Close()
	const writers, readers, commits = 4, 4, 200
	pair := func(w, i int) (string, string) {
		k := fmt.Sprintf("w%d/%04d", w, i)
		return k + "/a", k + "/b"
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	errs := make(chan error, writers+readers)
	for w := range writers {
		wg.Go(func() {
			for i := range commits {
				b := e.NewBatch()
				ka, kb := pair(w, i)
				v := []byte(fmt.Sprint(i))
				_ = b.Set([]byte(ka), v)
				_ = b.Set([]byte(kb), v)
				if i >= 10 { // Retire the pair written 10 commits ago, atomically.
					pa, _ := pair(w, i-10)
					_ = b.DeleteRange(PrefixSpan([]byte(strings.TrimSuffix(pa, "a"))))
				}
				if err := b.Commit(); err != nil {
					errs <- err
				}
				b.Close()
			}
		})
	}
	var rg sync.WaitGroup
	for range readers {
		rg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				s := e.NewSnapshot()
				it, err := s.NewIter(Span{})
				if err != nil {
					errs <- err
					s.Close()
					return
				}
				var prevKey, prevVal string
				for ok := it.First(); ok; ok = it.Next() {
					k, v := string(it.Key()), string(it.Value())
					if strings.HasSuffix(k, "/b") {
						if prevKey != strings.TrimSuffix(k, "b")+"a" || prevVal != v {
							errs <- fmt.Errorf("saw %s=%s after %s=%s", k, v, prevKey, prevVal)
						}
					} else if _, ok, err := s.Get([]byte(strings.TrimSuffix(k, "a") + "b")); err != nil || !ok {
						errs <- fmt.Errorf("snapshot has %s but not its pair (%v)", k, err)
					}
					prevKey, prevVal = k, v
				}
				if err := errors.Join(it.Close(), s.Close()); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(done)
	rg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Each writer keeps its last 10 pairs.
	var keys []string
	it, _ := e.NewIter(Span{})
	for ok := it.First(); ok; ok = it.Next() {
		keys = append(keys, string(it.Key()))
	}
	it.Close()
	if len(keys) != writers*10*2 || !slices.IsSorted(keys) {
		t.Errorf("final keys: %d, sorted %v", len(keys), slices.IsSorted(keys))
	}
}

func TestEngineClose(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{})
	it, err := e.NewIter(Span{})
	if err != nil {
		t.Fatal(err)
	}
	// Closing with an open iterator is a leak Pebble reports.
	if err := e.Close(); err == nil {
		t.Error("Close with an open iterator succeeded")
	}
	_ = it.Close()
	if err := e.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestRefusesOldFormat: a data directory written before versioned storage
// (Pebble's default comparer) is refused with a message that says so.
func TestRefusesOldFormat(t *testing.T) {
	fs := NewMemFS()
	db, err := pebble.Open("data", &pebble.Options{FS: fs, Merger: counterMerger, Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Set([]byte("\x02row"), []byte("v"), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = Open("data", Options{FS: fs, Logger: quietLogger{}})
	if !errors.Is(err, ErrOldFormat) || !strings.Contains(err.Error(), "without versioned storage") {
		t.Fatalf("Open of an old-format directory: %v, want ErrOldFormat", err)
	}
}
