package exec

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pivotdb/pivotdb/meta"
	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/storagetest"
)

// scanPartsTable makes a table of the given shard pivots (keys 8 bytes
// after the table prefix) and returns the partition manager.
func scanPartsTable(t testing.TB, table uint64, splits []int) *partition.Manager {
	t.Helper()
	eng, err := storage.Open("db", storage.Options{FS: storage.NewMemFS(), NoSync: true, Logger: storagetest.QuietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	m, err := partition.Load(eng, partition.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var pivots [][]byte
	for _, s := range splits {
		pivots = append(pivots, scanPartsKey(table, s))
	}
	ch := m.Begin()
	b := meta.Open(eng).NewBatch()
	defer b.Close()
	if err := ch.Create(b, table, pivots); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	ch.Install()
	return m
}

func scanPartsKey(table uint64, k int) []byte {
	return binary.BigEndian.AppendUint64(storage.TablePrefix(table), uint64(k))
}

// TestScanPartsOf: cutting spans at shard boundaries, with the shortcut
// for a span in the previous span's shard, gives the parts the plain
// OverlappingRange cut gives, for random shard maps and random spans —
// points and ranges, in key order (an IN list's) and not.
func TestScanPartsOf(t *testing.T) {
	r := rand.New(rand.NewPCG(uint64(len(t.Name())), 23))
	for round := range 30 {
		table := uint64(100 + round)
		var splits []int
		for k := 1 + r.IntN(20); k < 1000; k += 1 + r.IntN(200) {
			splits = append(splits, k)
		}
		m := scanPartsTable(t, table, splits)
		c := &Context{Shards: m}
		var spans []storage.Span
		for range 1 + r.IntN(60) {
			a := r.IntN(1100)
			switch r.IntN(4) {
			case 0: // a range, possibly over several shards
				b := a + r.IntN(300)
				spans = append(spans, storage.Span{Start: scanPartsKey(table, a), End: scanPartsKey(table, b)})
			case 1: // to the table's end
				spans = append(spans, storage.Span{Start: scanPartsKey(table, a), End: storage.TableSpan(table).End})
			default: // a point, as the planner makes it
				k := scanPartsKey(table, a)
				spans = append(spans, storage.Span{Start: k, End: append(slices.Clip(k), 0)})
			}
		}
		if r.IntN(3) > 0 {
			slices.SortFunc(spans, func(a, b storage.Span) int { return bytes.Compare(a.Start, b.Start) })
		}
		got := scanPartsOf(c, table, spans)
		sm := m.Map(table)
		var want []shardPart
		for _, span := range spans {
			lo, hi := sm.OverlappingRange(span)
			for k := lo; k < hi; k++ {
				sh := sm.Shard(k)
				want = append(want, shardPart{span: span.Intersect(sh.Span), shard: sh})
			}
		}
		if len(got) != len(want) {
			t.Fatalf("round %d: %d parts, want %d", round, len(got), len(want))
		}
		for i := range got {
			if !got[i].span.Equal(want[i].span) || got[i].shard.ID != want[i].shard.ID {
				t.Fatalf("round %d part %d: %s in shard %d, want %s in shard %d",
					round, i, got[i].span, got[i].shard.ID, want[i].span, want[i].shard.ID)
			}
		}
	}
}

// BenchmarkScanPartsOf cuts an IN list of 100 points in key order over a
// table of 16 shards into parts, as a point scan does:
//
//	go test ./sql/exec -run '^$' -bench ScanPartsOf -benchmem
func BenchmarkScanPartsOf(b *testing.B) {
	const table = 7
	var splits []int
	for k := 1; k < 16; k++ {
		splits = append(splits, k*1000)
	}
	m := scanPartsTable(b, table, splits)
	c := &Context{Shards: m}
	spans := make([]storage.Span, 100)
	for i := range spans {
		k := scanPartsKey(table, i*160)
		spans[i] = storage.Span{Start: k, End: append(slices.Clip(k), 0)}
	}
	b.ReportAllocs()
	for b.Loop() {
		if parts := scanPartsOf(c, table, spans); len(parts) != len(spans) {
			b.Fatal(len(parts))
		}
	}
}
