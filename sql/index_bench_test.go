package sql

import (
	"context"
	"fmt"
	"testing"

	"github.com/pivotdb/pivotdb/sql/types"
)

// BenchmarkIndexLookup compares SELECT ... WHERE n = $1 on 50000 rows
// through an index on n with the same query as a full scan.
func BenchmarkIndexLookup(b *testing.B) {
	for _, indexed := range []bool{true, false} {
		b.Run(fmt.Sprintf("index=%v", indexed), func(b *testing.B) {
			s := loadBench(b, 4, 50000)
			if indexed {
				query(b, s, "CREATE INDEX tn ON t (n)")
			}
			ctx := context.Background()
			p, err := s.Prepare(ctx, "SELECT k FROM t WHERE n = $1", nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				n := execCount(b, s, p, []types.Value{types.NewInt64(int64(i*7919) % 50000)})
				if n != 1 {
					b.Fatalf("%d rows", n)
				}
			}
		})
	}
}

// BenchmarkIndexedUpsert measures what indexes cost a write: the same
// single-row UPSERT into a table with no, one and three indexes on the
// written column.
func BenchmarkIndexedUpsert(b *testing.B) {
	for _, indexes := range []int{0, 1, 3} {
		b.Run(fmt.Sprintf("indexes=%d", indexes), func(b *testing.B) {
			s := loadBench(b, 4, 10000)
			for i := 0; i < indexes; i++ {
				query(b, s, fmt.Sprintf("CREATE INDEX tn%d ON t (n, v)", i))
			}
			ctx := context.Background()
			p, err := s.Prepare(ctx, "UPSERT INTO t (k, n) VALUES ($1, $2)", nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s.BeginImplicit()
				res, err := s.Execute(ctx, p, []types.Value{types.NewInt64(int64(i%20000) * 7919 << 40), types.NewInt64(int64(i))})
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
