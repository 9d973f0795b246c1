package storage

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// BenchmarkInList is the storage part of the bench's "IN-list of 100
// keys" row: 100 distinct random keys of a 100,000-row table, looked up in
// key order through one PointReader per statement (a new read timestamp
// each time), as sql/exec's pointScan does. The keys are spread over the
// whole table (about 1,000 rows apart), like the bench's hkv, whose keys
// start with a hash. "compacted" is the table after its load was flushed
// and compacted, "memtable" before any flush. Compare cpu-ns/op:
//
//	go test -run '^$' -bench BenchmarkInList -benchmem -count 3 ./storage
func BenchmarkInList(b *testing.B) {
	const rows = 100000
	for _, layout := range []string{"compacted", "memtable"} {
		b.Run(layout, func(b *testing.B) {
			e, err := Open(b.TempDir(), Options{NoSync: true, Logger: quietLogger{}, GCTTL: -1, IdleFlushTick: -1})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			batch := e.NewBatch()
			for i := range rows {
				if err := batch.Set(pointKey(i), fmt.Appendf(nil, "value-%024d", i)); err != nil {
					b.Fatal(err)
				}
			}
			if err := batch.Commit(); err != nil {
				b.Fatal(err)
			}
			batch.Close()
			if layout == "compacted" {
				if err := e.Flush(); err != nil {
					b.Fatal(err)
				}
				if err := e.Compact(context.Background(), TablesSpan()); err != nil {
					b.Fatal(err)
				}
			}
			r := rand.New(rand.NewPCG(1, 2))
			lists := make([][][]byte, 64)
			for l := range lists {
				idx := r.Perm(rows)[:100]
				slices.Sort(idx)
				for _, i := range idx {
					lists[l] = append(lists[l], pointKey(i))
				}
			}
			runtime.GC()
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := benchCPU()
			n := 0
			for b.Loop() {
				ts, err := e.ReadTimestamp()
				if err != nil {
					b.Fatal(err)
				}
				pr, err := e.At(ts).NewPointReader()
				if err != nil {
					b.Fatal(err)
				}
				for _, k := range lists[n%len(lists)] {
					v, ok, err := pr.GetNoCopy(k)
					if !ok || err != nil {
						b.Fatalf("GetNoCopy(%s) = %v, %v", FormatKey(k), ok, err)
					}
					if want := binary.BigEndian.Uint64(k[len(k)-8:]); uint64(parseValue(v)) != want {
						b.Fatalf("GetNoCopy(%s) = %q, want row %d's value", FormatKey(k), v, want)
					}
				}
				pr.Close()
				n++
			}
			b.ReportMetric(float64(benchCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// parseValue returns the row number in a value-%024d value.
func parseValue(v []byte) int {
	n := 0
	for _, c := range v[len("value-"):] {
		n = n*10 + int(c-'0')
	}
	return n
}
