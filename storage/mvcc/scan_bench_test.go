package mvcc

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// BenchmarkScan1000 is issue 16's scan target: a 1,000-row range scan over
// rows that each have 10 older versions (inside the retention window, so
// GC has not removed them) should take at most 1.3x the time of the same
// scan over rows with none. The table has 10,000 rows of 100-byte values
// and the scan reads rows 4,000..4,999 at a timestamp above every version,
// after a flush and compaction (the steady state of a table updated all
// day). "columnar32k" is the layout ConfigureOptions sets, "row4k"
// Pebble's default (today's engine's); "engine" is the same scan through
// today's unversioned storage engine, for the cost of the MVCC layer itself.
func BenchmarkScan1000(b *testing.B) {
	const rows, scanFrom, scanRows, valueLen = 10000, 4000, 1000, 100
	row := func(i int) []byte { return storage.AppendInt64(storage.TablePrefix(1), int64(i)) }
	value := make([]byte, valueLen)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	span := storage.Span{Start: row(scanFrom), End: row(scanFrom + scanRows)}

	for _, layout := range []string{"columnar32k", "row4k"} {
		for _, old := range []int{0, 10} {
			b.Run(fmt.Sprintf("%s/versions=%d", layout, old), func(b *testing.B) {
				opts, cache := benchOptions()
				defer cache.Unref()
				if layout == "row4k" {
					// Pebble's defaults, as today's engine runs: row blocks
					// of 4 KB.
					opts.Experimental.EnableColumnarBlocks = func() bool { return false }
					for i := range opts.Levels {
						opts.Levels[i].BlockSize = 4 << 10
					}
				}
				db, err := pebble.Open("", opts)
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				batch := db.NewIndexedBatch()
				for i := range rows {
					for v := 0; v <= old; v++ {
						if _, err := PutCommitted(batch, row(i), hlc.Timestamp{WallTime: int64(1000 + v)}, value); err != nil {
							b.Fatal(err)
						}
					}
					if batch.Len() > 4<<20 {
						if err := batch.Commit(pebble.NoSync); err != nil {
							b.Fatal(err)
						}
						batch.Close()
						batch = db.NewIndexedBatch()
					}
				}
				if err := batch.Commit(pebble.NoSync); err != nil {
					b.Fatal(err)
				}
				batch.Close()
				if err := db.Flush(); err != nil {
					b.Fatal(err)
				}
				if err := db.Compact(b.Context(), []byte{0}, []byte{0xff}, false); err != nil {
					b.Fatal(err)
				}
				readTS := hlc.Timestamp{WallTime: 2000}
				b.ResetTimer()
				cpu0 := processCPU()
				for range b.N {
					s, err := NewScanner(db, span, readTS, ReadOptions{})
					if err != nil {
						b.Fatal(err)
					}
					n := 0
					for s.Next() {
						n++
					}
					// Machine-independent figures beside the time: what
					// Pebble went through for the 1,000 rows.
					st := s.Stats()
					b.ReportMetric(float64(st.InternalStats.BlockBytes), "block-bytes/op")
					b.ReportMetric(float64(st.InternalStats.PointCount), "points/op")
					b.ReportMetric(float64(st.InternalStats.KeyBytes), "key-bytes/op")
					if err := s.Close(); err != nil {
						b.Fatal(err)
					}
					if n != scanRows {
						b.Fatalf("scanned %d rows, want %d", n, scanRows)
					}
				}
				b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}

	b.Run("engine", func(b *testing.B) {
		e, err := storage.Open("", storage.Options{FS: storage.NewMemFS(), Logger: quietLogger{}})
		if err != nil {
			b.Fatal(err)
		}
		defer e.Close()
		batch := e.NewBatch()
		for i := range rows {
			if err := batch.Set(row(i), value); err != nil {
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
		if err := e.Compact(b.Context(), storage.Span{}); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		cpu0 := processCPU()
		for range b.N {
			it, err := e.NewIter(span)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for ok := it.First(); ok; ok = it.Next() {
				_ = it.Value()
				n++
			}
			if err := it.Close(); err != nil {
				b.Fatal(err)
			}
			if n != scanRows {
				b.Fatalf("scanned %d rows, want %d", n, scanRows)
			}
		}
		b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	})
}
