package storage

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// model is the oracle for the engine: a plain map, scanned by sorting.
type model map[string]string

// scan returns the sorted keys of m inside span.
func (m model) scan(s Span) []string {
	var keys []string
	for k := range m {
		if s.Contains([]byte(k)) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

func (m model) apply(ops []modelOp) {
	for _, op := range ops {
		switch op.kind {
		case "set":
			m[op.key] = op.value
		case "delete":
			delete(m, op.key)
		case "deleterange":
			for k := range m {
				if op.span.Contains([]byte(k)) {
					delete(m, k)
				}
			}
		}
	}
}

type modelOp struct {
	kind, key, value string
	span             Span
}

// TestEngineRandomized runs random batches, reads, iterator moves, snapshots,
// flushes, compactions and restarts against the model, comparing every
// result. Keys come from a tiny alphabet so that writes collide and spans
// cut through data.
func TestEngineRandomized(t *testing.T) {
	r := newRand(t)
	fs := NewMemFS()
	e := openMem(t, fs, Options{MemTableSizeBytes: 64 << 10})
	defer func() { e.Close() }()

	randKey := func() string {
		var sb strings.Builder
		for range 1 + r.IntN(3) {
			sb.WriteByte("abc\x00\xff"[r.IntN(5)])
		}
		return sb.String()
	}
	randSpan := func() Span {
		switch r.IntN(6) {
		case 0:
			return Span{}
		case 1:
			return Span{Start: []byte(randKey())}
		}
		a, b := randKey(), randKey()
		if a > b {
			a, b = b, a
		}
		return span(a, b+"\x00") // [a, b] as a half-open span.
	}

	committed := model{}
	type snap struct {
		s     *Snapshot
		state model
	}
	var snaps []snap

	var history []string
	defer func() {
		if t.Failed() {
			t.Logf("history: %s", strings.Join(history[max(0, len(history)-15):], " "))
		}
	}()
	// Pebble's invariant checks (on under -race) record a stack trace per
	// sstable reference, which makes long histories slow; shorter ones
	// still cover every operation many times.
	steps := 3000
	if raceEnabled || testing.Short() {
		steps = 800
	}
	for step := range steps {
		op := r.IntN(100)
		history = append(history, fmt.Sprintf("%d:%d", step, op))
		switch {
		case op < 50: // A batch of writes, read through while being built.
			b := e.NewBatch()
			var ops []modelOp
			for range 1 + r.IntN(8) {
				var mo modelOp
				switch r.IntN(10) {
				case 0:
					mo = modelOp{kind: "deleterange", span: randSpan()}
					if mo.span.End == nil {
						mo.span.End = []byte{0xff, 0xff, 0xff, 0xff}
					}
					if err := b.DeleteRange(mo.span); err != nil {
						t.Fatal(err)
					}
				case 1, 2:
					mo = modelOp{kind: "delete", key: randKey()}
					if err := b.Delete([]byte(mo.key)); err != nil {
						t.Fatal(err)
					}
				default:
					mo = modelOp{kind: "set", key: randKey(), value: fmt.Sprint(step)}
					if err := b.Set([]byte(mo.key), []byte(mo.value)); err != nil {
						t.Fatal(err)
					}
				}
				ops = append(ops, mo)
				view := maps.Clone(committed)
				view.apply(ops)
				checkReader(t, r, fmt.Sprintf("step %d batch", step), b, view, randSpan())
			}
			if r.IntN(4) > 0 {
				if err := b.Commit(); err != nil {
					t.Fatal(err)
				}
				committed.apply(ops)
				if got, want := scanKeys(t, e), committed.scan(Span{}); !slices.Equal(got, want) {
					t.Fatalf("step %d after commit of %v:\n got %q\nwant %q", step, ops, got, want)
				}
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
		case op < 75:
			checkReader(t, r, fmt.Sprintf("step %d engine", step), e, committed, randSpan())
		case op < 80:
			if len(snaps) < 3 {
				snaps = append(snaps, snap{e.NewSnapshot(), maps.Clone(committed)})
			}
		case op < 90:
			if len(snaps) > 0 {
				i := r.IntN(len(snaps))
				checkReader(t, r, fmt.Sprintf("step %d snapshot", step), snaps[i].s, snaps[i].state, randSpan())
				if r.IntN(3) == 0 {
					snaps[i].s.Close()
					snaps = slices.Delete(snaps, i, i+1)
				}
			}
		case op < 94:
			if err := e.Flush(); err != nil {
				t.Fatal(err)
			}
		case op < 97:
			if err := e.Compact(t.Context(), randSpan()); err != nil {
				t.Fatal(err)
			}
		default: // Restart.
			for _, s := range snaps {
				s.s.Close()
			}
			snaps = nil
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			e = openMem(t, fs, Options{MemTableSizeBytes: 64 << 10})
		}
	}
	for _, s := range snaps {
		s.s.Close()
	}
}

// checkReader compares r with the model: point reads of a few keys, a full
// forward and backward scan of span, and a random walk of iterator moves.
func checkReader(t *testing.T, rng *rand.Rand, what string, r Reader, m model, s Span) {
	t.Helper()
	for _, k := range append(m.scan(Span{})[:min(2, len(m))], "a", "b\x00") {
		v, ok, err := r.Get([]byte(k))
		want, wantOK := m[k]
		if err != nil || ok != wantOK || string(v) != want {
			t.Fatalf("%s: Get(%q) = %q, %v, %v; want %q, %v", what, k, v, ok, err, want, wantOK)
		}
	}

	keys := m.scan(s)
	it, err := r.NewIter(s)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var got []string
	for ok := it.First(); ok; ok = it.Next() {
		got = append(got, string(it.Key()))
	}
	if !slices.Equal(got, keys) {
		t.Fatalf("%s: scan %s = %q, want %q", what, s, got, keys)
	}
	got = got[:0]
	for ok := it.Last(); ok; ok = it.Prev() {
		got = append(got, string(it.Key()))
	}
	if slices.Reverse(got); !slices.Equal(got, keys) {
		t.Fatalf("%s: reverse scan %s = %q, want %q", what, s, got, keys)
	}

	// pos is the model's position in keys; -1 when not valid.
	pos := -1
	for range 20 {
		var op string
		var ok bool
		switch n := rng.IntN(6); {
		case n == 0:
			op, ok, pos = "First", it.First(), min(0, len(keys)-1)
			if len(keys) == 0 {
				pos = -1
			}
		case n == 1:
			op, ok, pos = "Last", it.Last(), len(keys)-1
		case n == 2:
			k := string(rng.Int32N(5)+'a') + string(rng.Int32N(5)+'a')
			op, ok = "SeekGE "+k, it.SeekGE([]byte(k))
			pos, _ = slices.BinarySearch(keys, k)
			if pos == len(keys) {
				pos = -1
			}
		case n == 3:
			k := string(rng.Int32N(5)+'a') + string(rng.Int32N(5)+'a')
			op, ok = "SeekLT "+k, it.SeekLT([]byte(k))
			i, _ := slices.BinarySearch(keys, k)
			pos = i - 1
		case pos < 0: // Next and Prev only from a valid position.
			continue
		case n == 4:
			op, ok, pos = "Next", it.Next(), pos+1
			if pos == len(keys) {
				pos = -1
			}
		default:
			op, ok, pos = "Prev", it.Prev(), pos-1
		}
		if ok != (pos >= 0) || ok != it.Valid() {
			t.Fatalf("%s: %s in %s: valid %v, model position %d of %q", what, op, s, ok, pos, keys)
		}
		if ok {
			if k, v := string(it.Key()), string(it.Value()); k != keys[pos] || v != m[k] {
				t.Fatalf("%s: %s in %s: at %q=%q, want %q=%q", what, op, s, k, v, keys[pos], m[keys[pos]])
			}
		}
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
}

func scanKeys(t *testing.T, r Reader) []string {
	it, _ := r.NewIter(Span{})
	defer it.Close()
	var ks []string
	for ok := it.First(); ok; ok = it.Next() {
		ks = append(ks, string(it.Key()))
	}
	return ks
}
