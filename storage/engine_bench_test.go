package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"github.com/cockroachdb/pebble/v2"
	"runtime"
	"syscall"
	"testing"
)

// benchCPU returns the CPU time the process has used, in nanoseconds: on a
// machine shared with other jobs, wall time per operation mostly measures
// the wait for a CPU, so the benchmark reports cpu-ns/op beside it.
func benchCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkEngine measures the engine's basic operations on a table of
// 10,000 rows of 100-byte values (flushed to sstables): a point read of a
// row, a scan of 1,000 rows and the commit of a one-row batch (without
// fsync, which would dominate). With versioned storage (issue 16) these
// include the version suffixes, the value tags and, for commits, the
// rewrite at the commit timestamp; run it on the commit before for the
// comparison (the benchmark uses only the API both have). Compare
// cpu-ns/op (process CPU time per operation) on a busy machine.
//
//	go test -run '^$' -bench BenchmarkEngine -count 3 ./storage
func BenchmarkEngine(b *testing.B) {
	e, err := Open(b.TempDir(), Options{NoSync: true, Logger: quietLogger{}})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	const rows = 10000
	key := func(i int) []byte { return binary.BigEndian.AppendUint64(TablePrefix(1), uint64(i)) }
	value := make([]byte, 100)
	batch := e.NewBatch()
	for i := 0; i < rows; i++ {
		if err := batch.Set(key(i), value); err != nil {
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
	b.Run("PointRead", func(b *testing.B) {
		cpu0 := benchCPU()
		defer func() { b.ReportMetric(float64(benchCPU()-cpu0)/float64(b.N), "cpu-ns/op") }()
		for i := 0; i < b.N; i++ {
			if _, ok, err := e.Get(key(i * 7919 % rows)); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("Scan1000", func(b *testing.B) {
		cpu0 := benchCPU()
		defer func() { b.ReportMetric(float64(benchCPU()-cpu0)/float64(b.N), "cpu-ns/op") }()
		for i := 0; i < b.N; i++ {
			start := i * 1000 % (rows - 1000)
			it, err := e.NewIter(Span{Start: key(start), End: key(start + 1000)})
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for ok := it.First(); ok; ok = it.Next() {
				n += len(it.Value())
			}
			if err := it.Close(); err != nil || n != 100*1000 {
				b.Fatal(n, err)
			}
		}
	})
	b.Run("Commit1Row", func(b *testing.B) {
		cpu0 := benchCPU()
		defer func() { b.ReportMetric(float64(benchCPU()-cpu0)/float64(b.N), "cpu-ns/op") }()
		for i := 0; i < b.N; i++ {
			bt := e.NewBatch()
			if err := bt.Set(key(i%rows), value); err != nil {
				b.Fatal(err)
			}
			if err := bt.Commit(); err != nil {
				b.Fatal(err)
			}
			bt.Close()
		}
	})
}

// BenchmarkEngineScanVersions is issue 16's scan target through the
// engine: a 1,000-row scan of a 10,000-row table whose rows each have 10
// older versions inside the retention window, against the same scan with
// none (read at a timestamp above every version). The target is at most
// 1.3x; compare cpu-ns/op of versions=10 and =0 within one layout:
// "compacted" is the steady state of a table (flushed and compacted into
// columnar sstables), "memtable" the rows still in Pebble's memtable, as a
// table is right after a burst of writes (the state `make bench` leaves
// kv in for its range scan and EXISTS rows). storage/mvcc's
// BenchmarkScan1000 is the same scan through its Scanner.
//
//	go test -run '^$' -bench BenchmarkEngineScanVersions -count 3 ./storage
func BenchmarkEngineScanVersions(b *testing.B) {
	const rows = 10000
	key := func(i int) []byte { return binary.BigEndian.AppendUint64(TablePrefix(1), uint64(i)) }
	// Values as the bench writes them: different per row and per version,
	// so that blocks do not compress to nothing.
	value := func(i, v int) []byte { return fmt.Appendf(nil, "value-%016d-%03d-%073d", i, v, i*v) }
	// raw is the same scan of the compacted versions=0 data straight over
	// Pebble's iterator (no version decoding or skipping): the floor the
	// Iterator's own cost is measured against.
	type run struct {
		name      string
		versions  int
		compacted bool
		flushed   bool
		raw       bool
	}
	var runs []run
	for _, layout := range []string{"compacted", "flushed", "memtable"} {
		for _, old := range []int{0, 10} {
			runs = append(runs, run{name: fmt.Sprintf("%s/versions=%d", layout, old), versions: old, compacted: layout == "compacted", flushed: layout == "flushed"})
		}
	}
	runs = append(runs, run{name: "compacted/raw", compacted: true, raw: true})
	for _, r := range runs {
		b.Run(r.name, func(b *testing.B) {
			e, err := Open(b.TempDir(), Options{NoSync: true, Logger: quietLogger{}, GCTTL: -1, IdleFlushTick: -1})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			for v := 0; v <= r.versions; v++ {
				batch := e.NewBatch()
				for i := 0; i < rows; i++ {
					if err := batch.Set(key(i), value(i, v)); err != nil {
						b.Fatal(err)
					}
				}
				if err := batch.Commit(); err != nil {
					b.Fatal(err)
				}
				batch.Close()
			}
			if r.flushed {
				if err := e.Flush(); err != nil {
					b.Fatal(err)
				}
			}
			if r.compacted {
				if err := e.Flush(); err != nil {
					b.Fatal(err)
				}
				if err := e.Compact(context.Background(), TablesSpan()); err != nil {
					b.Fatal(err)
				}
			}
			ts, err := e.ReadTimestamp()
			if err != nil {
				b.Fatal(err)
			}
			view := e.At(ts)
			const wantBytes = 1000 * 100
			runtime.GC() // the load's garbage is not the scan's
			b.ResetTimer()
			cpu0 := benchCPU()
			defer func() { b.ReportMetric(float64(benchCPU()-cpu0)/float64(b.N), "cpu-ns/op") }()
			if r.raw {
				lower, upper := engineBounds(Span{Start: key(4000), End: key(5000)})
				for i := 0; i < b.N; i++ {
					it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
					if err != nil {
						b.Fatal(err)
					}
					n := 0
					for ok := it.First(); ok; ok = it.Next() {
						n += len(it.Value()) - 1 // the version tag
					}
					if err := it.Close(); err != nil || n != wantBytes {
						b.Fatal(n, err)
					}
				}
				return
			}
			for i := 0; i < b.N; i++ {
				start := 4000
				it, err := view.NewIter(Span{Start: key(start), End: key(start + 1000)})
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for ok := it.First(); ok; ok = it.Next() {
					if n == 0 && !bytes.Equal(it.Value(), value(start, r.versions)) {
						b.Fatalf("read %q, not the newest version", it.Value())
					}
					n += len(it.Value())
				}
				if err := it.Close(); err != nil || n != wantBytes {
					b.Fatal(n, err)
				}
			}
		})
	}
}
