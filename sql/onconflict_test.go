package sql

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// TestWriteTailCodes checks the SQLSTATEs of RETURNING and ON CONFLICT
// errors, which the sqllogictest files cannot.
func TestWriteTailCodes(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE oc (id Int64, email Utf8, n Int64, PRIMARY KEY (id))")
	query(t, s, "CREATE UNIQUE INDEX oc_email ON oc (email)")
	query(t, s, "INSERT INTO oc VALUES (1, 'a', 0)")
	for _, c := range []struct{ sql, code string }{
		{"INSERT INTO oc VALUES (2, 'b', 0), (2, 'c', 0) ON CONFLICT (id) DO UPDATE SET n = 1", sqlerr.CardinalityViolation},
		{"INSERT INTO oc VALUES (1, 'b', 0) ON CONFLICT (n) DO NOTHING", sqlerr.InvalidColumnReference},
		{"INSERT INTO oc VALUES (1, 'b', 0) ON CONFLICT ON CONSTRAINT nope DO NOTHING", sqlerr.UndefinedObject},
		{"INSERT INTO oc VALUES (1, 'b', 0) ON CONFLICT (nope) DO NOTHING", sqlerr.UndefinedColumn},
		{"INSERT INTO oc VALUES (1, 'b', 0) ON CONFLICT DO UPDATE SET n = 1", sqlerr.SyntaxError},
		{"INSERT INTO oc VALUES (1, 'b', 0) ON CONFLICT (id) DO UPDATE SET n = n + 1", sqlerr.AmbiguousColumn},
		{"INSERT INTO oc VALUES (9, 'a', 0) ON CONFLICT (id) DO NOTHING", sqlerr.UniqueViolation},
		{"INSERT INTO oc VALUES (1, 'b', 0) ON CONFLICT (lower(email)) DO NOTHING", sqlerr.FeatureNotSupported},
		{"INSERT INTO oc VALUES (3, 'b', 0) RETURNING count(*)", sqlerr.GroupingError},
		{"DELETE FROM oc RETURNING nope", sqlerr.UndefinedColumn},
	} {
		wantStmtCode(t, s, c.sql, c.code)
	}
	if got := formatRows(query(t, s, "SELECT id, email, n FROM oc")); got != `1,"a",0` {
		t.Fatalf("failed statements changed the table: %s", got)
	}
}

// TestReturningDescribe checks that a prepared write with RETURNING
// describes its rows (RowDescription in the extended protocol) and that
// the command tag still counts the rows written.
func TestReturningDescribe(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE d (id Int64, v Utf8, PRIMARY KEY (id))")
	ctx := context.Background()
	s.BeginImplicit()
	defer s.Sync()
	p, err := s.Prepare(ctx, "INSERT INTO d VALUES ($1, $2) RETURNING id, v || '!' AS w", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Columns) != 2 || p.Columns[0].Name != "id" || p.Columns[0].Type != types.TypeInt64 ||
		p.Columns[0].TableOID == 0 || p.Columns[0].ColumnNumber != 1 || p.Columns[1].Name != "w" {
		t.Fatalf("columns %+v", p.Columns)
	}
	res, err := s.Execute(ctx, p, []types.Value{types.NewInt64(5), types.NewUtf8("x")})
	if err != nil {
		t.Fatal(err)
	}
	row, err := res.Next(ctx)
	if err != nil || row == nil || row[0].Int() != 5 || row[1].Text() != "x!" {
		t.Fatalf("row %v, %v", row, err)
	}
	if row, _ := res.Next(ctx); row != nil {
		t.Fatalf("extra row %v", row)
	}
	if tag := res.Tag(); tag != "INSERT 0 1" {
		t.Fatalf("tag %q", tag)
	}
	res.Close()
}

