package partition

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/pivotdb/pivotdb/storage"
)

func TestMidKey(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"a", "b"}, {"a", "c"}, {"a", "a\x01"}, {"a\xff", "b"}, {"", "\x01"},
		{"abc", "abd"}, {"x\x00\x00", "x\x00\x01"}, {"\x01\x02", "\x01\x02\x00\x05"},
	} {
		mid, ok := midKey([]byte(tc.a), []byte(tc.b))
		if !ok || bytes.Compare(mid, []byte(tc.a)) <= 0 || bytes.Compare(mid, []byte(tc.b)) >= 0 {
			t.Errorf("midKey(%q, %q) = %q, %v", tc.a, tc.b, mid, ok)
		}
	}
	if mid, ok := midKey([]byte("a"), []byte("a\x00")); ok {
		t.Errorf("midKey(a, a\\x00) = %q", mid)
	}
}

// bytesBefore counts the logical bytes of the rows of span below key.
func bytesBefore(t *testing.T, e *env, span storage.Span, key []byte) int64 {
	t.Helper()
	_, size, err := countSpan(e.eng, storage.Span{Start: span.Start, End: key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return size
}

// TestApproxMedianSplitKey compares the estimated split key with the exact
// one on flushed data: uniform keys (a one-column pivot near the middle)
// and one big group of rows sharing a (a two-column pivot inside it).
func TestApproxMedianSplitKey(t *testing.T) {
	r := newRand(t)
	for _, skewed := range []bool{false, true} {
		t.Run(fmt.Sprintf("skewed=%v", skewed), func(t *testing.T) {
			e := newEnv(t)
			const table = 7
			e.create(table)
			if skewed {
				fillValues(e, table, 0, 1000, 100, "r", r)
				for lo := 0; lo < 30000; lo += 1000 {
					var keys, values [][]byte
					for i := lo; i < lo+1000; i++ {
						v := make([]byte, 100)
						for j := range v {
							v[j] = byte(r.Uint32())
						}
						keys = append(keys, key(table, 5000, fmt.Sprintf("k%06d", i)))
						values = append(values, v)
					}
					e.mustWrite(table, keys, values)
				}
				fillValues(e, table, 9000, 10000, 100, "r", r)
			} else {
				fillValues(e, table, 0, 40000, 100, "r", r)
			}
			id := e.m.Map(table).Shard(0).ID
			span := e.m.Map(table).Shard(0).Span
			st, _ := e.m.Stats(e.m.Map(table))
			total := st[0].Bytes

			// In the memtable only, the estimate is unusable.
			if _, _, err := e.m.approxMedianSplitKey(table, id, total); !errors.Is(err, errNoEstimate) {
				t.Fatalf("before flush: %v", err)
			}
			if err := e.eng.Flush(); err != nil {
				t.Fatal(err)
			}
			got, ok, err := e.m.approxMedianSplitKey(table, id, total)
			if err != nil || !ok {
				t.Fatal(ok, err)
			}
			exact, _, err := e.m.MedianSplitKey(table, id)
			if err != nil {
				t.Fatal(err)
			}
			before := bytesBefore(t, e, span, got)
			t.Logf("estimated %s (%.1f%% before), exact %s (%.1f%%)", fmtKey(table, got), 100*float64(before)/float64(total),
				fmtKey(table, exact), 100*float64(bytesBefore(t, e, span, exact))/float64(total))
			if before < total/5 || before > total*4/5 {
				t.Fatalf("estimated key %s leaves %d of %d bytes before it", fmtKey(table, got), before, total)
			}
			ends, err := keyColumns(table, got, nil)
			if err != nil {
				t.Fatal(err)
			}
			if wantCols := map[bool]int{false: 1, true: 2}[skewed]; len(ends) != wantCols {
				t.Fatalf("pivot %s has %d columns, want %d", fmtKey(table, got), len(ends), wantCols)
			}
			if _, err := e.m.Split(table, [][]byte{got}); err != nil {
				t.Fatal(err)
			}
			e.check()
			e.checkStats(table)
		})
	}
}
