package storage

import (
	"encoding/binary"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/pivotdb/pivotdb/storage/hlc"
)

func pointKey(i int) []byte { return binary.BigEndian.AppendUint64(TablePrefix(1), uint64(i)) }

// readPoint reads key through a new PointReader of the view at a new read
// timestamp, as a statement does.
func readPoint(t *testing.T, e *Engine, key []byte) (string, bool) {
	t.Helper()
	ts, err := e.ReadTimestamp()
	if err != nil {
		t.Fatal(err)
	}
	return readPointAt(t, e, ts, key)
}

func readPointAt(t *testing.T, e *Engine, ts hlc.Timestamp, key []byte) (string, bool) {
	t.Helper()
	pr, err := e.At(ts).NewPointReader()
	if err != nil {
		t.Fatal(err)
	}
	v, ok, err := pr.GetNoCopy(key)
	if err != nil {
		t.Fatal(err)
	}
	s := string(v)
	if err := pr.Close(); err != nil {
		t.Fatal(err)
	}
	return s, ok
}

// TestPointIterReuseSeesLaterWrites: a point reader borrows the iterator an
// earlier one gave back while nothing was written, and never once a write of
// any kind landed after it was made: a later read sees every commit made
// after the iterator's previous use.
func TestPointIterReuseSeesLaterWrites(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{IdleFlushTick: -1})
	defer e.Close()
	made := func() int64 { return e.points.made.Load() }
	expect := func(what string, key []byte, want string, wantOK bool, wantMade int64) {
		t.Helper()
		v, ok := readPoint(t, e, key)
		if ok != wantOK || v != want {
			t.Fatalf("%s: read %q, %v; want %q, %v", what, v, ok, want, wantOK)
		}
		if got := made(); got != wantMade {
			t.Fatalf("%s: %d iterators made, want %d", what, got, wantMade)
		}
	}
	expect("first read", pointKey(1), "", false, 1)
	expect("no write since", pointKey(1), "", false, 1) // reused
	mustCommit(t, e, func(b *Batch) { must(t, b.Set(pointKey(1), []byte("a"))) })
	expect("after a commit", pointKey(1), "a", true, 2)
	expect("reused again", pointKey(1), "a", true, 2)

	// A write in flight (begun, maybe landed, not yet counted as
	// finished) makes the kept iterator stale: a reader may already have
	// seen it land through another path (a lock record gone), so it must
	// not get a view from before. Once it finishes the old view stays
	// stale.
	e.points.writing()
	expect("a write in flight", pointKey(1), "a", true, 3)
	expect("still in flight", pointKey(1), "a", true, 4)
	e.points.wrote()
	expect("the write finished", pointKey(1), "a", true, 5)
	expect("reused after it", pointKey(1), "a", true, 5)

	// Two readers open at once get two iterators; both go back.
	p1, _ := e.At(MaxTimestamp).NewPointReader()
	p2, _ := e.At(MaxTimestamp).NewPointReader()
	for _, p := range []*PointReader{p1, p2} {
		if v, ok, err := p.Get(pointKey(1)); err != nil || !ok || string(v) != "a" {
			t.Fatalf("concurrent reader: %q, %v, %v", v, ok, err)
		}
	}
	must(t, p1.Close())
	must(t, p2.Close())
	if made() != 6 {
		t.Fatalf("%d iterators made, want 6", made())
	}
	expect("pool of two", pointKey(1), "a", true, 6)

	// A range deletion in a batch without versioned writes (a dropped
	// table) is not a registered commit, and is counted all the same.
	mustCommit(t, e, func(b *Batch) { must(t, b.DeleteRange(TableSpan(1))) })
	expect("after a range deletion", pointKey(1), "", false, 7)

	// Engine.Get, View.Get and Batch.Get of an empty batch borrow too.
	mustCommit(t, e, func(b *Batch) { must(t, b.Set(pointKey(2), []byte("b"))) })
	before := made()
	for i := range 3 {
		if v, ok, err := e.Get(pointKey(2)); err != nil || !ok || string(v) != "b" {
			t.Fatalf("Engine.Get: %q, %v, %v", v, ok, err)
		}
		b := e.NewBatch()
		if v, ok, err := b.Get(pointKey(2)); err != nil || !ok || string(v) != "b" {
			t.Fatalf("Batch.Get: %q, %v, %v", v, ok, err)
		}
		// A batch with writes reads through itself, not a kept iterator.
		must(t, b.Set(pointKey(3), []byte("c")))
		if v, ok, err := b.Get(pointKey(3)); err != nil || !ok || string(v) != "c" {
			t.Fatalf("Batch.Get of its own write: %q, %v, %v", v, ok, err)
		}
		must(t, b.Close())
		if got := made() - before; got != 1 {
			t.Fatalf("round %d: %d iterators made, want 1", i, got)
		}
	}

	// A flush changes the store's layout: the kept iterator would read
	// the old memtable, so it is not lent again.
	must(t, e.Flush())
	expect("after a flush", pointKey(2), "b", true, made()+1)

	// The sweeper closes kept iterators that went stale.
	mustCommit(t, e, func(b *Batch) { must(t, b.Set(pointKey(4), []byte("d"))) })
	e.points.dropStale()
	e.points.mu.Lock()
	n := len(e.points.free)
	e.points.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d stale iterators kept after a sweep", n)
	}

	// Once others may write into Pebble, nothing is reused.
	e.PebbleForReplication()
	m := made()
	expect("raw writers", pointKey(4), "d", true, m+1)
	expect("raw writers again", pointKey(4), "d", true, m+2)
}

