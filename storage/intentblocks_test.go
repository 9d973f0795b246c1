package storage

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// resolvedRecorder is an IntentStats that records what resolution saw.
type resolvedRecorder struct{ got map[string]string }

func (r *resolvedRecorder) Resolved(k []byte, prevLive bool, prevLen int, live bool, newLen int) {
	if _, dup := r.got[string(k)]; dup {
		r.got[string(k)+" twice"] = ""
	}
	r.got[string(k)] = fmt.Sprintf("%v/%d -> %v/%d", prevLive, prevLen, live, newLen)
}

func (r *resolvedRecorder) Commit(_ *LocalBatch, commit func() error) error { return commit() }

// rawIntents counts the entries at intent timestamps in the engine,
// reading every block.
func rawIntents(t *testing.T, e *Engine) int {
	t.Helper()
	it, err := e.db.NewIter(&pebble.IterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if _, ts, ok := enginekey.DecodeVersion(it.Key()); ok && isIntentTimestamp(ts) {
			n++
		}
	}
	return n
}

// TestResolveSkipsBlocks: resolution that seeks past blocks without
// intents (intentblocks.go) resolves exactly what a full scan would, on
// random histories: a table with committed versions and deletes, another
// transaction's intents that must stay, and a transaction that writes a
// few keys (updates, deletes, inserts, some written in two flushes),
// with the table and the intents in the memtable, flushed, or compacted,
// and the tombstones of an earlier transaction's resolved intents in the
// sstables. Each commit must show the model's rows at its timestamp and
// the old ones below it, leave only the other transaction's intents, and
// report to IntentStats the committed version below each key (which a
// skipped block may hold).
func TestResolveSkipsBlocks(t *testing.T) {
	layouts := []string{"memtable", "flushed", "compacted", "intents-compacted", "after-resolved"}
	for seed := range uint64(3) {
		for _, layout := range layouts {
			t.Run(fmt.Sprintf("%s/seed=%d", layout, seed), func(t *testing.T) {
				resolveHistory(t, rand.New(rand.NewPCG(seed, 99)), layout)
			})
		}
	}
}

func resolveHistory(t *testing.T, r *rand.Rand, layout string) {
	e := openMem(t, NewMemFS(), Options{NoSync: true, IdleFlushTick: -1, GCTTL: -1})
	defer e.Close()
	const rows = 4000
	key := func(i int) []byte { return binary.BigEndian.AppendUint64(TablePrefix(7), uint64(i)) }
	val := func(i, round int) []byte { return fmt.Appendf(nil, "v%d.%d-%040d", i, round, i*round) }
	state := map[int][]byte{}
	for round := range 3 {
		mustCommit(t, e, func(b *Batch) {
			for i := 0; i < rows; i += 2 { // odd keys are left for inserts
				switch {
				case round > 0 && r.IntN(3) != 0:
				case round > 0 && r.IntN(6) == 0:
					must(t, b.Delete(key(i)))
					delete(state, i)
				default:
					must(t, b.Set(key(i), val(i, round)))
					state[i] = val(i, round)
				}
			}
		})
	}
	ctx := context.Background()
	compact := func() {
		must(t, e.Flush())
		must(t, e.Compact(ctx, TablesSpan()))
	}
	render := func(m map[int][]byte) string {
		var keys []int
		for i := range m {
			keys = append(keys, i)
		}
		slices.Sort(keys)
		var b strings.Builder
		for _, i := range keys {
			fmt.Fprintf(&b, "%d=%s ", i, m[i])
		}
		return b.String()
	}
	scan := func(v *View) string {
		var b strings.Builder
		must(t, Scan(v, TableSpan(7), func(k, v []byte) error {
			fmt.Fprintf(&b, "%d=%s ", binary.BigEndian.Uint64(k[len(TablePrefix(7)):]), v)
			return nil
		}))
		return b.String()
	}
	noop := func(*LocalBatch, []Span, [][]byte) error { return nil }
	// txn writes a few keys of the table as intents (writes: key -> value,
	// nil deletes), in two flushes, and commits them.
	txn := func(id byte, writes map[int][]byte, twice []int, commit bool) hlc.Timestamp {
		owner := IntentOwner{ID: [TxnIDLen]byte{id}, Anchor: key(0)}
		b := e.NewBatch()
		defer b.Close()
		for _, i := range twice {
			must(t, b.Set(key(i), []byte("first flush")))
		}
		if len(twice) > 0 {
			must(t, b.FlushIntents(owner, noop))
		}
		for i, v := range writes {
			if v == nil {
				must(t, b.Delete(key(i)))
			} else {
				must(t, b.Set(key(i), v))
			}
		}
		must(t, b.FlushIntents(owner, noop))
		if !commit {
			return hlc.Timestamp{}
		}
		switch layout {
		case "flushed", "after-resolved":
			must(t, e.Flush())
		case "intents-compacted":
			compact()
		}
		rec := &resolvedRecorder{got: map[string]string{}}
		b.SetIntentCommit(IntentCommit{Flush: noop,
			Committed: func(*LocalBatch, hlc.Timestamp, []Span) error { return nil }, Stats: rec})
		var at hlc.Timestamp
		b.OnCommitted(func(ts hlc.Timestamp) { at = ts })
		must(t, b.Commit())
		want := map[string]string{}
		for i, v := range writes {
			old, prevLive := state[i]
			want[string(key(i))] = fmt.Sprintf("%v/%d -> %v/%d", prevLive, len(old), v != nil, len(v))
		}
		if fmt.Sprint(rec.got) != fmt.Sprint(want) {
			t.Fatalf("IntentStats:\n got %v\nwant %v", rec.got, want)
		}
		return at
	}
	pick := func(n int, avoid map[int]bool) map[int][]byte {
		out := map[int][]byte{}
		for len(out) < n {
			i := r.IntN(rows + 100) // some past the last key
			if avoid[i] || out[i] != nil {
				continue
			}
			if r.IntN(4) == 0 {
				out[i] = nil
			} else {
				out[i] = val(i, 100+r.IntN(100))
			}
		}
		return out
	}
	if layout == "after-resolved" {
		// An earlier transaction's resolved intents leave tombstones of
		// intent keys in an sstable above the one holding the intents.
		w := pick(40, nil)
		txn(1, w, nil, true)
		apply(state, w)
		must(t, e.Flush())
	}
	if layout == "compacted" || layout == "intents-compacted" {
		compact()
	}
	// Another transaction's intents, which stay.
	other := pick(5, nil)
	avoid := map[int]bool{}
	for i := range other {
		avoid[i] = true
	}
	txn(2, other, nil, false)
	beforeWant := render(state)
	mine := pick(1+r.IntN(20), avoid)
	var twice []int
	for i := range mine {
		if r.IntN(3) == 0 {
			twice = append(twice, i)
		}
	}
	seeks := intentSeeks.Load()
	at := txn(3, mine, twice, true)
	apply(state, mine)
	if got, want := scan(e.At(at)), render(state); got != want {
		t.Fatalf("at the commit:\n got %s\nwant %s", got, want)
	}
	if got := scan(e.At(at.Prev())); got != beforeWant {
		t.Fatalf("below the commit:\n got %s\nwant %s", got, beforeWant)
	}
	if n := rawIntents(t, e); n != len(other) {
		t.Fatalf("%d intents left, want the other transaction's %d", n, len(other))
	}
	// Intents (pg_locks) reads only the blocks with intents.
	for id, want := range map[byte]int{1: 0, 2: len(other), 3: 0} {
		n := 0
		must(t, e.Intents([TxnIDLen]byte{id}, []Span{TableSpan(7)}, func([]byte) error { n++; return nil }))
		if n != want {
			t.Fatalf("Intents of transaction %d: %d, want %d", id, n, want)
		}
	}
	if intentSeeks.Load() == seeks {
		t.Fatal("the resolution never sought past keys without intents")
	}
}

