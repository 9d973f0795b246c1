package sql

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/sql/types"
)

// loadBench creates table t with the given number of uniform shards and
// rows spread over the Int64 key range.
func loadBench(b *testing.B, shards, rows int) *Session {
	e := testEngine(b)
	s := testSession(b, e)
	query(b, s, fmt.Sprintf("CREATE TABLE t (k Int64, v Utf8, n Int64, PRIMARY KEY (k)) WITH (UNIFORM_PARTITIONS = %d)", shards))
	const batch = 1000
	step := int64(^uint64(0)>>1) / int64(rows) * 2
	for i := 0; i < rows; i += batch {
		var sb strings.Builder
		sb.WriteString("INSERT INTO t VALUES ")
		for j := i; j < i+batch && j < rows; j++ {
			if j > i {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "(%d, 'value-%d', %d)", -int64(^uint64(0)>>1)+int64(j)*step, j, j)
		}
		query(b, s, sb.String())
	}
	return s
}

// BenchmarkFullScan compares a filtered full scan of the same data in 1 and
// 16 shards: with 16, workers decode and filter shards in parallel.
func BenchmarkFullScan(b *testing.B) {
	for _, shards := range []int{1, 16} {
		b.Run(fmt.Sprintf("shards=%d", shards), func(b *testing.B) {
			s := loadBench(b, shards, 200000)
			runtime.GC()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rows := query(b, s, "SELECT count(*) FROM t WHERE n % 7 = 3 AND v LIKE 'value-1%'")
				if len(rows) != 1 {
					b.Fatal("no result")
				}
			}
			b.ReportMetric(float64(200000*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkPointUpsert measures routing overhead: the same single-row
// UPSERT into a 1-shard and a 16-shard table.
func BenchmarkPointUpsert(b *testing.B) {
	for _, shards := range []int{1, 16} {
		b.Run(fmt.Sprintf("shards=%d", shards), func(b *testing.B) {
			s := loadBench(b, shards, 10000)
			ctx := context.Background()
			p, err := s.Prepare(ctx, "UPSERT INTO t (k, v) VALUES ($1, $2)", nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s.BeginImplicit()
				res, err := s.Execute(ctx, p, []types.Value{types.NewInt64(int64(i) * 7919 << 40), types.NewUtf8("x")})
				if err != nil {
					b.Fatal(err)
				}
				res.Close()
				if err := s.Sync(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPointSelect compares a point SELECT by key on a plain table with
// the same lookup on a table keyed by (hash AS farm_hash(key), key), which
// computes the hash at execution to find the key (issue 4 target: within
// 10%).
func BenchmarkPointSelect(b *testing.B) {
	for _, kind := range []string{"plain", "hashed"} {
		b.Run(kind, func(b *testing.B) {
			e := testEngine(b)
			s := testSession(b, e)
			ddl := "CREATE TABLE t (key Utf8, v Int64, PRIMARY KEY (key)) WITH (PARTITION_AT_KEYS = (('key-5')))"
			if kind == "hashed" {
				ddl = "CREATE TABLE t (hash Uint64 AS (farm_hash(key)), key Utf8, v Int64, PRIMARY KEY (hash, key)) WITH (UNIFORM_PARTITIONS = 16)"
			}
			query(b, s, ddl)
			var sb strings.Builder
			sb.WriteString("INSERT INTO t (key, v) VALUES ")
			for i := 0; i < 10000; i++ {
				if i > 0 {
					sb.WriteByte(',')
				}
				fmt.Fprintf(&sb, "('key-%d', %d)", i, i)
			}
			query(b, s, sb.String())
			ctx := context.Background()
			p, err := s.Prepare(ctx, "SELECT v FROM t WHERE key = $1", nil)
			if err != nil {
				b.Fatal(err)
			}
			keys := make([]types.Value, 1024)
			for i := range keys {
				keys[i] = types.NewUtf8(fmt.Sprintf("key-%d", i*7%10000))
			}
			run := func(b *testing.B, stmtCtx func() (context.Context, context.CancelCauseFunc)) {
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := processCPU()
				for i := 0; i < b.N; i++ {
					ctx, cancel := stmtCtx()
					res, err := s.Execute(ctx, p, []types.Value{keys[i%len(keys)]})
					if err != nil {
						b.Fatal(err)
					}
					if row, err := res.Next(ctx); err != nil || row == nil {
						b.Fatalf("no row: %v", err)
					}
					res.Close()
					cancel(nil)
				}
				b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			}
			b.Run("background", func(b *testing.B) {
				run(b, func() (context.Context, context.CancelCauseFunc) { return ctx, func(error) {} })
			})
			// As the server runs a statement: under a cancellable context
			// of its own (the portal's), derived from the connection's.
			connCtx, stopConn := context.WithCancelCause(ctx)
			defer stopConn(nil)
			b.Run("portal-context", func(b *testing.B) {
				run(b, func() (context.Context, context.CancelCauseFunc) { return context.WithCancelCause(connCtx) })
			})
		})
	}
}