// TestPointIterReuseRandomized compares point reads through borrowed
// iterators with a model of every committed state, over random commits
// (sets, deletes, range deletions), flushes, compactions and readers held
// open across them, at the latest timestamp and at earlier ones.
func TestPointIterReuseRandomized(t *testing.T) {
	r := newRand(t)
	e := openMem(t, NewMemFS(), Options{IdleFlushTick: -1, MemTableSizeBytes: 64 << 10})
	defer func() { e.Close() }()
	const keys = 40
	type state struct {
		ts hlc.Timestamp
		m  map[int]string
	}
	cur := map[int]string{}
	var past []state // read timestamps taken after each commit, with the state then
	var open []*PointReader
	check := func(step int, pr *PointReader, m map[int]string) {
		t.Helper()
		for range 1 + r.IntN(4) {
			k := r.IntN(keys)
			v, ok, err := pr.GetNoCopy(pointKey(k))
			want, wantOK := m[k]
			if err != nil || ok != wantOK || string(v) != want {
				t.Fatalf("step %d: key %d = %q, %v, %v; want %q, %v", step, k, v, ok, err, want, wantOK)
			}
		}
	}
	steps := 2000
	if raceEnabled || testing.Short() {
		steps = 500
	}
	for step := range steps {
		switch op := r.IntN(100); {
		case op < 30:
			b := e.NewBatch()
			for range 1 + r.IntN(4) {
				k := r.IntN(keys)
				if r.IntN(4) == 0 {
					must(t, b.Delete(pointKey(k)))
					delete(cur, k)
				} else {
					v := fmt.Sprint(step)
					must(t, b.Set(pointKey(k), []byte(v)))
					cur[k] = v
				}
			}
			must(t, b.Commit())
			must(t, b.Close())
			ts, err := e.ReadTimestamp()
			must(t, err)
			past = append(past, state{ts, maps.Clone(cur)})
		case op < 33:
			// Range deletions remove every version: earlier states
			// cannot be read any more.
			lo := r.IntN(keys)
			hi := lo + 1 + r.IntN(keys-lo)
			mustCommit(t, e, func(b *Batch) { must(t, b.DeleteRange(Span{Start: pointKey(lo), End: pointKey(hi)})) })
			for k := lo; k < hi; k++ {
				delete(cur, k)
			}
			past = nil
		case op < 36:
			must(t, e.Flush())
		case op < 38:
			must(t, e.Compact(t.Context(), Span{}))
		case op < 70:
			ts, err := e.ReadTimestamp()
			must(t, err)
			pr, err := e.At(ts).NewPointReader()
			must(t, err)
			check(step, pr, cur)
			if r.IntN(4) == 0 && len(open) < 4 {
				// Held open across later steps, it keeps its view.
				open = append(open, pr)
				past = append(past, state{ts, maps.Clone(cur)})
			} else {
				must(t, pr.Close())
			}
		case op < 80:
			if len(past) > 0 {
				s := past[r.IntN(len(past))]
				pr, err := e.At(s.ts).NewPointReader()
				must(t, err)
				check(step, pr, s.m)
				must(t, pr.Close())
			}
		case op < 90:
			if len(open) > 0 {
				i := r.IntN(len(open))
				must(t, open[i].Close())
				open = append(open[:i], open[i+1:]...)
			}
		default:
			// Batch.Get over an empty batch at the latest state.
			b := e.NewBatch()
			ts, err := e.ReadTimestamp()
			must(t, err)
			b.SetReadTimestamp(ts)
			k := r.IntN(keys)
			v, ok, err := b.Get(pointKey(k))
			want, wantOK := cur[k]
			if err != nil || ok != wantOK || string(v) != want {
				t.Fatalf("step %d: Batch.Get(%d) = %q, %v, %v; want %q, %v", step, k, v, ok, err, want, wantOK)
			}
			must(t, b.Close())
		}
	}
	for _, pr := range open {
		must(t, pr.Close())
	}
	if e.points.made.Load() >= int64(steps) {
		t.Fatalf("%d iterators made in %d steps: none reused?", e.points.made.Load(), steps)
	}
}

