package sql

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// benchSubqueryTables creates p and q with n rows each (q.v = p.v for
// even ids).
func benchSubqueryTables(b *testing.B, n int) *Session {
	e := testEngine(b)
	s := testSession(b, e)
	query(b, s, "CREATE TABLE p (id Int64, v Int64, PRIMARY KEY (id))")
	query(b, s, "CREATE TABLE q (id Int64, v Int64, PRIMARY KEY (id))")
	for start := 0; start < n; start += 1000 {
		var ps, qs []string
		for i := start; i < min(start+1000, n); i++ {
			ps = append(ps, fmt.Sprintf("(%d, %d)", i, i%97))
			qs = append(qs, fmt.Sprintf("(%d, %d)", i, i%97+i%2))
		}
		query(b, s, "INSERT INTO p VALUES "+strings.Join(ps, ", "))
		query(b, s, "INSERT INTO q VALUES "+strings.Join(qs, ", "))
	}
	return s
}

// BenchmarkCorrelatedPointLookup: the outer value becomes a parameter of
// the inner scan, so each outer row reads one key of q (10k outer rows).
func BenchmarkCorrelatedPointLookup(b *testing.B) {
	s := benchSubqueryTables(b, 10000)
	b.ResetTimer()
	for range b.N {
		rows := query(b, s, "SELECT count(*) FROM p WHERE v = (SELECT v FROM q WHERE q.id = p.id)")
		if got := rows[0][0].Int(); got != 5000 {
			b.Fatalf("got %d", got)
		}
	}
}

// BenchmarkUncorrelatedIn: the subquery runs once and is hashed (10k outer
// rows, 10k subquery rows).
func BenchmarkUncorrelatedIn(b *testing.B) {
	s := benchSubqueryTables(b, 10000)
	b.ResetTimer()
	for range b.N {
		rows := query(b, s, "SELECT count(*) FROM p WHERE id + 5000 NOT IN (SELECT id FROM q)")
		if got := rows[0][0].Int(); got != 5000 {
			b.Fatalf("got %d", got)
		}
	}
}

// BenchmarkCorrelatedCached: 10k outer rows but only 97 distinct outer
// values, so the correlated aggregate runs 97 times.
func BenchmarkCorrelatedCached(b *testing.B) {
	s := benchSubqueryTables(b, 10000)
	b.ResetTimer()
	for range b.N {
		rows := query(b, s, "SELECT count(*) FROM p WHERE id < (SELECT max(id) FROM q WHERE q.v = p.v)")
		if len(rows) != 1 {
			b.Fatal(rows)
		}
	}
}

// BenchmarkUnion: UNION of two 10k-row tables with duplicates removed.
func BenchmarkUnion(b *testing.B) {
	s := benchSubqueryTables(b, 10000)
	b.ResetTimer()
	for range b.N {
		rows := query(b, s, "SELECT v FROM p UNION SELECT v FROM q")
		if len(rows) != 98 {
			b.Fatalf("got %d rows", len(rows))
		}
	}
}

// BenchmarkCorrelatedExists: EXISTS over 10,000 × 10,000 rows correlated
// on a column that is no key and has 10,000 distinct values, so neither
// key ranges nor the per-key result cache help the per-row path (one
// scan of q per outer row); decorrelated, q is read once and hashed.
// Run: go test ./sql -run XXX -bench CorrelatedExists -benchtime=1x
func BenchmarkCorrelatedExists(b *testing.B) {
	e := testEngine(b)
	s := testSession(b, e)
	query(b, s, "CREATE TABLE p (id Int64, r Int64, PRIMARY KEY (id))")
	query(b, s, "CREATE TABLE q (id Int64, r Int64, PRIMARY KEY (id))")
	const n = 10000
	for start := 0; start < n; start += 1000 {
		var ps, qs []string
		for i := start; i < min(start+1000, n); i++ {
			ps = append(ps, fmt.Sprintf("(%d, %d)", i, i))
			qs = append(qs, fmt.Sprintf("(%d, %d)", i, (i*7919)%n+n/2))
		}
		query(b, s, "INSERT INTO p VALUES "+strings.Join(ps, ", "))
		query(b, s, "INSERT INTO q VALUES "+strings.Join(qs, ", "))
	}
	// per-row is the plan before decorrelation (enable_hashjoin off keeps
	// it): about 10 s an operation, so run it with -benchtime=1x.
	for _, mode := range []string{"hashed", "per-row"} {
		b.Run(mode, func(b *testing.B) {
			query(b, s, "SET enable_hashjoin = "+map[string]string{"hashed": "on", "per-row": "off"}[mode])
			for range b.N {
				rows := query(b, s, "SELECT count(*) FROM p WHERE EXISTS (SELECT 1 FROM q WHERE q.r = p.r)")
				if got := rows[0][0].Int(); got != n/2 {
					b.Fatalf("got %d", got)
				}
			}
		})
	}
}

// BenchmarkExistsBenchWorkload is tests/bench's "correlated EXISTS"
// workload in process: kv(k, v) with 100,000 rows, the EXISTS correlated on
// the text column v over the 10,000 rows k < 10000 on both sides. It
// reports the CPU time per query (cpu-ns/op) beside the wall time, which
// on a shared machine includes waiting for a CPU.
// Run: go test ./sql -run XXX -bench ExistsBenchWorkload/prepared -cpuprofile /tmp/cpu.out
func BenchmarkExistsBenchWorkload(b *testing.B) {
	e := testEngine(b)
	s := testSession(b, e)
	query(b, s, "CREATE TABLE kv (k Int64, v Utf8, PRIMARY KEY (k))")
	const n = 100000
	for start := 0; start < n; start += 1000 {
		var rows []string
		for i := start; i < min(start+1000, n); i++ {
			rows = append(rows, fmt.Sprintf("(%d, 'value-%016d')", i, i))
		}
		query(b, s, "INSERT INTO kv VALUES "+strings.Join(rows, ", "))
	}
	const q = "SELECT count(*) FROM kv AS a WHERE a.k < 10000 AND EXISTS (SELECT 1 FROM kv AS b WHERE b.v = a.v AND b.k < 10000)"
	// prepared is how pgx and pgbench -M prepared run it (one plan, many
	// executions); simple parses and plans every time.
	ctx := context.Background()
	b.Run("prepared", func(b *testing.B) {
		p, err := s.Prepare(ctx, q, nil)
		if err != nil {
			b.Fatal(err)
		}
		cpu0 := processCPU()
		for range b.N {
			res, err := s.Execute(ctx, p, nil)
			if err != nil {
				b.Fatal(err)
			}
			row, err := res.Next(ctx)
			if err != nil || row == nil || row[0].Int() != 10000 {
				b.Fatalf("got %v, %v", row, err)
			}
			res.Close()
		}
		b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	})
	b.Run("simple", func(b *testing.B) {
		cpu0 := processCPU()
		for range b.N {
			rows := query(b, s, q)
			if got := rows[0][0].Int(); got != 10000 {
				b.Fatalf("got %d", got)
			}
		}
		b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	})
}
