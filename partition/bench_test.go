package partition

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/pivotdb/pivotdb/storage"
)

// benchMap returns a map of table 7 with n shards, pivots (10), (20), ...
func benchMap(n int) *ShardMap {
	pivots := [][]byte{key(7)}
	ids := []ShardID{1}
	for i := 1; i < n; i++ {
		pivots = append(pivots, key(7, i*10))
		ids = append(ids, ShardID(i+1))
	}
	return newShardMap(7, 1, pivots, ids, nil)
}

// BenchmarkFind routes full keys (a, b) in a map of 10k shards.
func BenchmarkFind(b *testing.B) {
	for _, n := range []int{16, 10000} {
		b.Run(fmt.Sprintf("shards=%d", n), func(b *testing.B) {
			sm := benchMap(n)
			r := rand.New(rand.NewPCG(1, 2))
			keys := make([][]byte, 4096)
			for i := range keys {
				keys[i] = key(7, r.IntN(n*10), "some string")
			}
			b.ResetTimer()
			i := 0
			for b.Loop() {
				if sm.Find(keys[i%len(keys)]) < 0 {
					b.Fatal("not found")
				}
				i++
			}
		})
	}
}

// BenchmarkOverlapping prunes a span covering 10 shards of 10k.
func BenchmarkOverlapping(b *testing.B) {
	sm := benchMap(10000)
	span := storage.Span{Start: key(7, 5000), End: key(7, 5100)}
	for b.Loop() {
		if lo, hi := sm.OverlappingRange(span); hi-lo != 10 {
			b.Fatal(lo, hi)
		}
	}
}

// BenchmarkSplitMerge measures the metadata cost of a split and of a merge
// (one op each per iteration, reported per op): the swap batch, the map copy
// (O(shards)), and, with rows, the count of the new shards. An empty shard
// is the pure metadata cost. The engine is in memory, so a synced commit
// costs no disk flush.
func BenchmarkSplitMerge(b *testing.B) {
	for _, tc := range []struct{ shards, rows int }{{1, 0}, {10000, 0}, {1, 10000}} {
		b.Run(fmt.Sprintf("shards=%d/rows=%d", tc.shards, tc.rows), func(b *testing.B) {
			e := newEnv(b)
			const table = 7
			var splits [][]byte
			for i := 1; i < tc.shards; i++ {
				splits = append(splits, key(table, 1000000+i))
			}
			e.create(table, splits...)
			for lo := 0; lo < tc.rows; lo += 1000 {
				fill(e, table, lo, lo+1000)
			}
			at := [][]byte{key(table, tc.rows/2)}
			b.ResetTimer()
			for b.Loop() {
				sm, err := e.m.Split(table, at)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := e.m.Merge(table, sm.Shard(0).ID, 2); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/op-each")
		})
	}
}

// BenchmarkCommitPoint compares a one-row write committed directly with the
// same write committed through Manager.Commit (routing, one Merge of the
// statistics delta), in a table of 1 and of 16 shards: the routing overhead
// of a point UPSERT, without the sql layer.
func BenchmarkCommitPoint(b *testing.B) {
	run := func(b *testing.B, shards int, routed bool) {
		e := newEnv(b)
		const table = 7
		var splits [][]byte
		for i := 1; i < shards; i++ {
			splits = append(splits, key(table, i*1000))
		}
		e.create(table, splits...)
		r := rand.New(rand.NewPCG(1, 2))
		value := make([]byte, 100)
		var w Writes
		b.ResetTimer()
		for b.Loop() {
			k := key(table, r.IntN(shards*1000), "k")
			batch := e.eng.NewBatch()
			if err := batch.Set(k, value); err != nil {
				b.Fatal(err)
			}
			var err error
			if routed {
				w.Reset()
				w.RecordPut(table, k, len(value), false, 0)
				err = e.m.Commit(batch, &w)
			} else {
				err = batch.Commit()
			}
			if err != nil {
				b.Fatal(err)
			}
			batch.Close()
		}
	}
	for _, shards := range []int{1, 16} {
		b.Run(fmt.Sprintf("shards=%d/direct", shards), func(b *testing.B) { run(b, shards, false) })
		b.Run(fmt.Sprintf("shards=%d/routed", shards), func(b *testing.B) { run(b, shards, true) })
	}
}