// TestPointIterReuseConcurrent: writers and readers at once (run it with
// -race). Each worker commits increasing values to its own key and must then
// read back its latest value (its commit returned before the read's
// timestamp was taken), and never sees another's key go back in time.
func TestPointIterReuseConcurrent(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{IdleFlushTick: -1, MemTableSizeBytes: 64 << 10})
	defer e.Close()
	const workers, rounds = 4, 300
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			last := make([]int, workers)
			for i := 1; i <= rounds; i++ {
				if i%3 == 0 { // reads outnumber writes, so iterators get reused
					b := e.NewBatch()
					if err := b.Set(pointKey(w), binary.BigEndian.AppendUint64(nil, uint64(i))); err != nil {
						errs <- err
						return
					}
					err := b.Commit()
					b.Close()
					if err != nil {
						errs <- err
						return
					}
					last[w] = i
				}
				ts, err := e.ReadTimestamp()
				if err != nil {
					errs <- err
					return
				}
				pr, err := e.At(ts).NewPointReader()
				if err != nil {
					errs <- err
					return
				}
				for o := range workers {
					v, ok, err := pr.GetNoCopy(pointKey(o))
					if err != nil {
						errs <- err
						return
					}
					got := 0
					if ok {
						got = int(binary.BigEndian.Uint64(v))
					}
					if o == w && got != last[w] || got < last[o] {
						errs <- fmt.Errorf("worker %d round %d: key %d = %d, had %d", w, i, o, got, last[o])
						return
					}
					last[o] = got
				}
				if err := pr.Close(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestEveryPebbleWriteCounted: a kept iterator is lent only while no write
// landed since it was made (pointiter.go), so every write storage makes into
// Pebble must be counted. It looks through storage's sources for writes that
// bypass commitPebble (or ingest's count).
func TestEveryPebbleWriteCounted(t *testing.T) {
	write := regexp.MustCompile(`\.Commit\((pebble\.|opts|[a-z.]*writeOpts)|db\.(Ingest\w*|Apply|Set|Delete\w*|Merge|SingleDelete|Excise|LogData)\(`)
	allowed := map[string]bool{
		"pointiter.go: return b.Commit(opts)":            true, // commitPebble itself
		"ingest.go: err := e.db.Ingest(ctx, paths)":      true, // counted on the lines around it
		"sync.go: return e.db.LogData(nil, pebble.Sync)": true, // a WAL sync, no data
	}
	files, err := filepath.Glob("*.go")
	must(t, err)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		must(t, err)
		for i, line := range strings.Split(string(src), "\n") {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "//") || !write.MatchString(line) {
				continue
			}
			if !allowed[f+": "+line] {
				t.Errorf("%s:%d: a write into Pebble not counted for point-read iterator reuse (use commitPebble): %s", f, i+1, line)
			}
		}
	}
}

// BenchmarkPointIterReuse reads one key per PointReader, as a point SELECT
// does (a new read timestamp's view each time), from a 100,000-row table
// flushed to sstables, with the engine's kept iterators ("kept") and with
// reuse turned off ("fresh", as before pointiter.go); "batch-get" is the
// Batch.Get of an UPSERT's old row on an empty batch. Compare cpu-ns/op:
//
//	go test -run '^$' -bench BenchmarkPointIterReuse -benchmem -count 6 ./storage
func BenchmarkPointIterReuse(b *testing.B) {
	e, err := Open(b.TempDir(), Options{NoSync: true, Logger: quietLogger{}, IdleFlushTick: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	const rows = 100000
	batch := e.NewBatch()
	value := make([]byte, 30)
	for i := range rows {
		if err := batch.Set(pointKey(i), value); err != nil {
			b.Fatal(err)
		}
	}
	if err := batch.Commit(); err != nil {
		b.Fatal(err)
	}
	batch.Close()
	if err := e.Flush(); err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"kept", "fresh"} {
		for _, what := range []string{"view", "batch-get"} {
			b.Run(mode+"/"+what, func(b *testing.B) {
				e.points.rawWriters.Store(mode == "fresh")
				defer e.points.rawWriters.Store(false)
				b.ReportAllocs()
				cpu0 := benchCPU()
				i := 0
				for b.Loop() {
					i++
					ts, err := e.ReadTimestamp()
					if err != nil {
						b.Fatal(err)
					}
					key := pointKey(i * 7919 % rows)
					if what == "batch-get" {
						bt := e.NewBatch()
						bt.SetReadTimestamp(ts)
						if _, ok, err := bt.Get(key); !ok || err != nil {
							b.Fatal(ok, err)
						}
						bt.Close()
						continue
					}
					pr, err := e.At(ts).NewPointReader()
					if err != nil {
						b.Fatal(err)
					}
					if _, ok, err := pr.GetNoCopy(key); !ok || err != nil {
						b.Fatal(ok, err)
					}
					pr.Close()
				}
				b.ReportMetric(float64(benchCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
