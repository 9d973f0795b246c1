package sql

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/rowenc"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
)

// checkIndexes verifies the index invariant of every table of the engine:
// each index holds exactly one entry per stored row, at the key the row
// gives it, and nothing else.
func checkIndexes(t *testing.T, e *Engine) {
	t.Helper()
	snap := e.catalog.Snapshot()
	for _, db := range snap.Databases() {
		for _, tbl := range snap.Tables(db.ID) {
			for i := range tbl.Indexes {
				checkIndex(t, e, tbl, &tbl.Indexes[i])
			}
		}
	}
}

func checkIndex(t *testing.T, e *Engine, tbl *catalog.Table, ix *catalog.Index) {
	t.Helper()
	et := tbl.IndexTable(ix)
	var want, got []string
	scanAll := func(id uint64, fn func(k, v []byte)) {
		it, err := e.storage.NewIter(storage.TableSpan(id))
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		for ok := it.First(); ok; ok = it.Next() {
			fn(it.Key(), it.Value())
		}
		if err := it.Error(); err != nil {
			t.Fatal(err)
		}
	}
	scanAll(tbl.ID, func(k, v []byte) {
		row, err := rowenc.DecodeRow(tbl, k, v)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, string(rowenc.EncodeKey(et, row)))
	})
	scanAll(ix.ID, func(k, v []byte) {
		if len(v) != 0 {
			t.Fatalf("index %s: entry with a value", ix.Name)
		}
		got = append(got, string(k))
	})
	sort.Strings(want)
	if !slices.Equal(want, got) {
		t.Fatalf("index %s of %s: %d entries, want %d (entries and rows differ)", ix.Name, tbl.Name, len(got), len(want))
	}
}

// indexOracleRow is a row of the randomized test's table r.
type indexOracleRow struct {
	id      int64
	a, c    *int64
	b       *string
	deleted bool
}

func (r indexOracleRow) text() string {
	f := func(p *int64) string {
		if p == nil {
			return "NULL"
		}
		return fmt.Sprint(*p)
	}
	b := "NULL"
	if r.b != nil {
		b = *r.b
	}
	return fmt.Sprintf("%d|%s|%s|%s", r.id, f(r.a), b, f(r.c))
}

