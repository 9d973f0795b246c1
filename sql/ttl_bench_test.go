package sql

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
)

// BenchmarkTTLRunner measures the TTL runner erasing 20k expired rows (of a
// table in 4 shards, rows stamped in 2000) while writers UPSERT live rows
// of the same table (2 sessions, 10 rows a statement), and the same write
// load alone for as long as the erasure took:
//
//	erased-rows/s       rows the runner erased per second under the load
//	writes/s-ttl        rows written per second while the runner erased
//	writes/s-alone      rows written per second without the runner
//	slowdown-%          100 · (1 - writes/s-ttl / writes/s-alone)
//
// sync=true commits with fsync, as a server does by default; the runner's
// batches are 1000 rows, so it syncs about 20 times per iteration.
func BenchmarkTTLRunner(b *testing.B) {
	for _, synced := range []bool{false, true} {
		b.Run(fmt.Sprintf("sync=%v", synced), func(b *testing.B) { benchTTLRunner(b, synced) })
	}
}

func benchTTLRunner(b *testing.B, synced bool) {
	quiet := storage.SlogLogger{L: slog.New(slog.NewTextHandler(io.Discard, nil))}
	e, err := Open(Options{DataDir: b.TempDir(), NoSync: !synced, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	s := testSession(b, e)
	query(b, s, `CREATE TABLE t (k Int64, ts Timestamp, v Utf8, PRIMARY KEY (k)) WITH (UNIFORM_PARTITIONS = 4, TTL = Interval("PT1H") ON ts)`)
	const expired = 20000
	const writers = 2
	sessions := make([]*Session, writers)
	for i := range sessions {
		sessions[i] = testSession(b, e)
	}
	old := types.NewTimestamp(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro())

	// load runs the writers until stop is closed and returns the rows they
	// wrote: live rows (stamped now) at random keys of their own.
	load := func(stop chan struct{}) int64 {
		var rows atomic.Int64
		var wg sync.WaitGroup
		for w, ws := range sessions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(w), 1))
				var sb strings.Builder
				for {
					select {
					case <-stop:
						return
					default:
					}
					sb.Reset()
					sb.WriteString("UPSERT INTO t (k, ts, v) VALUES ")
					now := time.Now().UTC().Format("2006-01-02T15:04:05.000000Z")
					for i := 0; i < 10; i++ {
						if i > 0 {
							sb.WriteByte(',')
						}
						fmt.Fprintf(&sb, `(%d, Timestamp("%s"), 'live')`, int64(r.Uint64()>>1), now)
					}
					if _, err := tryQuery(ws, sb.String()); err != nil {
						b.Error(err)
						return
					}
					rows.Add(10)
				}
			}()
		}
		<-stop
		wg.Wait()
		return rows.Load()
	}

	var erased, withTTL, alone int64
	var ttlTime time.Duration
	r := rand.New(rand.NewPCG(7, 7))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for lo := 0; lo < expired; lo += 500 {
			var sb strings.Builder
			sb.WriteString("UPSERT INTO t (k, ts, v) VALUES ")
			params := []types.Value{old}
			for j := 0; j < 500; j++ {
				if j > 0 {
					sb.WriteByte(',')
				}
				fmt.Fprintf(&sb, "(%d, $1, 'expired')", -int64(r.Uint64()>>1)-1)
			}
			query(b, s, sb.String(), params...)
		}
		b.StartTimer()

		stop := make(chan struct{})
		done := make(chan int64)
		go func() { done <- load(stop) }()
		start := time.Now()
		n := e.RunTTL()
		d := time.Since(start)
		close(stop)
		withTTL += <-done
		erased += n
		ttlTime += d

		stop = make(chan struct{})
		go func() { done <- load(stop) }()
		time.Sleep(d)
		close(stop)
		alone += <-done
	}
	b.StopTimer()
	secs := ttlTime.Seconds()
	b.ReportMetric(float64(erased)/secs, "erased-rows/s")
	b.ReportMetric(float64(withTTL)/secs, "writes/s-ttl")
	b.ReportMetric(float64(alone)/secs, "writes/s-alone")
	if alone > 0 {
		b.ReportMetric(100*(1-float64(withTTL)/float64(alone)), "slowdown-%")
	}
}