func apply(state map[int][]byte, writes map[int][]byte) {
	for i, v := range writes {
		if v == nil {
			delete(state, i)
		} else {
			state[i] = v
		}
	}
}

// BenchmarkResolveSparse: the commit of a transaction that wrote 10 keys
// spread over a compacted 200,000-row table, whose resolution scans the
// span from the first key written to the last: "seek" skips the blocks
// without intents (intentblocks.go), "step" reads them all (the loop
// before). cpu-ns/op is one commit.
//
//	go test -run '^$' -bench BenchmarkResolveSparse ./storage
func BenchmarkResolveSparse(b *testing.B) {
	const rows = 200000
	key := func(i int) []byte { return binary.BigEndian.AppendUint64(TablePrefix(7), uint64(i)) }
	for _, mode := range []string{"seek", "step"} {
		b.Run(mode, func(b *testing.B) {
			if mode == "step" {
				old := intentSkipKeys
				intentSkipKeys = 1 << 30
				defer func() { intentSkipKeys = old }()
			}
			e, err := Open(b.TempDir(), Options{NoSync: true, Logger: quietLogger{}, GCTTL: -1, IdleFlushTick: -1})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			for start := 0; start < rows; start += 10000 {
				batch := e.NewBatch()
				for i := start; i < start+10000; i++ {
					if err := batch.Set(key(i), fmt.Appendf(nil, "value-%016d-%073d", i, i*7)); err != nil {
						b.Fatal(err)
					}
				}
				if err := batch.Commit(); err != nil {
					b.Fatal(err)
				}
				batch.Close()
			}
			if err := e.Flush(); err != nil {
				b.Fatal(err)
			}
			if err := e.Compact(context.Background(), TablesSpan()); err != nil {
				b.Fatal(err)
			}
			noop := func(*LocalBatch, []Span, [][]byte) error { return nil }
			r := rand.New(rand.NewPCG(1, 2))
			b.ResetTimer()
			cpu0 := benchCPU()
			defer func() { b.ReportMetric(float64(benchCPU()-cpu0)/float64(b.N), "cpu-ns/op") }()
			for n := 0; n < b.N; n++ {
				batch := e.NewBatch()
				for j := 0; j < 10; j++ {
					i := j*(rows/10) + r.IntN(rows/10)
					if err := batch.Set(key(i), []byte("new")); err != nil {
						b.Fatal(err)
					}
				}
				if err := batch.FlushIntents(IntentOwner{ID: [TxnIDLen]byte{byte(n), byte(n >> 8), 1}, Anchor: key(0)}, noop); err != nil {
					b.Fatal(err)
				}
				batch.SetIntentCommit(IntentCommit{Flush: noop, Committed: func(*LocalBatch, hlc.Timestamp, []Span) error { return nil }})
				if err := batch.Commit(); err != nil {
					b.Fatal(err)
				}
				batch.Close()
			}
		})
	}
}
