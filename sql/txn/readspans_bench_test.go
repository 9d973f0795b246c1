package txn

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/storagetest"
)

// BenchmarkCommitConcurrent: 8 writers each read a key and write another
// (disjoint) in a transaction, with fsync, at each level: what the
// SERIALIZABLE commit check (wait for the commits below, then refresh)
// costs against REPEATABLE READ.
func BenchmarkCommitConcurrent(b *testing.B) {
	for _, level := range []Isolation{RepeatableRead, Serializable} {
		b.Run(fmt.Sprintf("level=%d", level), func(b *testing.B) {
			eng, err := storage.Open(b.TempDir(), storage.Options{Logger: storagetest.QuietLogger{}})
			if err != nil {
				b.Fatal(err)
			}
			defer eng.Close()
			shards, err := partition.Load(eng, partition.Options{})
			if err != nil {
				b.Fatal(err)
			}
			m := NewManager(eng, shards)
			var n atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for w := 0; w < 8; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					for n.Add(1) <= int64(b.N) {
						tx := m.Begin()
						tx.SetIsolation(level)
						ts, _ := eng.ReadTimestamp()
						tx.SetReadTimestamp(ts)
						tx.StartStatement()
						if _, _, err := tx.Reader().Get(key(1, fmt.Sprintf("r%d", w))); err != nil {
							b.Error(err)
						}
						if err := tx.Batch().Set(key(1, fmt.Sprintf("w%d", w)), []byte("v")); err != nil {
							b.Error(err)
						}
						if err := tx.Commit(); err != nil {
							b.Error(err)
						}
					}
				}(w)
			}
			wg.Wait()
		})
	}
}
