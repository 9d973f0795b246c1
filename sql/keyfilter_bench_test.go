package sql

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/sql/types"
)

// BenchmarkSelectINList reads 100 keys with `key IN (...)` from a table
// keyed by (hash AS farm_hash(key), key) in 16 shards, half of the keys
// present: the full keys are read by point lookups, serially, without an
// iterator or a goroutine per key or shard (sql/exec/pointscan.go). With
// bloom=on the table has KEY_BLOOM_FILTER = ENABLED.
//
//	go test ./sql -run '^$' -bench SelectINList
func BenchmarkSelectINList(b *testing.B) {
	for _, bloom := range []string{"off", "on"} {
		b.Run("bloom="+bloom, func(b *testing.B) {
			e := testEngine(b)
			s := testSession(b, e)
			with := "UNIFORM_PARTITIONS = 16"
			if bloom == "on" {
				with += ", KEY_BLOOM_FILTER = ENABLED"
			}
			query(b, s, "CREATE TABLE t (hash Uint64 AS (farm_hash(key)), key Utf8, v Int64, PRIMARY KEY (hash, key)) WITH ("+with+")")
			var sb strings.Builder
			sb.WriteString("INSERT INTO t (key, v) VALUES ")
			for i := 0; i < 20000; i++ {
				if i > 0 {
					sb.WriteByte(',')
				}
				fmt.Fprintf(&sb, "('key-%d', %d)", i, i)
			}
			query(b, s, sb.String())
			if err := e.Storage().Flush(); err != nil {
				b.Fatal(err)
			}
			keys := make([]string, 100)
			for i := range keys {
				keys[i] = fmt.Sprintf("'key-%d'", i*397) // i*397 < 20000 for half of them
			}
			ctx := context.Background()
			p, err := s.Prepare(ctx, "SELECT v FROM t WHERE key IN ("+strings.Join(keys, ", ")+")", nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				n := execCount(b, s, p, []types.Value{})
				if n != 51 {
					b.Fatalf("%d rows, want 51", n)
				}
			}
			b.ReportMetric(float64(100*b.N)/b.Elapsed().Seconds(), "keys/s")
		})
	}
}
