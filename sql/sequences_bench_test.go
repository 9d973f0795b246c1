package sql

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
)

// BenchmarkNextval runs SELECT nextval('s') from 16 sessions at once on an
// engine that syncs its writes, as a server does: with the default CACHE
// one synced write reserves 1000 values, with CACHE 1 every value waits
// for one. It reports values handed out per second (issue 19: ≥ 50k/s at
// 16 clients).
func BenchmarkNextval(b *testing.B) {
	for _, cache := range []int{1000, 1} {
		b.Run(fmt.Sprintf("clients=16/cache=%d", cache), func(b *testing.B) {
			quiet := storage.SlogLogger{L: slog.New(slog.NewTextHandler(io.Discard, nil))}
			e, err := Open(Options{DataDir: b.TempDir(), Logger: quiet})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			query(b, testSession(b, e), fmt.Sprintf("CREATE SEQUENCE s CACHE %d", cache))
			const clients = 16
			ctx := context.Background()
			sessions := make([]*Session, clients)
			prepared := make([]*Prepared, clients)
			for i := range sessions {
				sessions[i] = testSession(b, e)
				if prepared[i], err = sessions[i].Prepare(ctx, "SELECT nextval('s')", nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for c := 0; c < clients; c++ {
				n := b.N / clients
				if c < b.N%clients {
					n++
				}
				wg.Add(1)
				go func(s *Session, p *Prepared, n int) {
					defer wg.Done()
					for i := 0; i < n; i++ {
						if execCount(b, s, p, nil) != 1 {
							b.Error("no row")
							return
						}
					}
				}(sessions[c], prepared[c], n)
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "values/s")
		})
	}
}

// BenchmarkOnConflictVsUpsert compares a single-row INSERT ... ON CONFLICT
// (k) DO UPDATE with the single-row UPSERT that writes the same row, half
// of the keys present (issue 19: ON CONFLICT ≥ 0.9× UPSERT). The two run
// alternately on two equal tables, so that both see the same load of the
// machine, on two copies of the same table; it reports each one's time per statement and throughput_ratio,
// ON CONFLICT's throughput over UPSERT's.
func BenchmarkOnConflictVsUpsert(b *testing.B) {
	s := loadBench(b, 4, 10000)
	// Two copies loaded the same way, one for each statement.
	for _, name := range []string{"t_up", "t_oc"} {
		query(b, s, "CREATE TABLE "+name+" (k Int64, v Utf8, n Int64, PRIMARY KEY (k)) WITH (UNIFORM_PARTITIONS = 4)")
		query(b, s, "INSERT INTO "+name+" SELECT k, v, n FROM t")
	}
	ctx := context.Background()
	up, err := s.Prepare(ctx, "UPSERT INTO t_up (k, v) VALUES ($1, $2)", nil)
	if err != nil {
		b.Fatal(err)
	}
	oc, err := s.Prepare(ctx, "INSERT INTO t_oc (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = excluded.v", nil)
	if err != nil {
		b.Fatal(err)
	}
	run := func(p *Prepared, k int64) time.Duration {
		start := time.Now()
		s.BeginImplicit()
		res, err := s.Execute(ctx, p, []types.Value{types.NewInt64(k), types.NewUtf8("x")})
		if err != nil {
			b.Fatal(err)
		}
		res.Close()
		if err := s.Sync(); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	step := int64(^uint64(0)>>1) / 10000 * 2
	var upTime, ocTime time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Even i: a key loadBench wrote; odd i: a new one.
		k := -int64(^uint64(0)>>1) + int64(i%20000/2)*step + int64(i%2)
		if i%2 == 0 {
			upTime += run(up, k)
			ocTime += run(oc, k)
		} else {
			ocTime += run(oc, k)
			upTime += run(up, k)
		}
	}
	b.ReportMetric(float64(upTime.Nanoseconds())/float64(b.N), "upsert-ns/op")
	b.ReportMetric(float64(ocTime.Nanoseconds())/float64(b.N), "onconflict-ns/op")
	b.ReportMetric(float64(upTime)/float64(ocTime), "throughput_ratio")
}
