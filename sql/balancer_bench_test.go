package sql

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
)

// BenchmarkWritesDuringSplitStorm measures single-row UPSERT throughput
// through sessions (4 per CPU) on a table of 20k rows in 4 shards, quiet and
// during a split storm: a goroutine that splits a shard at a random key
// and merges it back, for the whole run, either back to back (storm=max) or
// with a 20 ms pause after each pair (storm=paced: 40-90 reshapes/s, more
// than the busiest balancer of the tests, about 30/s in the kill test). Each split and merge pauses the
// table's writers for its swap batch (synced when sync=true) and each split
// counts its new left shard without blocking them. Compare ops/s with
// storm=none; reshapes/s is the storm's rate.
func BenchmarkWritesDuringSplitStorm(b *testing.B) {
	for _, sync := range []bool{false, true} {
		for _, storm := range []struct {
			name  string
			pause time.Duration // Between pairs; negative: no storm.
		}{{"none", -1}, {"paced", 20 * time.Millisecond}, {"max", 0}} {
			b.Run(fmt.Sprintf("sync=%v/storm=%s", sync, storm.name), func(b *testing.B) {
				benchSplitStorm(b, sync, storm.pause)
			})
		}
	}
}

func benchSplitStorm(b *testing.B, sync bool, pause time.Duration) {
	quiet := storage.SlogLogger{L: slog.New(slog.NewTextHandler(io.Discard, nil))}
	e, err := Open(Options{DataDir: b.TempDir(), NoSync: !sync, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	s := testSession(b, e)
	query(b, s, "CREATE TABLE t (k Int64, v Utf8, PRIMARY KEY (k)) WITH (PARTITION_AT_KEYS = ((5000), (10000), (15000)))")
	const rows = 20000
	for lo := 0; lo < rows; lo += 1000 {
		var sb strings.Builder
		sb.WriteString("INSERT INTO t VALUES ")
		for k := lo; k < lo+1000; k++ {
			if k > lo {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "(%d, 'value-%d')", k, k)
		}
		query(b, s, sb.String())
	}
	tbl, _ := e.catalog.Snapshot().Table(s.db.ID, "t")

	stop := make(chan struct{})
	stormDone := make(chan struct{})
	var reshapes atomic.Int64
	go func() {
		defer close(stormDone)
		if pause < 0 {
			return
		}
		r := rand.New(rand.NewPCG(1, 2))
		for {
			select {
			case <-stop:
				return
			case <-time.After(pause):
			}
			pivot := encodePivots(tbl, [][]types.Value{{types.NewInt64(r.Int64N(rows))}})[0]
			sm := e.shards.Map(tbl.ID)
			if k := sm.Find(pivot); k < 0 || string(sm.Shard(k).Span.Start) == string(pivot) {
				continue // Already a pivot: splitting would change nothing.
			}
			next, err := e.shards.Split(tbl.ID, [][]byte{pivot})
			if err != nil {
				panic(err)
			}
			k := next.Find(pivot)
			if _, err := e.shards.Merge(tbl.ID, next.Shard(k-1).ID, 2); err != nil {
				panic(err)
			}
			reshapes.Add(2)
		}
	}()

	b.SetParallelism(4)
	start := time.Now()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ws, err := e.NewSession("pivotdb", "pivotdb")
		if err != nil {
			panic(err)
		}
		defer ws.Close()
		ctx := context.Background()
		p, err := ws.Prepare(ctx, "UPSERT INTO t (k, v) VALUES ($1, $2)", nil)
		if err != nil {
			panic(err)
		}
		r := rand.New(rand.NewPCG(rand.Uint64(), 3))
		for pb.Next() {
			ws.BeginImplicit()
			res, err := ws.Execute(ctx, p, []types.Value{types.NewInt64(r.Int64N(rows)), types.NewUtf8("updated")})
			if err != nil {
				panic(err)
			}
			res.Close()
			if err := ws.Sync(); err != nil {
				panic(err)
			}
		}
	})
	b.StopTimer()
	elapsed := time.Since(start).Seconds()
	close(stop)
	<-stormDone
	b.ReportMetric(float64(b.N)/elapsed, "ops/s")
	b.ReportMetric(float64(reshapes.Load())/elapsed, "reshapes/s")
	if err := e.shards.CheckInvariants(); err != nil {
		b.Fatal(err)
	}
}
