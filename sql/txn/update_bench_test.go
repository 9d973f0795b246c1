//go:build unix

package txn

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/mvcc"
	"github.com/pivotdb/pivotdb/storage/storagetest"
)

// processCPU is the CPU time the process has used, in nanoseconds: on a
// machine shared with other jobs the wall time includes waiting for a CPU.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkTxnUpdateRow: a transaction that locks one row of 10,000, reads
// it and writes it back, then commits (no fsync: the write path's CPU, not
// the disk's). lock=update is what every write takes (FOR UPDATE);
// lock=share+update a locking read followed by the write (two holds).
// Since issue 16 item 9 each lock of a transaction block (mode=block) is a
// lock record written to the store under the key's latch, released in the
// commit batch; a one-phase (autocommit) transaction's (mode=1pc) is a
// hold in memory (memlocks.go). mode=intents is a block whose write goes
// to the store as an intent (intents.go), as a block's writes past
// IntentFlushBytes do, resolved by its commit.
func BenchmarkTxnUpdateRow(b *testing.B) {
	const rows = 10000
	value := make([]byte, 100)
	for _, mode := range []string{"block", "intents", "1pc"} {
		onePhase := mode == "1pc"
		for _, locks := range [][]mvcc.Strength{{mvcc.Update}, {mvcc.Share, mvcc.Update}} {
			b.Run(fmt.Sprintf("mode=%s/locks=%d", mode, len(locks)), func(b *testing.B) {
				eng, err := storage.Open("db", storage.Options{FS: storage.NewMemFS(), NoSync: true, Logger: storagetest.QuietLogger{}})
				if err != nil {
					b.Fatal(err)
				}
				defer eng.Close()
				shards, err := partition.Load(eng, partition.Options{})
				if err != nil {
					b.Fatal(err)
				}
				m := NewManager(eng, shards)
				row := func(i int) []byte { return storage.AppendInt64(storage.TablePrefix(1), int64(i)) }
				for i := range rows {
					tx := m.Begin()
					if err := tx.Batch().Set(row(i), value); err != nil {
						b.Fatal(err)
					}
					if err := tx.Commit(); err != nil {
						b.Fatal(err)
					}
				}
				b.ResetTimer()
				cpu0 := processCPU()
				for i := 0; i < b.N; i++ {
					tx := m.Begin()
					if onePhase {
						tx.SetOnePhase()
					}
					ts, err := eng.ReadTimestamp()
					if err != nil {
						b.Fatal(err)
					}
					tx.SetReadTimestamp(ts)
					k := row(i % rows)
					for _, s := range locks {
						if err := tx.LockStrength(b.Context(), k, s); err != nil {
							b.Fatal(err)
						}
					}
					v, _, err := tx.Get(k)
					if err != nil {
						b.Fatal(err)
					}
					if err := tx.Batch().Set(k, v); err != nil {
						b.Fatal(err)
					}
					if mode == "intents" {
						if err := tx.FlushIntents(); err != nil {
							b.Fatal(err)
						}
					}
					if err := tx.Commit(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
