package partition

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/meta"
	"github.com/pivotdb/pivotdb/storage"
)

var splitBenchMB = flag.Int("split-bench-mb", 1024, "size of the big shard of BenchmarkSplitShard, in MB")

// BenchmarkSplitShard splits a one-shard table holding 1 MB and one holding
// -split-bench-mb MB (1 GB by default) of 1 KB rows, on disk with fsync,
// and merges it back, per iteration. It reports, in ms per split:
//
//	key-exact   MedianSplitKey: reads the shard up to 3/4 (O(rows))
//	key-est     approxMedianSplitKey: size-estimate bisection (O(key bits))
//	swap        SplitInBackground until its swap committed and the new
//	            map is published: the only part writers wait for (an fsync)
//	meta        the same without the fsync: plan, locks, counters read,
//	            swap batch, snapshot, map published (the fsync's latency
//	            is the disk's, and on a shared machine it varies from 0.5
//	            to 25 ms whatever the shard's size)
//	split       the whole SplitInBackground call, as the balancer makes it
//	            for shards of 64 MB and more: swap, WAL sync, start of the
//	            count. This is the split's cost; it must not grow with the
//	            shard's size.
//	count       the background count of the left new shard (the right one
//	            is derived) and its landing, which no one waits for; it
//	            reads half the shard, so it does grow with the size
//	merge       Merge back (after the count landed): one swap, no count
//
// The 1 GB run loads 1 GB with synced 1 MB batches and takes about a
// minute before the timer starts: go test ./partition -run - -bench
// SplitShard -benchtime 5x (-split-bench-mb 256 for a quicker look).
func BenchmarkSplitShard(b *testing.B) {
	for _, mb := range []int{1, *splitBenchMB} {
		b.Run(fmt.Sprintf("MB=%d", mb), func(b *testing.B) {
			eng, err := storage.Open(b.TempDir(), storage.Options{Logger: quietLogger{}})
			if err != nil {
				b.Fatal(err)
			}
			defer eng.Close()
			m, err := Load(eng, Options{KeyColumns: keyColumns})
			if err != nil {
				b.Fatal(err)
			}
			const table = 7
			ch := m.Begin()
			batch := meta.Open(eng).NewBatch()
			if err := ch.Create(batch, table, nil); err != nil {
				b.Fatal(err)
			}
			if err := batch.Commit(); err != nil {
				b.Fatal(err)
			}
			ch.Install()
			batch.Close()

			// Load mb MB of 1 KB rows with random keys and values.
			r := rand.New(rand.NewPCG(1, 2))
			rows := mb << 10
			value := make([]byte, 1000)
			start := time.Now()
			for lo := 0; lo < rows; lo += 1000 {
				batch := eng.NewBatch()
				var w Writes
				for i := lo; i < min(lo+1000, rows); i++ {
					for j := range value {
						value[j] = byte(r.Uint32())
					}
					k := key(table, int(r.Int64()>>1), "r")
					if err := batch.Set(k, value); err != nil {
						b.Fatal(err)
					}
					w.RecordPut(table, k, len(value), false, 0)
				}
				if err := m.Commit(batch, &w); err != nil {
					b.Fatal(err)
				}
				batch.Close()
			}
			if err := eng.Flush(); err != nil {
				b.Fatal(err)
			}
			// Let the compactions of the load finish, so that they do not
			// compete with the splits for the disk.
			// Also wait for the compaction debt to be paid, so that the
			// fsyncs of the splits do not queue behind compaction writes.
			for idle, deadline := 0, time.Now().Add(5*time.Minute); idle < 5 && time.Now().Before(deadline); {
				if c := eng.Metrics().Compact; c.NumInProgress > 0 || c.EstimatedDebt > 0 {
					idle = 0
				} else {
					idle++
				}
				time.Sleep(100 * time.Millisecond)
			}
			b.Logf("loaded %d MB in %s (compactions included)", mb, time.Since(start).Round(time.Millisecond))

			var swapAt, metaAt time.Time
			m.knobs.beforeLanding = func(uint64) error { swapAt = time.Now(); return nil }
			m.knobs.beforeSyncWAL = func() { metaAt = time.Now() }
			var exact, est, meta, swap, split, count, merge time.Duration
			logged := false
			b.ResetTimer()
			for b.Loop() {
				sm := m.Map(table)
				id := sm.Shard(0).ID
				st, err := m.Stats(sm)
				if err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				if _, ok, err := m.MedianSplitKey(table, id); err != nil || !ok {
					b.Fatal(ok, err)
				}
				t1 := time.Now()
				at, ok, err := m.approxMedianSplitKey(table, id, st[0].Bytes)
				if err != nil || !ok {
					if mb > 1 {
						b.Fatal(ok, err)
					}
					// 1 MB sits in the memtable: no estimate, as the
					// balancer's EstimateAbove (64 MB) would not ask.
					at, _, _ = m.MedianSplitKey(table, id)
				}
				t2 := time.Now()
				next, err := m.SplitInBackground(table, [][]byte{at})
				if err != nil {
					b.Fatal(err)
				}
				t3 := time.Now()
				m.WaitBackground()
				tc := time.Now()
				meta += metaAt.Sub(t2)
				if halves, err := m.Stats(next); err == nil && !logged {
					logged = true
					b.Logf("estimated split: left half %.1f%% of the bytes",
						100*float64(halves[0].Bytes)/float64(halves[0].Bytes+halves[1].Bytes))
				}
				if _, err := m.Merge(table, next.Shard(0).ID, 2); err != nil {
					b.Fatal(err)
				}
				t4 := time.Now()
				count += tc.Sub(t3)
				exact += t1.Sub(t0)
				est += t2.Sub(t1)
				swap += swapAt.Sub(t2)
				split += t3.Sub(t2)
				merge += t4.Sub(tc)
			}
			n := float64(b.N)
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / n }
			b.ReportMetric(ms(exact), "key-exact-ms")
			b.ReportMetric(ms(est), "key-est-ms")
			b.ReportMetric(ms(swap), "swap-ms")
			b.ReportMetric(ms(meta), "meta-ms")
			b.ReportMetric(ms(split), "split-ms")
			b.ReportMetric(ms(count), "count-ms")
			b.ReportMetric(ms(merge), "merge-ms")
		})
	}
}
