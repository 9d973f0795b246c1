package storage

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// scanAll renders the keys and values of the table area of r, forwards and
// backwards; the two must agree.
func scanAll(t *testing.T, r Reader) string {
	t.Helper()
	it, err := r.NewIter(TablesSpan())
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var fwd, back []string
	for ok := it.First(); ok; ok = it.Next() {
		fwd = append(fwd, fmt.Sprintf("%s=%s", it.Key()[9:], it.Value()))
	}
	for ok := it.Last(); ok; ok = it.Prev() {
		back = append([]string{fmt.Sprintf("%s=%s", it.Key()[9:], it.Value())}, back...)
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	f, b := strings.Join(fwd, " "), strings.Join(back, " ")
	if f != b {
		t.Fatalf("forward scan %q, backward %q", f, b)
	}
	return f
}

// TestVersionsReadAtTimestamp: row keys are versions at commit timestamps;
// a view at a timestamp shows the newest version at or below it (a
// tombstone hides the row), through iterators, Get and PointReader, and a
// batch shows its own writes over its read timestamp.
func TestVersionsReadAtTimestamp(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{})
	defer e.Close()
	k := func(s string) []byte { return append(TablePrefix(1), s...) }
	ts := func() *View {
		t.Helper()
		ts, err := e.ReadTimestamp()
		if err != nil {
			t.Fatal(err)
		}
		return e.At(ts)
	}
	v0 := ts()
	mustCommit(t, e, func(b *Batch) { must(t, b.Set(k("a"), []byte("1"))); must(t, b.Set(k("b"), []byte("1"))) })
	v1 := ts()
	mustCommit(t, e, func(b *Batch) { must(t, b.Set(k("a"), []byte("2"))); must(t, b.Delete(k("b"))) })
	v2 := ts()
	mustCommit(t, e, func(b *Batch) { must(t, b.Set(k("b"), []byte("3"))); must(t, b.Set(k("c"), []byte("3"))) })
	v3 := ts()
	for _, c := range []struct {
		r    Reader
		want string
	}{{v0, ""}, {v1, "a=1 b=1"}, {v2, "a=2"}, {v3, "a=2 b=3 c=3"}, {e, "a=2 b=3 c=3"}} {
		if got := scanAll(t, c.r); got != c.want {
			t.Errorf("scan: %q, want %q", got, c.want)
		}
	}
	if v, ok, err := v1.Get(k("b")); err != nil || !ok || string(v) != "1" {
		t.Errorf("Get b at v1: %q %v %v", v, ok, err)
	}
	if _, ok, err := v2.Get(k("b")); err != nil || ok {
		t.Errorf("Get b at v2: %v %v, want deleted", ok, err)
	}
	pr, _ := v3.NewPointReader()
	if v, ok, err := pr.Get(k("b")); err != nil || !ok || string(v) != "3" {
		t.Errorf("PointReader b at v3: %q %v %v", v, ok, err)
	}
	pr.Close()

	// A batch reading at v1 shows its own writes on top.
	b := e.NewBatch()
	defer b.Close()
	b.SetReadTimestamp(v1.Timestamp())
	must(t, b.Set(k("c"), []byte("own")))
	must(t, b.Delete(k("a")))
	if got := scanAll(t, b); got != "b=1 c=own" {
		t.Errorf("batch at v1: %q", got)
	}
	if got := scanAll(t, b.At(MaxTimestamp)); got != "b=3 c=own" {
		t.Errorf("batch at latest: %q", got)
	}
	// System keys stay bare and read as of the latest commit.
	mustCommit(t, e, func(b *Batch) { must(t, b.Set([]byte{SystemPrefix, 'x'}, []byte("s"))) })
	if v, ok, err := v0.Get([]byte{SystemPrefix, 'x'}); err != nil || !ok || string(v) != "s" {
		t.Errorf("system key at v0: %q %v %v", v, ok, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestReadTimestampSeesConcurrentCommitsWhole: commits of two keys that
// move one unit between them run while readers read the keys with two
// separate reads at one timestamp (as a statement reads two shards): every
// reader sees the sum unchanged. Without the commit tracker's wait a reader
// could take a timestamp above a commit whose batch has not landed yet.
func TestReadTimestampSeesConcurrentCommitsWhole(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{NoSync: true})
	defer e.Close()
	k := func(i int) []byte { return append(TablePrefix(1), byte(i)) }
	mustCommit(t, e, func(b *Batch) { must(t, b.Set(k(0), []byte{100})); must(t, b.Set(k(1), []byte{100})) })
	var stop atomic.Bool
	var wg sync.WaitGroup
	var mu sync.Mutex // writers serialise on the keys, as row locks do
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; !stop.Load(); n++ {
				mu.Lock()
				a, _, err := e.Get(k(0))
				if err != nil {
					t.Error(err)
				}
				c, _, _ := e.Get(k(1))
				d := byte(1)
				if n%2 == 0 {
					d = 255
				}
				b := e.NewBatch()
				_ = b.Set(k(0), []byte{a[0] + d})
				_ = b.Set(k(1), []byte{c[0] - d})
				if err := b.Commit(); err != nil {
					t.Error(err)
				}
				b.Close()
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < 2000; i++ {
		ts, err := e.ReadTimestamp()
		if err != nil {
			t.Fatal(err)
		}
		v := e.At(ts)
		a, _, _ := v.Get(k(0))
		c, _, _ := v.Get(k(1))
		if a[0]+c[0] != 200 {
			t.Fatalf("read %d: %d + %d", i, a[0], c[0])
		}
	}
	stop.Store(true)
	wg.Wait()
}

// rawVersions counts the engine keys Pebble holds in the table area.
func rawVersions(t *testing.T, e *Engine) int {
	t.Helper()
	lower, upper := engineBounds(TablesSpan())
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
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

// TestGCVersions: a pass at a threshold keeps what reads at or above it
// see (versions above it and the newest at or below it) and removes the
// rest; a key deleted at or below it goes entirely.
func TestGCVersions(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{NoSync: true})
	defer e.Close()
	k := func(s string) []byte { return append(TablePrefix(1), s...) }
	for i := 0; i < 3; i++ {
		mustCommit(t, e, func(b *Batch) { must(t, b.Set(k("a"), []byte{byte('0' + i)})); must(t, b.Set(k("b"), []byte("x"))) })
	}
	mustCommit(t, e, func(b *Batch) { must(t, b.Delete(k("b"))) })
	threshold, err := e.ReadTimestamp()
	if err != nil {
		t.Fatal(err)
	}
	mustCommit(t, e, func(b *Batch) { must(t, b.Set(k("a"), []byte("3"))) })
	if n := rawVersions(t, e); n != 8 {
		t.Fatalf("%d versions before GC, want 8", n)
	}
	st, err := e.GCVersions(context.Background(), TablesSpan(), threshold)
	if err != nil {
		t.Fatal(err)
	}
	// a: 3 (above), 2 (newest at or below) kept; 1, 0 go. b: all 4 go.
	if st.Deleted != 6 || rawVersions(t, e) != 2 {
		t.Fatalf("GC: %+v, %d versions left; want 6 deleted, 2 left", st, rawVersions(t, e))
	}
	if got := scanAll(t, e.At(threshold)); got != "a=2" {
		t.Errorf("at the threshold after GC: %q", got)
	}
	if got := scanAll(t, e); got != "a=3" {
		t.Errorf("latest after GC: %q", got)
	}
}
