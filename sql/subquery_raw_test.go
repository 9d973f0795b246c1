package sql

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/exec"
	"github.com/pivotdb/pivotdb/sql/types"
)

// TestDecorrelatedRawKeys compares decorrelated EXISTS and NOT EXISTS
// whose build side reads its key column straight from the stored rows
// (exec's rawKey) with an oracle, over random tables: text and integer
// keys, NULL keys on either
// side, duplicate keys, an empty inner table, a filter left on the inner
// scan, a column added with a DEFAULT after some rows were written (those
// rows read the default) and a dropped column still in older rows. The
// test fails if a query does not take the raw path.
func TestDecorrelatedRawKeys(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 11))
	type qrow struct {
		id        int64
		t         *string
		n         *int64
		a         *string // the column added with DEFAULT 'd1'
		beforeAdd bool
	}
	type prow struct {
		id int64
		t  *string
		n  *int64
	}
	str := func() *string {
		if r.IntN(5) == 0 {
			return nil
		}
		v := []string{"", "a", "b", "value-1", "value-2", "d1", "é"}[r.IntN(7)]
		return &v
	}
	num := func() *int64 {
		if r.IntN(5) == 0 {
			return nil
		}
		v := int64(r.IntN(12) - 2)
		return &v
	}
	lit := func(p any) string {
		switch v := p.(type) {
		case *string:
			if v == nil {
				return "NULL"
			}
			return "'" + *v + "'"
		case *int64:
			if v == nil {
				return "NULL"
			}
			return fmt.Sprint(*v)
		}
		panic(p)
	}
	queries := []struct {
		sql   string
		param int64
		match func(p prow, q qrow, param int64) bool
		anti  bool
	}{
		{"SELECT id FROM p WHERE EXISTS (SELECT 1 FROM q WHERE q.t = p.t) ORDER BY id", 0,
			func(p prow, q qrow, _ int64) bool { return p.t != nil && q.t != nil && *p.t == *q.t }, false},
		{"SELECT id FROM p WHERE NOT EXISTS (SELECT 1 FROM q WHERE q.t = p.t) ORDER BY id", 0,
			func(p prow, q qrow, _ int64) bool { return p.t != nil && q.t != nil && *p.t == *q.t }, true},
		{"SELECT id FROM p WHERE EXISTS (SELECT 1 FROM q WHERE q.n = p.n) ORDER BY id", 0,
			func(p prow, q qrow, _ int64) bool { return p.n != nil && q.n != nil && *p.n == *q.n }, false},
		{"SELECT id FROM p WHERE NOT EXISTS (SELECT 1 FROM q WHERE p.n = q.n AND q.id > $1) ORDER BY id", 5,
			func(p prow, q qrow, param int64) bool {
				return p.n != nil && q.n != nil && *p.n == *q.n && q.id > param
			}, true},
		{"SELECT id FROM p WHERE EXISTS (SELECT 1 FROM q WHERE q.a = p.t AND q.n IS NOT NULL) ORDER BY id", 0,
			func(p prow, q qrow, _ int64) bool {
				a := q.a
				if q.beforeAdd {
					d := "d1"
					a = &d
				}
				return p.t != nil && a != nil && *p.t == *a && q.n != nil
			}, false},
	}
	for round := 0; round < 8; round++ {
		for _, stmt := range []string{"DROP TABLE IF EXISTS p", "DROP TABLE IF EXISTS q",
			"CREATE TABLE p (id Int64, t Utf8, n Int64, PRIMARY KEY (id))",
			"CREATE TABLE q (g Int64, id Int64, gone Utf8, t Utf8, n Int64, PRIMARY KEY (g, id))"} {
			query(t, s, stmt)
		}
		var ps []prow
		var qs []qrow
		var vals []string
		for i := range r.IntN(30) {
			p := prow{id: int64(i), t: str(), n: num()}
			ps = append(ps, p)
			vals = append(vals, fmt.Sprintf("(%d, %s, %s)", p.id, lit(p.t), lit(p.n)))
		}
		if len(vals) > 0 {
			query(t, s, "INSERT INTO p VALUES "+strings.Join(vals, ", "))
		}
		empty := round == 0 // the inner table stays empty
		vals = vals[:0]
		for i := range r.IntN(30) * map[bool]int{true: 0, false: 1}[empty] {
			q := qrow{id: int64(i), t: str(), n: num(), beforeAdd: true}
			qs = append(qs, q)
			vals = append(vals, fmt.Sprintf("(%d, %d, 'gone%d', %s, %s)", q.id%3, q.id, i, lit(q.t), lit(q.n)))
		}
		if len(vals) > 0 {
			query(t, s, "INSERT INTO q VALUES "+strings.Join(vals, ", "))
		}
		query(t, s, "ALTER TABLE q DROP COLUMN gone")
		query(t, s, "ALTER TABLE q ADD COLUMN a Utf8 DEFAULT 'd1'")
		vals = vals[:0]
		for i := range r.IntN(20) * map[bool]int{true: 0, false: 1}[empty] {
			q := qrow{id: int64(100 + i), t: str(), n: num(), a: str()}
			qs = append(qs, q)
			vals = append(vals, fmt.Sprintf("(%d, %d, %s, %s, %s)", q.id%3, q.id, lit(q.t), lit(q.n), lit(q.a)))
		}
		if len(vals) > 0 {
			query(t, s, "INSERT INTO q (g, id, t, n, a) VALUES "+strings.Join(vals, ", "))
		}
		for _, tq := range queries {
			var params []types.Value
			if strings.Contains(tq.sql, "$1") {
				params = append(params, types.NewInt64(tq.param))
			}
			var want []string
			for _, p := range ps {
				hit := slices.ContainsFunc(qs, func(q qrow) bool { return tq.match(p, q, tq.param) })
				if hit != tq.anti {
					want = append(want, fmt.Sprint(p.id))
				}
			}
			if plan := fmt.Sprint(query(t, s, "EXPLAIN "+tq.sql, params...)); !strings.Contains(plan, "HashSemiJoin") && !strings.Contains(plan, "HashAntiJoin") {
				t.Fatalf("%s: not hashed: %s", tq.sql, plan)
			}
			before := exec.RawKeyBuilds.Load()
			var got []string
			for _, row := range query(t, s, tq.sql, params...) {
				got = append(got, showValue(row[0]))
			}
			if len(ps) > 0 && exec.RawKeyBuilds.Load() == before {
				t.Fatalf("%s: the build did not read its keys raw", tq.sql)
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("seed %d round %d: %s ($1 = %d)\np=%v\nq=%v\ngot  %v\nwant %v", seed, round, tq.sql, tq.param, ps, qs, got, want)
			}
		}
	}
}
