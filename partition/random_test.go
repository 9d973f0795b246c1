package partition

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/storage"
)

// oracle is the model of one table: its rows in a plain map, scanned by
// sorting, and the pivots its map should have.
type oracle struct {
	rows   map[string][]byte
	pivots [][]byte
}

func (o *oracle) scan(span storage.Span) []string {
	var keys []string
	for k := range o.rows {
		if span.Contains([]byte(k)) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

func (o *oracle) count(span storage.Span) (rows, size int64) {
	for k, v := range o.rows {
		if span.Contains([]byte(k)) {
			rows++
			size += RowSize([]byte(k), len(v))
		}
	}
	return rows, size
}

var errSimulatedCrash = errors.New("simulated crash")

// TestRandomized applies random transactions (puts and deletes, committed or
// abandoned, some across two tables), scans, splits at random keys, merges
// of random neighbours, reshards, size-based and median splits, recounts,
// simulated crashes between a split's swap and its landing, and restarts to
// a table, and after every step compares the data, the pivots, the shard ids
// and every shard's row_count, data_size_bytes and writes counter with a
// model, and checks the manager's invariants.
//
// Shards:
//
//	()       (p1)          (p2, 'x')        ...          <end>
//	|  #id    |    #id       |     #id        |     #id    |
//
// Keys are (a Int64, b Utf8) with a in [-3, 40) and b from a small
// alphabet, either possibly NULL, so that writes collide and pivots fall
// both between and inside groups of rows sharing a.
func TestRandomized(t *testing.T) {
	r := newRand(t)
	e := newEnv(t)
	const table, other = 7, 9
	e.create(table, key(table, 10), key(table, 20, "m"))
	e.create(other)
	o := &oracle{rows: map[string][]byte{}, pivots: e.m.Map(table).Pivots()}
	otherRows := map[string][]byte{}
	everUsed := map[ShardID]bool{}
	for _, s := range e.m.Map(table).Shards() {
		everUsed[s.ID] = true
	}
	writes := map[ShardID]int64{} // Model of the in-memory writes counters.
	pendingOK := false            // A simulated crash left pending shards.

	randA := func() any {
		if r.IntN(20) == 0 {
			return nil
		}
		return r.IntN(43) - 3
	}
	randB := func() any {
		if r.IntN(20) == 0 {
			return nil
		}
		const alphabet = "abxyz"
		n := 1 + r.IntN(3)
		var sb strings.Builder
		for range n {
			sb.WriteByte(alphabet[r.IntN(len(alphabet))])
		}
		return sb.String()
	}
	randKey := func(id uint64) []byte { return key(id, randA(), randB()) }
	randPivot := func() []byte {
		if r.IntN(2) == 0 {
			return key(table, randA())
		}
		return key(table, randA(), randB())
	}
	randSpan := func() storage.Span {
		var s storage.Span
		if r.IntN(5) > 0 {
			s.Start = randPivot()
		}
		if r.IntN(5) > 0 {
			s.End = randPivot()
		}
		if s.End != nil && bytes.Compare(s.Start, s.End) > 0 {
			s.Start, s.End = s.End, s.Start
		}
		return s
	}

	checkAll := func(step int, what string) {
		t.Helper()
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("step %d (%s): %s\n%s", step, what, fmt.Sprintf(format, args...), mapString(e.m.Map(table)))
		}
		if err := e.m.CheckInvariants(); err != nil {
			fail("%v", err)
		}
		sm := e.m.Map(table)
		if !slices.EqualFunc(sm.Pivots(), o.pivots, bytes.Equal) {
			var want []string
			for _, p := range o.pivots {
				want = append(want, fmtKey(table, p))
			}
			fail("pivots differ from the model %v", want)
		}
		st, err := e.m.Stats(sm)
		if err != nil {
			fail("%v", err)
		}
		for k, s := range sm.Shards() {
			if st[k].Pending {
				if !pendingOK {
					fail("shard %d is pending", k)
				}
				continue
			}
			rows, size := o.count(s.Span)
			if st[k].Rows != rows || st[k].Bytes != size {
				fail("shard %d #%d: %d rows, %d bytes; model %d rows, %d bytes", k, s.ID, st[k].Rows, st[k].Bytes, rows, size)
			}
			if s.Writes() != writes[s.ID] {
				fail("shard %d #%d: %d writes, model %d", k, s.ID, s.Writes(), writes[s.ID])
			}
		}
		// The other table is never resharded: one shard, always exact.
		ost, err := e.m.Stats(e.m.Map(other))
		if err != nil {
			fail("%v", err)
		}
		ob := &oracle{rows: otherRows}
		if rows, size := ob.count(storage.TableSpan(other)); ost[0].Rows != rows || ost[0].Bytes != size {
			fail("table %d: %+v, model %d rows, %d bytes", other, ost[0], rows, size)
		}
	}

	// afterReshape updates the model after a successful reshape from old to
	// the current map: shards with an unchanged span keep their id and
	// counters, the others have ids never used before.
	afterReshape := func(step int, old *ShardMap, pivots [][]byte) {
		t.Helper()
		o.pivots = pivots
		cur := e.m.Map(table)
		byStart := map[string]Shard{}
		for _, s := range old.Shards() {
			byStart[string(s.Span.Start)] = s
		}
		for _, s := range cur.Shards() {
			if prev, ok := byStart[string(s.Span.Start)]; ok && prev.Span.Equal(s.Span) {
				if prev.ID != s.ID {
					t.Fatalf("step %d: unchanged shard %s changed id %d -> %d", step, s.Span, prev.ID, s.ID)
				}
				continue
			}
			if everUsed[s.ID] {
				t.Fatalf("step %d: shard id %d reused", step, s.ID)
			}
			everUsed[s.ID] = true
		}
		pendingOK = false // Every reshape recounts pending shards.
	}

	steps := 1000
	if testing.Short() {
		steps = 300
	}
	for step := range steps {
		var what string
		switch op := r.IntN(100); {
		case op < 45:
			what = "write"
			n := 1 + r.IntN(8)
			var keys, values [][]byte
			var okeys, ovalues [][]byte
			for range n {
				k := randKey(table)
				if len(keys) > 0 && r.IntN(4) == 0 {
					k = keys[r.IntN(len(keys))] // The same key twice in one transaction.
				}
				var v []byte
				if r.IntN(3) > 0 {
					v = bytes.Repeat([]byte{'v'}, r.IntN(40))
				}
				keys, values = append(keys, k), append(values, v)
			}
			if r.IntN(5) == 0 {
				for range 1 + r.IntN(3) {
					okeys = append(okeys, randKey(other))
					ovalues = append(ovalues, bytes.Repeat([]byte{'o'}, 1+r.IntN(10)))
				}
			}
			b := e.eng.NewBatch()
			var w Writes
			apply := func(id uint64, keys, values [][]byte) {
				for i, k := range keys {
					old, existed, err := b.Get(k)
					if err != nil {
						t.Fatal(err)
					}
					if values[i] != nil {
						if err := b.Set(k, values[i]); err != nil {
							t.Fatal(err)
						}
						w.RecordPut(id, k, len(values[i]), existed, len(old))
					} else {
						if err := b.Delete(k); err != nil {
							t.Fatal(err)
						}
						w.RecordDelete(id, k, existed, len(old))
					}
				}
			}
			apply(table, keys, values)
			apply(other, okeys, ovalues)
			if r.IntN(8) == 0 {
				what = "abandoned write"
				b.Close()
				break
			}
			sm := e.m.Map(table)
			if err := e.m.Commit(b, &w); err != nil {
				t.Fatal(err)
			}
			b.Close()
			for i, k := range keys {
				writes[sm.Shard(sm.Find(k)).ID]++
				if values[i] != nil {
					o.rows[string(k)] = values[i]
				} else {
					delete(o.rows, string(k))
				}
			}
			for i, k := range okeys {
				otherRows[string(k)] = ovalues[i]
			}

		case op < 60:
			what = "scan"
			span := randSpan()
			sm := e.m.Map(table)
			var got []string
			for _, k := range sm.Overlapping(span) {
				s := sm.Shard(k)
				s.AddReads(1)
				it, err := e.eng.NewIter(span.Intersect(s.Span))
				if err != nil {
					t.Fatal(err)
				}
				for ok := it.First(); ok; ok = it.Next() {
					if sm.Find(it.Key()) != k {
						t.Fatalf("step %d: key %s read from shard %d, Find says %d", step, fmtKey(table, it.Key()), k, sm.Find(it.Key()))
					}
					if !bytes.Equal(it.Value(), o.rows[string(it.Key())]) {
						t.Fatalf("step %d: value of %s differs", step, fmtKey(table, it.Key()))
					}
					got = append(got, string(it.Key()))
				}
				if err := it.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if want := o.scan(span.Intersect(storage.TableSpan(table))); !slices.Equal(got, want) {
				t.Fatalf("step %d: scan of %s: %d keys, model %d", step, span, len(got), len(want))
			}

		case op < 70:
			what = "split"
			var at [][]byte
			for range 1 + r.IntN(3) {
				at = append(at, randPivot())
			}
			if r.IntN(4) == 0 {
				at = append(at, o.pivots[r.IntN(len(o.pivots))]) // An existing pivot is ignored.
			}
			old := e.m.Map(table)
			if r.IntN(6) == 0 {
				what = "split, crash before landing"
				e.m.knobs.beforeLanding = func(uint64) error { return errSimulatedCrash }
			}
			_, err := e.m.Split(table, at)
			e.m.knobs.beforeLanding = nil
			want := append(slices.Clone(o.pivots), at...)
			slices.SortFunc(want, bytes.Compare)
			want = slices.CompactFunc(want, bytes.Equal)
			switch {
			case errors.Is(err, errSimulatedCrash):
				afterReshape(step, old, want)
				pendingOK = true
				if r.IntN(2) == 0 {
					what += ", restart"
					e.reopen()
					writes = map[ShardID]int64{}
					pendingOK = false
				}
			case err != nil:
				t.Fatalf("step %d: split: %v", step, err)
			default:
				afterReshape(step, old, want)
			}

		case op < 78:
			what = "merge"
			old := e.m.Map(table)
			if old.Len() < 2 {
				break
			}
			k := r.IntN(old.Len() - 1)
			n := 2 + r.IntN(min(3, old.Len()-k-1))
			if _, err := e.m.Merge(table, old.Shard(k).ID, n); err != nil {
				t.Fatalf("step %d: merge: %v", step, err)
			}
			afterReshape(step, old, slices.Delete(slices.Clone(o.pivots), k+1, k+n))

		case op < 82:
			what = "reshard"
			old := e.m.Map(table)
			var splits [][]byte
			for _, p := range o.pivots[1:] {
				if r.IntN(2) == 0 {
					splits = append(splits, p) // Keep some pivots: their shards may survive.
				}
			}
			for range r.IntN(5) {
				splits = append(splits, randPivot())
			}
			slices.SortFunc(splits, bytes.Compare)
			splits = slices.CompactFunc(splits, bytes.Equal)
			if _, err := e.m.Reshard(table, splits); err != nil {
				t.Fatalf("step %d: reshard: %v", step, err)
			}
			afterReshape(step, old, append([][]byte{storage.TablePrefix(table)}, splits...))

		case op < 85:
			what = "split by size"
			n := 1 + r.IntN(8)
			pivots, err := e.m.SplitBySize(table, n)
			if err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			if len(pivots) > n-1 {
				t.Fatalf("step %d: %d pivots for %d shards", step, len(pivots), n)
			}
			old := e.m.Map(table)
			if _, err := e.m.Reshard(table, pivots); err != nil {
				t.Fatalf("step %d: reshard by size: %v", step, err)
			}
			afterReshape(step, old, append([][]byte{storage.TablePrefix(table)}, pivots...))

		case op < 90:
			what = "median split"
			old := e.m.Map(table)
			k := r.IntN(old.Len())
			s := old.Shard(k)
			if st, _ := e.m.Stats(old); st[k].Pending {
				break // Its size is not known exactly until repaired.
			}
			p, ok, err := e.m.MedianSplitKey(table, s.ID)
			if err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			_, total := o.count(s.Span)
			if !ok {
				// Legitimate only if no gap leaves 25% on each side.
				keys := o.scan(s.Span)
				var left int64
				for i, key := range keys {
					if i > 0 && left*4 >= total && (total-left)*4 >= total {
						t.Fatalf("step %d: no median for shard %d, but the gap before %s qualifies", step, k, fmtKey(table, []byte(key)))
					}
					left += RowSize([]byte(key), len(o.rows[key]))
				}
				break
			}
			_, left := o.count(storage.Span{Start: s.Span.Start, End: p})
			if left*4 < total || (total-left)*4 < total {
				t.Fatalf("step %d: median %s of shard %d leaves %d of %d bytes on the left", step, fmtKey(table, p), k, left, total)
			}
			if _, err := e.m.Split(table, [][]byte{p}); err != nil {
				t.Fatalf("step %d: median split: %v", step, err)
			}
			want := append(slices.Clone(o.pivots), p)
			slices.SortFunc(want, bytes.Compare)
			afterReshape(step, old, want)

		case op < 93:
			what = "recount"
			old := e.m.Map(table)
			if _, err := e.m.Recount(table); err != nil {
				t.Fatalf("step %d: recount: %v", step, err)
			}
			afterReshape(step, old, o.pivots)

		default:
			what = "restart"
			before := e.m.Map(table)
			e.reopen()
			writes = map[ShardID]int64{}
			pendingOK = false
			after := e.m.Map(table)
			if !slices.EqualFunc(before.Shards(), after.Shards(), func(a, b Shard) bool { return a.ID == b.ID && a.Span.Equal(b.Span) }) {
				t.Fatalf("step %d: map changed across restart:\n%s\n%s", step, before, after)
			}
		}
		checkAll(step, what)
	}
	t.Logf("%d shards at the end, %d ids used, %d rows", e.m.Map(table).Len(), len(everUsed), len(o.rows))
}