// TestOnConflictRandom runs random batches of INSERT ... ON CONFLICT
// against a map that applies PostgreSQL's rules row by row, and compares
// the table, the RETURNING rows and the errors.
func TestOnConflictRandom(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE kv (k Int64, u Int64, v Int64, PRIMARY KEY (k))")
	query(t, s, "CREATE UNIQUE INDEX kv_u ON kv (u)")
	type row struct{ u, v int64 }
	model := map[int64]row{}
	byU := func(u int64) (int64, bool) {
		for k, r := range model {
			if r.u == u {
				return k, true
			}
		}
		return 0, false
	}
	for step := 0; step < 300; step++ {
		n := 1 + rng.IntN(3)
		type prop struct{ k, u, v int64 }
		props := make([]prop, n)
		values := ""
		for i := range props {
			props[i] = prop{rng.Int64N(8), rng.Int64N(8), rng.Int64N(100)}
			if i > 0 {
				values += ", "
			}
			values += fmt.Sprintf("(%d, %d, %d)", props[i].k, props[i].u, props[i].v)
		}
		onU := rng.IntN(2) == 0
		doNothing := rng.IntN(3) == 0
		target := "(k)"
		if onU {
			target = "(u)"
		}
		action := "DO UPDATE SET v = kv.v + excluded.v"
		if doNothing {
			action = "DO NOTHING"
		}
		sql := fmt.Sprintf("INSERT INTO kv VALUES %s ON CONFLICT %s %s RETURNING k, v", values, target, action)

		// The model: apply row by row on a copy; any error undoes all.
		next := map[int64]row{}
		for k, r := range model {
			next[k] = r
		}
		saved := model
		model = next
		touched := map[int64]bool{}
		var want []string
		wantErr := ""
		for _, p := range props {
			var ck int64
			var found bool
			if onU {
				ck, found = byU(p.u)
			} else {
				_, found = model[p.k]
				ck = p.k
			}
			if !found {
				// Insert; a conflict on the other unique constraint fails.
				if _, dup := model[p.k]; dup {
					wantErr = sqlerr.UniqueViolation
					break
				}
				if _, dup := byU(p.u); dup {
					wantErr = sqlerr.UniqueViolation
					break
				}
				model[p.k] = row{p.u, p.v}
				touched[p.k] = true
				want = append(want, fmt.Sprintf("%d,%d", p.k, p.v))
				continue
			}
			if doNothing {
				continue
			}
			if touched[ck] {
				wantErr = sqlerr.CardinalityViolation
				break
			}
			r := model[ck]
			r.v += p.v
			model[ck] = r
			touched[ck] = true
			want = append(want, fmt.Sprintf("%d,%d", ck, r.v))
		}
		if wantErr != "" {
			model = saved
		}
		rows, err := tryQuery(s, sql)
		gotErr := ""
		if err != nil {
			var se *sqlerr.Error
			if e, ok := err.(*sqlerr.Error); ok {
				se = e
			}
			if se == nil {
				t.Fatalf("seed %d step %d: %s: %v", seed, step, sql, err)
			}
			gotErr = se.Code
		}
		if gotErr != wantErr {
			t.Fatalf("seed %d step %d: %s: error %q, want %q (%v)", seed, step, sql, gotErr, wantErr, err)
		}
		if wantErr == "" {
			got := formatRows(rows)
			if w := joinRows(want); got != w {
				t.Fatalf("seed %d step %d: %s: returned %s, want %s", seed, step, sql, got, w)
			}
		}
		var all []string
		for _, r := range query(t, s, "SELECT k, u, v FROM kv ORDER BY k") {
			all = append(all, fmt.Sprintf("%d,%d,%d", r[0].Int(), r[1].Int(), r[2].Int()))
		}
		var wantAll []string
		for k := int64(0); k < 8; k++ {
			if r, ok := model[k]; ok {
				wantAll = append(wantAll, fmt.Sprintf("%d,%d,%d", k, r.u, r.v))
			}
		}
		if fmt.Sprint(all) != fmt.Sprint(wantAll) {
			t.Fatalf("seed %d step %d: %s: table %v, want %v", seed, step, sql, all, wantAll)
		}
		if step%50 == 49 {
			query(t, s, "DELETE FROM kv WHERE v > 150")
			for k, r := range model {
				if r.v > 150 {
					delete(model, k)
				}
			}
		}
	}
	checkIndexes(t, e)
}

func joinRows(rows []string) string {
	out := ""
	for i, r := range rows {
		if i > 0 {
			out += "|"
		}
		out += r
	}
	return out
}

// TestOnConflictConcurrent has sessions race to insert the same unique
// value (run it with -race): the value tuple's lock orders them, so every
// statement either inserts the row or updates it, and no count is lost.
func TestOnConflictConcurrent(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE hits (k Int64, u Utf8, n Int64, PRIMARY KEY (k))")
	query(t, s, "CREATE UNIQUE INDEX hits_u ON hits (u)")
	query(t, s, "CREATE SEQUENCE hit_ids")
	const workers, each = 6, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		ws := testSession(t, e)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				for {
					_, err := tryQuery(ws, "INSERT INTO hits VALUES (nextval('hit_ids'), 'page', 1) "+
						"ON CONFLICT (u) DO UPDATE SET n = hits.n + excluded.n")
					var se *sqlerr.Error
					if errors.As(err, &se) && (se.Code == sqlerr.SerializationFailure || se.Code == sqlerr.DeadlockDetected) {
						continue // retry, as a client would
					}
					if err != nil {
						errs <- err
						return
					}
					break
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := formatRows(query(t, s, "SELECT count(*), sum(n) FROM hits")); got != fmt.Sprintf("1,%d", workers*each) {
		t.Fatalf("count, sum: %s, want 1,%d", got, workers*each)
	}
	checkIndexes(t, e)
}
