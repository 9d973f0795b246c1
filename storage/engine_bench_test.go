package storage

import (
	"encoding/binary"
	"testing"
)

// BenchmarkEngine measures the engine's basic operations on a table of
// 10,000 rows of 100-byte values (flushed to sstables): a point read of a
// row, a scan of 1,000 rows and the commit of a one-row batch (without
// fsync, which would dominate). With versioned storage (issue 16) these
// include the version suffixes, the value tags and, for commits, the
// rewrite at the commit timestamp; run it on the commit before for the
// comparison (the benchmark uses only the API both have).
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
		for i := 0; i < b.N; i++ {
			if _, ok, err := e.Get(key(i * 7919 % rows)); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("Scan1000", func(b *testing.B) {
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
