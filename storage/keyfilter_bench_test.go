package storage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkAbsentKeyLookups looks up absent keys by full key (the way the
// executor's point reads do, through a PointReader) in two tables with the
// same data, larger than the block cache: table 1 with a key bloom filter,
// table 2 without. It reports lookups per second and the block cache misses
// per lookup (blocks read from the files); with the filter almost every
// lookup is answered without reading a data block.
//
//	go test ./storage -run '^$' -bench AbsentKeyLookups -benchtime 20000x
func BenchmarkAbsentKeyLookups(b *testing.B) {
	const (
		rows      = 300000
		valueSize = 100
		cache     = 4 << 20
	)
	e, err := Open(b.TempDir(), Options{NoSync: true, CacheSizeBytes: cache, Logger: quietLogger{}})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	e.SetKeyFilter(1, true)
	r := rand.New(rand.NewPCG(1, 2))
	value := make([]byte, valueSize)
	for _, id := range []uint64{1, 2} {
		batch := e.NewBatch()
		for k := uint64(0); k < rows; k++ {
			for i := range value {
				value[i] = byte(r.Uint32())
			}
			// Even keys present; odd ones are the absent keys looked up.
			if err := batch.Set(rowKey(id, 2*k*0x9E3779B97F4A7C15>>1<<1), value); err != nil {
				b.Fatal(err)
			}
			if batch.Len() > 8<<20 {
				if err := batch.Commit(); err != nil {
					b.Fatal(err)
				}
				batch.Close()
				batch = e.NewBatch()
			}
		}
		if err := batch.Commit(); err != nil {
			b.Fatal(err)
		}
		batch.Close()
	}
	if err := e.Compact(context.Background(), Span{}); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		table uint64
	}{{"filter=off", 2}, {"filter=on", 1}} {
		b.Run(tc.name, func(b *testing.B) {
			pr, err := e.NewPointReader()
			if err != nil {
				b.Fatal(err)
			}
			defer pr.Close()
			m0 := e.Metrics()
			b.ResetTimer()
			for range b.N {
				key := rowKey(tc.table, r.Uint64()|1) // odd: absent
				if _, ok, err := pr.Get(key); err != nil || ok {
					b.Fatalf("Get(%s) = %v, %v", FormatKey(key), ok, err)
				}
			}
			b.StopTimer()
			m1 := e.Metrics()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
			b.ReportMetric(float64(m1.BlockCache.Misses-m0.BlockCache.Misses)/float64(b.N), "blockreads/op")
			b.ReportMetric(float64(m1.Filter.Hits-m0.Filter.Hits)/float64(b.N), "filterhits/op")
		})
	}
	if testing.Verbose() {
		bytes, _ := e.KeyFilterBytes()
		fmt.Printf("filter bytes per table: %v\n", bytes)
	}
}
