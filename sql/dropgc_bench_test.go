package sql

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"
)

// BenchmarkTruncateKeep compares what keeping a table's rows for AS OF
// SYSTEM TIME costs TRUNCATE the way it does it (a new key space, the old
// one left to a GC job: "newid") with the alternative of a tombstone
// version per row ("tombstones", measured as DELETE FROM t, which writes
// exactly those). Rows: PIVOTDB_TRUNCATE_ROWS, default 100,000.
func BenchmarkTruncateKeep(b *testing.B) {
	rows := 100_000
	if v := os.Getenv("PIVOTDB_TRUNCATE_ROWS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			b.Fatal(err)
		}
		rows = n
	}
	e := testEngine(b)
	s := testSession(b, e)
	query(b, s, "CREATE TABLE t (k Int64, v Utf8, PRIMARY KEY (k))")
	fill := func() {
		for lo := 1; lo <= rows; lo += 10_000 {
			query(b, s, fmt.Sprintf("INSERT INTO t SELECT x, 'value-' || x::Utf8 FROM generate_series(%d, %d) AS g(x)", lo, min(lo+9_999, rows)))
		}
	}
	for _, c := range []struct{ name, sql string }{{"newid", "TRUNCATE t"}, {"tombstones", "DELETE FROM t"}} {
		b.Run(c.name, func(b *testing.B) {
			var took time.Duration
			for i := 0; i < b.N; i++ {
				fill()
				start := time.Now()
				query(b, s, c.sql)
				took += time.Since(start)
			}
			b.ReportMetric(float64(took.Nanoseconds())/float64(b.N), "stmt-ns/op")
		})
	}
}
