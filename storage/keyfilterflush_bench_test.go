package storage

import (
	"fmt"
	"testing"
)

// BenchmarkFilteredWrites commits batches of 100 rows (100-byte values) to
// one table on disk, without fsync, with the table's key filter off and
// on: with it on, the memtables are also flushed once a second
// (keyfilterflush.go), which is the cost measured here.
//
//	go test ./storage -run XXX -bench FilteredWrites -benchtime 10s
func BenchmarkFilteredWrites(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("filter=%v", on), func(b *testing.B) {
			e, err := Open(b.TempDir(), Options{NoSync: true, Logger: quietLogger{}})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			e.SetKeyFilter(1, on)
			value := make([]byte, 100)
			b.SetBytes(100 * 100)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				batch := e.NewBatch()
				for k := 0; k < 100; k++ {
					if err := batch.Set(rowKey(1, uint64(i*100+k)), value); err != nil {
						b.Fatal(err)
					}
				}
				if err := batch.Commit(); err != nil {
					b.Fatal(err)
				}
				batch.Close()
			}
			b.StopTimer()
			b.ReportMetric(float64(e.flusher.flushes.Load()), "flushes")
		})
	}
}
