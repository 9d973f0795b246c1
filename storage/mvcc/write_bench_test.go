package mvcc

import (
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// BenchmarkUpdateRow measures updating one existing row of a 10,000-row
// table, batch committed without fsync (the write path's CPU, not the
// disk's):
//
//   - engine: today's unversioned Set;
//   - committed: PutCommitted, a one-phase commit (a single-row autocommit
//     statement needs no intent);
//   - txn: WriteIntent in one batch, then the transaction record and
//     ResolveIntent in a second, as a multi-statement transaction commits.
func BenchmarkUpdateRow(b *testing.B) {
	const rows = 10000
	row := func(i int) []byte { return storage.AppendInt64(storage.TablePrefix(1), int64(i)) }
	value := make([]byte, 100)
	open := func(b *testing.B) *pebble.DB {
		opts, cache := benchOptions()
		b.Cleanup(cache.Unref)
		db, err := pebble.Open("", opts)
		if err != nil {
			b.Fatal(err)
		}
		batch := db.NewIndexedBatch()
		for i := range rows {
			if _, err := PutCommitted(batch, row(i), hlc.Timestamp{WallTime: 1}, value); err != nil {
				b.Fatal(err)
			}
		}
		if err := batch.Commit(pebble.NoSync); err != nil {
			b.Fatal(err)
		}
		batch.Close()
		return db
	}
	b.Run("engine", func(b *testing.B) {
		e, err := storage.Open("", storage.Options{FS: storage.NewMemFS(), Logger: quietLogger{}, NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		defer e.Close()
		for i := range rows {
			batch := e.NewBatch()
			if err := batch.Set(row(i), value); err != nil {
				b.Fatal(err)
			}
			if err := batch.Commit(); err != nil {
				b.Fatal(err)
			}
			batch.Close()
		}
		b.ResetTimer()
		cpu0 := processCPU()
		defer func() { b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op") }()
		for i := range b.N {
			batch := e.NewBatch()
			if _, _, err := batch.Get(row(i % rows)); err != nil {
				b.Fatal(err)
			}
			if err := batch.Set(row(i%rows), value); err != nil {
				b.Fatal(err)
			}
			if err := batch.Commit(); err != nil {
				b.Fatal(err)
			}
			batch.Close()
		}
	})
	b.Run("committed", func(b *testing.B) {
		db := open(b)
		defer db.Close()
		b.ResetTimer()
		cpu0 := processCPU()
		defer func() { b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op") }()
		for i := range b.N {
			ts := hlc.Timestamp{WallTime: int64(2 + i)}
			batch := db.NewIndexedBatch()
			if _, _, _, err := Get(batch, row(i%rows), ts, ReadOptions{}); err != nil {
				b.Fatal(err)
			}
			if _, err := PutCommitted(batch, row(i%rows), ts, value); err != nil {
				b.Fatal(err)
			}
			if err := batch.Commit(pebble.NoSync); err != nil {
				b.Fatal(err)
			}
			batch.Close()
		}
	})
	b.Run("txn", func(b *testing.B) {
		db := open(b)
		defer db.Close()
		b.ResetTimer()
		cpu0 := processCPU()
		defer func() { b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op") }()
		for i := range b.N {
			ts := hlc.Timestamp{WallTime: int64(2 + 2*i)}
			k := row(i % rows)
			txn := &TxnMeta{ID: NewTxnID(), Anchor: k, WriteTimestamp: ts}
			batch := db.NewIndexedBatch()
			if _, _, _, err := Get(batch, k, ts, ReadOptions{Txn: txn}); err != nil {
				b.Fatal(err)
			}
			if _, err := WriteIntent(batch, k, txn, ts, value, false, NoKeyUpdate); err != nil {
				b.Fatal(err)
			}
			if err := batch.Commit(pebble.NoSync); err != nil {
				b.Fatal(err)
			}
			batch.Close()
			commitTS := ts.Next()
			batch = db.NewIndexedBatch()
			rec := TxnRecord{Status: Committed, WriteTimestamp: commitTS, LockSpans: []storage.Span{{Start: k}}}
			if err := PutTxnRecord(batch, k, txn.ID, &rec); err != nil {
				b.Fatal(err)
			}
			if _, err := ResolveIntent(batch, k, Resolution{ID: txn.ID, Status: Committed, CommitTimestamp: commitTS}); err != nil {
				b.Fatal(err)
			}
			if err := DeleteTxnRecord(batch, k, txn.ID); err != nil {
				b.Fatal(err)
			}
			if err := batch.Commit(pebble.NoSync); err != nil {
				b.Fatal(err)
			}
			batch.Close()
		}
	})
}