func rowsText(rows [][]types.Value) []string {
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		parts := make([]string, len(r))
		for i, v := range r {
			if v.IsNull() {
				parts[i] = "NULL"
			} else {
				parts[i] = v.Text()
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	sort.Strings(out)
	return out
}

func sqlInt(p *int64) string {
	if p == nil {
		return "NULL"
	}
	return fmt.Sprint(*p)
}

func sqlStr(p *string) string {
	if p == nil {
		return "NULL"
	}
	return "'" + *p + "'"
}

// TestIndexRandomized runs random writes against a table with a plain, a
// composite and a unique index and a simple in-memory oracle: every write
// must succeed or fail (23505) as the oracle says, every index-backed
// query must return what a scan of the oracle does, and the indexes must
// hold exactly the rows' entries.
func TestIndexRandomized(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE r (id Int64, a Int64, b Utf8, c Int64, PRIMARY KEY (id)) WITH (UNIFORM_PARTITIONS = 3)")
	query(t, s, "CREATE INDEX ra ON r (a)")
	query(t, s, "CREATE INDEX rba ON r (b, a DESC)")
	query(t, s, "CREATE UNIQUE INDEX rc ON r (c)")

	oracle := map[int64]*indexOracleRow{}
	randInt := func(n int64) *int64 {
		if rng.IntN(6) == 0 {
			return nil
		}
		v := rng.Int64N(n)
		return &v
	}
	strs := []string{"x", "y", "z"}
	randStr := func() *string {
		if rng.IntN(5) == 0 {
			return nil
		}
		return &strs[rng.IntN(len(strs))]
	}
	// uniqueOK reports whether the rows (the oracle after a change) keep c
	// unique among non-NULL values.
	uniqueOK := func(rows map[int64]*indexOracleRow) bool {
		seen := map[int64]bool{}
		for _, r := range rows {
			if r.c == nil {
				continue
			}
			if seen[*r.c] {
				return false
			}
			seen[*r.c] = true
		}
		return true
	}
	clone := func() map[int64]*indexOracleRow {
		m := make(map[int64]*indexOracleRow, len(oracle))
		for k, v := range oracle {
			cp := *v
			m[k] = &cp
		}
		return m
	}
	// apply runs a statement that the oracle predicts to succeed or fail
	// with a unique violation; next is the oracle's state on success.
	apply := func(sql string, next map[int64]*indexOracleRow, pkDup bool) {
		ok := !pkDup && uniqueOK(next)
		_, err := tryQuery(s, sql)
		switch {
		case ok && err != nil:
			t.Fatalf("seed %d: %s: %v", seed, sql, err)
		case !ok:
			var se *sqlerr.Error
			if !errors.As(err, &se) || se.Code != sqlerr.UniqueViolation {
				t.Fatalf("seed %d: %s: got %v, want a unique violation", seed, sql, err)
			}
			return
		}
		oracle = next
	}
	matches := func(pred func(r *indexOracleRow) bool) []string {
		var out []string
		for _, r := range oracle {
			if pred(r) {
				out = append(out, r.text())
			}
		}
		sort.Strings(out)
		return out
	}
	eq := func(p *int64, v int64) bool { return p != nil && *p == v }

	for step := 0; step < 400; step++ {
		id := rng.Int64N(40)
		switch op := rng.IntN(10); {
		case op < 3: // INSERT
			r := &indexOracleRow{id: id, a: randInt(6), b: randStr(), c: randInt(60)}
			next := clone()
			_, dup := oracle[id]
			next[id] = r
			apply(fmt.Sprintf("INSERT INTO r VALUES (%d, %s, %s, %s)", id, sqlInt(r.a), sqlStr(r.b), sqlInt(r.c)), next, dup)
		case op < 4: // UPSERT of some columns
			next := clone()
			r, ok := next[id]
			if !ok {
				r = &indexOracleRow{id: id}
				next[id] = r
			}
			r.a, r.c = randInt(6), randInt(60)
			apply(fmt.Sprintf("UPSERT INTO r (id, a, c) VALUES (%d, %s, %s)", id, sqlInt(r.a), sqlInt(r.c)), next, false)
		case op < 5: // REPLACE: unlisted columns become NULL
			next := clone()
			r := &indexOracleRow{id: id, b: randStr(), c: randInt(60)}
			next[id] = r
			apply(fmt.Sprintf("REPLACE INTO r (id, b, c) VALUES (%d, %s, %s)", id, sqlStr(r.b), sqlInt(r.c)), next, false)
		case op < 6: // UPDATE by index predicate
			k, na := rng.Int64N(6), randInt(6)
			next := clone()
			for _, r := range next {
				if eq(r.a, k) {
					r.a = na
				}
			}
			apply(fmt.Sprintf("UPDATE r SET a = %s WHERE a = %d", sqlInt(na), k), next, false)
		case op < 7: // UPDATE of the unique column, or of the key
			next := clone()
			if r, ok := next[id]; ok {
				if rng.IntN(2) == 0 {
					r.c = randInt(60)
					apply(fmt.Sprintf("UPDATE r SET c = %s WHERE id = %d", sqlInt(r.c), id), next, false)
				} else {
					to := rng.Int64N(40)
					_, dup := oracle[to]
					delete(next, id)
					r.id = to
					next[to] = r
					apply(fmt.Sprintf("UPDATE r SET id = %d WHERE id = %d", to, id), next, dup && to != id)
				}
			}
		case op < 8: // DELETE by index predicate
			sv := strs[rng.IntN(len(strs))]
			next := clone()
			for k, r := range next {
				if r.b != nil && *r.b == sv {
					delete(next, k)
				}
			}
			apply(fmt.Sprintf("DELETE FROM r WHERE b = '%s'", sv), next, false)
		case op < 9: // a transaction that rolls back leaves no entries
			query(t, s, "BEGIN")
			query(t, s, fmt.Sprintf("UPSERT INTO r (id, a, b, c) VALUES (%d, 1, 'y', NULL)", id+100))
			query(t, s, "ROLLBACK")
		default: // DELETE by key
			next := clone()
			delete(next, id)
			apply(fmt.Sprintf("DELETE FROM r WHERE id = %d", id), next, false)
		}

		k, m := rng.Int64N(6), rng.Int64N(6)
		sv := strs[rng.IntN(len(strs))]
		c := rng.Int64N(60)
		checks := []struct {
			sql  string
			pred func(r *indexOracleRow) bool
		}{
			{fmt.Sprintf("SELECT id, a, b, c FROM r WHERE a = %d", k), func(r *indexOracleRow) bool { return eq(r.a, k) }},
			{fmt.Sprintf("SELECT id, a, b, c FROM r WHERE a IN (%d, %d)", k, m), func(r *indexOracleRow) bool { return eq(r.a, k) || eq(r.a, m) }},
			{fmt.Sprintf("SELECT id, a, b, c FROM r WHERE a > %d AND a <= %d", k, m), func(r *indexOracleRow) bool { return r.a != nil && *r.a > k && *r.a <= m }},
			{"SELECT id, a, b, c FROM r WHERE a IS NULL", func(r *indexOracleRow) bool { return r.a == nil }},
			{fmt.Sprintf("SELECT id, a, b, c FROM r WHERE b = '%s' AND a >= %d", sv, k), func(r *indexOracleRow) bool { return r.b != nil && *r.b == sv && r.a != nil && *r.a >= k }},
			{fmt.Sprintf("SELECT id, a, b, c FROM r WHERE c = %d", c), func(r *indexOracleRow) bool { return eq(r.c, c) }},
			{fmt.Sprintf("SELECT id, a, b, c FROM r WHERE b = '%s' OR b IS NULL", sv), func(r *indexOracleRow) bool { return r.b == nil || *r.b == sv }},
		}
		for _, ch := range checks {
			got := rowsText(query(t, s, ch.sql))
			want := matches(ch.pred)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d step %d: %s\ngot  %v\nwant %v", seed, step, ch.sql, got, want)
			}
		}
		if step%50 == 0 {
			checkIndexes(t, e)
		}
	}
	checkIndexes(t, e)

	// The queries above did go through the indexes.
	for _, c := range []struct{ sql, index string }{
		{"SELECT * FROM r WHERE a = 1", "ra"},
		{"SELECT * FROM r WHERE a IN (1, 2)", "ra"},
		{"SELECT * FROM r WHERE a > 1 AND a < 3", "ra"},
		{"SELECT * FROM r WHERE b = 'x' AND a > 3", "rba"},
		{"SELECT * FROM r WHERE c = 5", "rc"},
	} {
		plan := rowsText(query(t, s, "EXPLAIN "+c.sql))
		if !strings.Contains(strings.Join(plan, "\n"), "using index "+c.index) {
			t.Errorf("%s does not use index %s:\n%s", c.sql, c.index, strings.Join(plan, "\n"))
		}
	}
	// A primary key point lookup beats any index; an unconstrained index
	// column gives a full scan.
	for _, sql := range []string{"SELECT * FROM r WHERE id = 3 AND a = 1", "SELECT * FROM r WHERE a + 1 = 2"} {
		plan := strings.Join(rowsText(query(t, s, "EXPLAIN "+sql)), "\n")
		if strings.Contains(plan, "using index") {
			t.Errorf("%s uses an index:\n%s", sql, plan)
		}
	}
}

// TestIndexDDL covers CREATE INDEX backfill and its unique check, DROP
// INDEX, REINDEX, inline YQL indexes, a table without primary key, and
// the errors of each.
func TestIndexDDL(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE h (a Int32, b Utf8)")
	query(t, s, "INSERT INTO h VALUES (1, 'x'), (2, 'y'), (2, 'y'), (NULL, 'z'), (NULL, 'z')")
	query(t, s, "CREATE INDEX ha ON h (a)")
	checkIndexes(t, e)
	if got := rowsText(query(t, s, "SELECT * FROM h WHERE a = 2")); fmt.Sprint(got) != "[2|y 2|y]" {
		t.Fatalf("got %v", got)
	}
	_, err := tryQuery(s, "CREATE UNIQUE INDEX hb ON h (b)")
	wantCode(t, err, sqlerr.UniqueViolation)
	// NULLs are distinct: a unique index on a is refused only for the 2s.
	_, err = tryQuery(s, "CREATE UNIQUE INDEX hu ON h (a)")
	wantCode(t, err, sqlerr.UniqueViolation)
	query(t, s, "DELETE FROM h WHERE a = 2")
	query(t, s, "CREATE UNIQUE INDEX hu ON h (a)")
	query(t, s, "INSERT INTO h VALUES (NULL, 'w')")
	_, err = tryQuery(s, "INSERT INTO h VALUES (1, 'w')")
	wantCode(t, err, sqlerr.UniqueViolation)
	_, err = tryQuery(s, "CREATE INDEX ha ON h (b)")
	wantCode(t, err, sqlerr.DuplicateTable)
	query(t, s, "CREATE INDEX IF NOT EXISTS ha ON h (b)")
	_, err = tryQuery(s, "CREATE INDEX h ON h (b)")
	wantCode(t, err, sqlerr.DuplicateTable)
	_, err = tryQuery(s, "CREATE INDEX hx ON h (nope)")
	wantCode(t, err, sqlerr.UndefinedColumn)
	_, err = tryQuery(s, "CREATE INDEX hx ON h (__pivot_rowid)")
	wantCode(t, err, sqlerr.UndefinedColumn)
	_, err = tryQuery(s, "CREATE INDEX hx ON nope (a)")
	wantCode(t, err, sqlerr.UndefinedTable)
	query(t, s, "REINDEX ha")
	query(t, s, "REINDEX TABLE h")
	query(t, s, "REINDEX h")
	checkIndexes(t, e)
	_, err = tryQuery(s, "REINDEX nope")
	wantCode(t, err, sqlerr.UndefinedObject)
	query(t, s, "DROP INDEX ha")
	_, err = tryQuery(s, "DROP INDEX ha")
	wantCode(t, err, sqlerr.UndefinedObject)
	query(t, s, "DROP INDEX IF EXISTS ha")
	query(t, s, "DROP INDEX hu ON h")
	if got := query(t, s, "SELECT count(*) FROM sys.partitions WHERE table_name LIKE 'h/%'"); got[0][0].Int() != 0 {
		t.Fatalf("dropped indexes still have shards: %v", got)
	}

	query(t, s, "CREATE TABLE y (k Uint64, v Utf8, w Int32, PRIMARY KEY (k), INDEX yv GLOBAL UNIQUE SYNC ON (v), INDEX yw GLOBAL ON (w, v))")
	query(t, s, "INSERT INTO y VALUES (1, 'a', 5), (2, 'b', 5)")
	_, err = tryQuery(s, "INSERT INTO y VALUES (3, 'a', 6)")
	wantCode(t, err, sqlerr.UniqueViolation)
	show := query(t, s, "SHOW CREATE TABLE y")[0][1].Str()
	for _, want := range []string{"INDEX yv GLOBAL UNIQUE SYNC ON (v)", "INDEX yw GLOBAL SYNC ON (w, v)"} {
		if !strings.Contains(show, want) {
			t.Errorf("SHOW CREATE TABLE lacks %q:\n%s", want, show)
		}
	}
	for _, sql := range []string{
		"CREATE TABLE z (k Int32, PRIMARY KEY (k), INDEX zi GLOBAL ASYNC ON (k))",
		"CREATE TABLE z (k Int32, v Int32, PRIMARY KEY (k), INDEX zi GLOBAL ON (k) COVER (v))",
		"CREATE TRIGGER t1r1 AFTER UPDATE ON y BEGIN SELECT 1",
		"DROP TRIGGER t1r1",
		"INSERT OR IGNORE INTO y VALUES (9, 'q', 1)",
	} {
		_, err = tryQuery(s, sql)
		wantCode(t, err, sqlerr.FeatureNotSupported)
	}
	query(t, s, "INSERT OR REPLACE INTO y VALUES (1, 'c', 7)")
	if got := rowsText(query(t, s, "SELECT k, v, w FROM y WHERE v = 'c'")); fmt.Sprint(got) != "[1|c|7]" {
		t.Fatalf("got %v", got)
	}
	checkIndexes(t, e)
	yt, _ := e.catalog.Snapshot().Table(s.db.ID, "y")
	query(t, s, "DROP TABLE y")
	if got := query(t, s, "SELECT count(*) FROM sys.partitions WHERE table_name LIKE 'y%'"); got[0][0].Int() != 0 {
		t.Fatalf("dropped table's indexes still have shards: %v", got)
	}
	// The indexes' entries wait for DROP TABLE's GC job with the rows
	// (dropgc.go), which removes them once no read can need them.
	for _, ix := range yt.Indexes {
		if !e.dropgc.pending(ix.ID) {
			t.Errorf("index %s is not in DROP TABLE's GC job", ix.Name)
		}
	}
}

// TestIndexConcurrentCreate creates and drops indexes while writers
// insert and update: writers that wrote under another set of indexes fail
// with 40001 and retry, and no write is missing from any index.
func TestIndexConcurrentCreate(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE w (id Int64, a Int64, PRIMARY KEY (id))")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := 0; g < 3; g++ {
		ws := testSession(t, e)
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				sql := fmt.Sprintf("UPSERT INTO w (id, a) VALUES (%d, %d)", g*1000+i%200, i)
				if i%3 == 0 {
					sql = fmt.Sprintf("UPDATE w SET a = a + 1 WHERE id = %d", g*1000+i%100)
				}
				if _, err := tryQuery(ws, sql); err != nil {
					var se *sqlerr.Error
					if !errors.As(err, &se) || se.Code != sqlerr.SerializationFailure {
						t.Errorf("%s: %v", sql, err)
						return
					}
				}
			}
		}(g)
	}
	for i := 0; i < 6; i++ {
		time.Sleep(20 * time.Millisecond)
		query(t, s, fmt.Sprintf("CREATE INDEX wa%d ON w (a)", i))
		if i%2 == 1 {
			query(t, s, fmt.Sprintf("DROP INDEX wa%d", i-1))
		}
	}
	time.Sleep(20 * time.Millisecond)
	close(stop)
	wg.Wait()
	checkIndexes(t, e)
}

