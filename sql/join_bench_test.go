package sql

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkHashJoin joins two 5,000-row tables on a non-key equality
// (every row matches one row).
func BenchmarkHashJoin(b *testing.B) {
	s := testSession(b, testEngine(b))
	for _, t := range []string{"hl", "hr"} {
		query(b, s, fmt.Sprintf("CREATE TABLE %s (id Int64, v Int64, PRIMARY KEY (id))", t))
		for lo := 0; lo < 5000; lo += 500 {
			var vals []string
			for i := lo; i < lo+500; i++ {
				vals = append(vals, fmt.Sprintf("(%d, %d)", i, (i*7919)%5000))
			}
			query(b, s, fmt.Sprintf("INSERT INTO %s VALUES %s", t, strings.Join(vals, ", ")))
		}
	}
	b.ResetTimer()
	for b.Loop() {
		rows := query(b, s, "SELECT count(*) FROM hl, hr WHERE hl.v = hr.v")
		if rows[0][0].Int() != 5000 {
			b.Fatalf("got %v", rows)
		}
	}
}

// BenchmarkJoinChain64 is select5.test's shape: 64 ten-row tables joined
// in a chain of equalities, written in an order that is not the chain's.
func BenchmarkJoinChain64(b *testing.B) {
	s := testSession(b, testEngine(b))
	const n = 64
	var from, where []string
	for t := 1; t <= n; t++ {
		query(b, s, fmt.Sprintf("CREATE TABLE c%d (a Int64, b Int64, PRIMARY KEY (a))", t))
		var vals []string
		for i := 0; i < 10; i++ {
			vals = append(vals, fmt.Sprintf("(%d, %d)", i, (i+t)%10))
		}
		query(b, s, fmt.Sprintf("INSERT INTO c%d VALUES %s", t, strings.Join(vals, ", ")))
		from = append(from, fmt.Sprintf("c%d", (t*37)%n+1))
		if t > 1 {
			where = append(where, fmt.Sprintf("c%d.b = c%d.a", t-1, t))
		}
	}
	sql := "SELECT count(*) FROM " + strings.Join(from, ", ") + " WHERE " + strings.Join(where, " AND ") + " AND c1.a = 3"
	b.ResetTimer()
	for b.Loop() {
		rows := query(b, s, sql)
		if rows[0][0].Int() != 1 {
			b.Fatalf("got %v", rows)
		}
	}
}