// TestIndexTTL checks that reads through an index hide expired rows, that
// an expired row does not hold its unique value, and that the TTL runner
// erases index entries with their rows.
func TestIndexTTL(t *testing.T) {
	clock := newTestClock(time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC))
	e := ttlEngine(t, clock, 0)
	s := testSession(t, e)
	query(t, s, `CREATE TABLE t (id Int64, ts Timestamp, v Int64, PRIMARY KEY (id), INDEX tv GLOBAL UNIQUE SYNC ON (v)) WITH (TTL = Interval("PT1H") ON ts)`)
	ins := func(id int64, ago time.Duration, v int64) {
		query(t, s, "UPSERT INTO t (id, ts, v) VALUES ($1, $2, $3)",
			types.NewInt64(id), types.NewTimestamp(clock.micros(-ago)), types.NewInt64(v))
	}
	ins(1, 30*time.Minute, 10)
	ins(2, 2*time.Hour, 20) // expired
	ins(3, 0, 30)
	wantIDs(t, s, "SELECT id FROM t WHERE v IN (10, 20, 30) ORDER BY id", 1, 3)
	wantIDs(t, s, "SELECT id FROM t WHERE v = 20")
	// The expired row's unique value is free.
	ins(4, 0, 20)
	wantIDs(t, s, "SELECT id FROM t WHERE v = 20", 4)
	clock.Advance(45 * time.Minute) // row 1 expires too
	wantIDs(t, s, "SELECT id FROM t WHERE v >= 10 ORDER BY id", 3, 4)
	if n := e.RunTTL(); n != 2 {
		t.Fatalf("TTL erased %d rows, want 2", n)
	}
	checkIndexes(t, e)
	wantIDs(t, s, "SELECT id FROM t WHERE v >= 10 ORDER BY id", 3, 4)
}

// TestHiddenKeySpread checks the hidden key of a table without PRIMARY KEY
// (design.md §3.2): it is not visible, cannot be written, and spreads
// inserts over every shard instead of piling them onto the last one.
func TestHiddenKeySpread(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE h (a Int32, b Utf8) WITH (UNIFORM_PARTITIONS = 4)")
	for i := 0; i < 20; i++ {
		var vals []string
		for j := 0; j < 20; j++ {
			vals = append(vals, fmt.Sprintf("(%d, 'v')", i*20+j))
		}
		query(t, s, "INSERT INTO h VALUES "+strings.Join(vals, ", "))
	}
	rows := query(t, s, "SELECT row_count FROM sys.partitions WHERE table_name = 'h' ORDER BY partition_index")
	if len(rows) != 4 {
		t.Fatalf("%d shards, want 4", len(rows))
	}
	for k, r := range rows {
		// 400 uniform keys: each quarter gets 100 ± 9; under 50 is a
		// six-sigma event, not a bad draw.
		if n := r[0].Int(); n < 50 {
			t.Errorf("shard %d holds %d of 400 rows: the hidden key does not spread inserts", k, n)
		}
	}
	if got := query(t, s, "SELECT * FROM h WHERE a = 1"); len(got) != 1 || len(got[0]) != 2 {
		t.Fatalf("SELECT * shows %v", got)
	}
	_, err := tryQuery(s, "INSERT INTO h (__pivot_rowid, a) VALUES (1, 1)")
	wantCode(t, err, sqlerr.UndefinedColumn)
	if show := query(t, s, "SHOW CREATE TABLE h")[0][1].Str(); strings.Contains(show, "pivot_rowid") {
		t.Fatalf("SHOW CREATE TABLE shows the hidden key:\n%s", show)
	}
}

// TestIndexRestart checks that indexes survive a restart: the catalog
// reloads them and their shard maps, and reads and writes use them.
func TestIndexRestart(t *testing.T) {
	dir := t.TempDir()
	open := func() *Engine {
		e, err := Open(Options{DataDir: dir, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	e := open()
	s, err := e.NewSession("pivotdb", "pivotdb")
	if err != nil {
		t.Fatal(err)
	}
	query(t, s, "CREATE TABLE t (id Int64, a Int32, PRIMARY KEY (id))")
	query(t, s, "INSERT INTO t VALUES (1, 5), (2, 6)")
	query(t, s, "CREATE UNIQUE INDEX ta ON t (a)")
	s.Close()
	e.Close()

	e = open()
	defer e.Close()
	s = testSession(t, e)
	query(t, s, "INSERT INTO t VALUES (3, 7)")
	_, err = tryQuery(s, "INSERT INTO t VALUES (4, 5)")
	wantCode(t, err, sqlerr.UniqueViolation)
	wantIDs(t, s, "SELECT id FROM t WHERE a IN (5, 7) ORDER BY id", 1, 3)
	checkIndexes(t, e)
}
