package sql

import (
	"strings"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// TestSchemaChangeWaitsForWriters: CREATE INDEX, DROP INDEX, REINDEX and
// ALTER TABLE (rewriting or not) wait for the open transactions that wrote
// their table (a SHARE lock against their ROW EXCLUSIVE, as PostgreSQL's
// locks make them wait), so a READ COMMITTED block that wrote the table
// commits instead of failing with 40001; readers do not hold them up,
// lock_timeout bounds the wait, and a new index covers the block's rows.
func TestSchemaChangeWaitsForWriters(t *testing.T) {
	e := testEngine(t)
	a, b := testSession(t, e), testSession(t, e)
	query(t, a, "CREATE TABLE w (id Int64, v Int64, PRIMARY KEY (id))")
	query(t, a, "INSERT INTO w VALUES (1, 10)")

	for _, ddl := range []string{"CREATE INDEX w_v ON w (v)", "REINDEX TABLE w", "ALTER TABLE w ADD COLUMN x Int64",
		"ALTER TABLE w ALTER COLUMN x TYPE Int32", "DROP INDEX w_v"} {
		query(t, a, "BEGIN")
		query(t, a, "INSERT INTO w (id, v) VALUES (2, 20)")
		// A reader in another block does not hold the change up...
		r := testSession(t, e)
		query(t, r, "BEGIN")
		query(t, r, "SELECT * FROM w")
		// ...the writer does: lock_timeout ends the wait with 55P03.
		query(t, b, "SET lock_timeout = '50ms'")
		if _, err := tryQuery(b, ddl); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.LockNotAvailable {
			t.Fatalf("%s while a block writes the table: %v, want 55P03", ddl, err)
		}
		query(t, b, "SET lock_timeout = 0")
		done := make(chan error, 1)
		go func() {
			_, err := tryQuery(b, ddl)
			done <- err
		}()
		select {
		case err := <-done:
			t.Fatalf("%s did not wait for the writer: %v", ddl, err)
		case <-time.After(50 * time.Millisecond):
		}
		waiting := query(t, r, "SELECT mode FROM pg_locks WHERE locktype = 'relation' AND NOT granted")
		if len(waiting) != 1 || waiting[0][0].Str() != "ShareLock" {
			t.Fatalf("%s in pg_locks: %v", ddl, waiting)
		}
		// The writer's next write of the table is not queued behind the
		// change (it holds the table already), and its COMMIT succeeds.
		query(t, a, "UPDATE w SET v = v + 1 WHERE id = 2")
		query(t, a, "COMMIT")
		if err := <-done; err != nil {
			t.Fatalf("%s after the writer's COMMIT: %v", ddl, err)
		}
		query(t, r, "COMMIT")
		query(t, a, "DELETE FROM w WHERE id = 2")
	}

	// A rewrite converts under SHARE UPDATE EXCLUSIVE and swaps under
	// ACCESS EXCLUSIVE: an explicit ACCESS SHARE (pg_dump's) holds it off
	// until it ends, as it holds ALTER TABLE off in PostgreSQL.
	query(t, a, "BEGIN")
	query(t, a, "LOCK TABLE w IN ACCESS SHARE MODE")
	query(t, b, "SET lock_timeout = '50ms'")
	if _, err := tryQuery(b, "ALTER TABLE w ALTER COLUMN x TYPE Int64"); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.LockNotAvailable {
		t.Fatalf("rewrite under LOCK TABLE ... ACCESS SHARE: %v, want 55P03", err)
	}
	query(t, b, "SET lock_timeout = 0")
	query(t, a, "COMMIT")
	query(t, b, "ALTER TABLE w ALTER COLUMN x TYPE Int64")
	if got := query(t, a, "SELECT count(*) FROM pg_locks WHERE locktype = 'relation'"); got[0][0].Int() != 0 {
		t.Fatalf("locks left after the rewrite: %v", got)
	}

	// The index built after the writer committed holds its row.
	query(t, a, "BEGIN")
	query(t, a, "INSERT INTO w (id, v) VALUES (3, 30)")
	done := make(chan error, 1)
	go func() {
		_, err := tryQuery(b, "CREATE INDEX w_v2 ON w (v)")
		done <- err
	}()
	time.Sleep(30 * time.Millisecond)
	query(t, a, "COMMIT")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := query(t, a, "SELECT id FROM w WHERE v = 30"); len(got) != 1 || got[0][0].Int() != 3 {
		t.Fatalf("row through the new index: %v", got)
	}
	plan := ""
	for _, row := range query(t, a, "EXPLAIN SELECT id FROM w WHERE v = 30") {
		plan += row[0].Text() + "\n"
	}
	if !strings.Contains(plan, "w_v2") {
		t.Fatalf("plan does not use the new index:\n%s", plan)
	}
}

// TestDropTruncateWaitForWriters: DROP TABLE, TRUNCATE (CASCADE too), and
// a new foreign key referencing a table (CREATE TABLE ... REFERENCES,
// ALTER TABLE ... ADD FOREIGN KEY) wait for the open transactions that
// wrote the table, as PostgreSQL's locks make them wait, so those commit
// instead of failing with 40001; lock_timeout bounds the wait; and a
// writer that comes while the change waits is queued behind it.
func TestDropTruncateWaitForWriters(t *testing.T) {
	e := testEngine(t)
	a, b, c := testSession(t, e), testSession(t, e), testSession(t, e)
	for _, tc := range []struct {
		ddl string
		// after: what c's INSERT into p, queued behind the change, gives
		// (a SQLSTATE, or "" for success), and how many rows p has then.
		code string
		rows int64
	}{
		{"DROP TABLE p", sqlerr.UndefinedTable, -1},
		{"TRUNCATE p", "", 1},
		{"TRUNCATE q CASCADE", "", 1}, // p references q
		{"CREATE TABLE r (id int PRIMARY KEY, pid int REFERENCES p (id))", "", 3},
		{"ALTER TABLE q ADD FOREIGN KEY (pid) REFERENCES p (id)", "", 3},
	} {
		t.Run(tc.ddl, func(t *testing.T) {
			query(t, a, "DROP TABLE IF EXISTS r")
			query(t, a, "DROP TABLE IF EXISTS p")
			query(t, a, "DROP TABLE IF EXISTS q")
			query(t, a, "CREATE TABLE q (id int PRIMARY KEY, pid int)")
			query(t, a, "INSERT INTO q VALUES (1, NULL)")
			query(t, a, "CREATE TABLE p (id int PRIMARY KEY, qid int REFERENCES q (id))")
			query(t, a, "INSERT INTO p VALUES (1, 1)")

			query(t, a, "BEGIN")
			query(t, a, "INSERT INTO p VALUES (2, 1)")
			query(t, b, "SET lock_timeout = '50ms'")
			if _, err := tryQuery(b, tc.ddl); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.LockNotAvailable {
				t.Fatalf("while a block writes p: %v, want 55P03", err)
			}
			query(t, b, "SET lock_timeout = 0")
			done := make(chan error, 1)
			go func() {
				_, err := tryQuery(b, tc.ddl)
				done <- err
			}()
			select {
			case err := <-done:
				t.Fatalf("did not wait for the writer: %v", err)
			case <-time.After(50 * time.Millisecond):
			}
			// On a loaded machine the change may take a while to queue:
			// wait for its entry rather than for a fixed time.
			var waiting [][]types.Value
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				waiting = query(t, c, "SELECT mode FROM pg_locks WHERE locktype = 'relation' AND NOT granted")
				if len(waiting) != 0 || time.Now().After(deadline) {
					break
				}
			}
			if len(waiting) != 1 || waiting[0][0].Str() != "ShareLock" {
				t.Fatalf("pg_locks: %v", waiting)
			}
			// A writer that comes now waits for the change.
			later := make(chan error, 1)
			go func() {
				_, err := tryQuery(c, "INSERT INTO p VALUES (3, NULL)")
				later <- err
			}()
			select {
			case err := <-later:
				t.Fatalf("a later writer went ahead of the change: %v", err)
			case <-time.After(50 * time.Millisecond):
			}
			query(t, a, "COMMIT") // 40001 when the change did not wait
			if err := <-done; err != nil {
				t.Fatalf("after the writer's COMMIT: %v", err)
			}
			err := <-later
			if se := sqlerr.As(err); (tc.code == "" && err != nil) || (tc.code != "" && (se == nil || se.Code != tc.code)) {
				t.Fatalf("the later writer: %v, want %q", err, tc.code)
			}
			if tc.rows >= 0 {
				if got := query(t, a, "SELECT count(*) FROM p"); got[0][0].Int() != tc.rows {
					t.Fatalf("%v rows in p, want %d", got, tc.rows)
				}
			}
		})
	}
}

// TestBlockDDLHoldsTableLocks: the table locks of a schema change inside a
// transaction block last until the block ends, as in PostgreSQL: a writer
// of the table in another transaction waits for the block (lock_timeout
// 55P03, deadlocks 40P01) and then writes against the schema the block
// left, instead of failing at its commit with 40001; FOR UPDATE waits too;
// plain reads go on with the committed schema.
func TestBlockDDLHoldsTableLocks(t *testing.T) {
	e := testEngine(t)
	a, b, c := testSession(t, e), testSession(t, e), testSession(t, e)
	query(t, a, "CREATE TABLE hl (id int PRIMARY KEY, v int)")
	query(t, a, "CREATE TABLE hu (id int PRIMARY KEY)")
	query(t, a, "INSERT INTO hl VALUES (1, 1)")
	// waits runs sql on s in the background and checks that it waits.
	waits := func(s *Session, sql string) chan error {
		t.Helper()
		done := make(chan error, 1)
		go func() {
			_, err := tryQuery(s, sql)
			done <- err
		}()
		select {
		case err := <-done:
			t.Fatalf("%s did not wait for the block: %v", sql, err)
		case <-time.After(50 * time.Millisecond):
		}
		return done
	}

	query(t, a, "BEGIN")
	query(t, a, "ALTER TABLE hl ADD COLUMN x int DEFAULT 5")
	// The statement ended; its locks did not.
	held := query(t, c, "SELECT mode FROM pg_locks WHERE locktype = 'relation' AND granted ORDER BY mode")
	if len(held) != 2 || held[0][0].Str() != "ExclusiveLock" || held[1][0].Str() != "ShareLock" {
		t.Fatalf("the block's locks after its ALTER TABLE: %v", held)
	}
	query(t, b, "SET lock_timeout = '30ms'")
	for _, w := range []string{"INSERT INTO hl (id) VALUES (2)", "UPDATE hl SET v = 2", "SELECT * FROM hl FOR UPDATE"} {
		query(t, b, "BEGIN")
		_, err := tryQuery(b, w)
		wantCode(t, err, sqlerr.LockNotAvailable)
		query(t, b, "ROLLBACK")
	}
	query(t, b, "SET lock_timeout = 0")
	// Reads go on, with the committed schema.
	if got := query(t, c, "SELECT * FROM hl"); len(got) != 1 || len(got[0]) != 2 {
		t.Fatalf("a read while the block holds the table: %v", got)
	}
	query(t, b, "BEGIN")
	insert := waits(b, "INSERT INTO hl (id) VALUES (3)")
	query(t, a, "COMMIT")
	if err := <-insert; err != nil {
		t.Fatalf("the writer after the block's COMMIT: %v", err)
	}
	query(t, b, "COMMIT") // 40001 when the locks ended with the ALTER
	if got := query(t, c, "SELECT x FROM hl WHERE id = 3"); len(got) != 1 || got[0][0].Int() != 5 {
		t.Fatalf("the waiting writer's row: %v", got)
	}
	if got := query(t, c, "SELECT count(*) FROM pg_locks WHERE locktype = 'relation'"); got[0][0].Int() != 0 {
		t.Fatalf("locks left after the blocks: %v", got)
	}

	// A cycle: the block waits for a row b wrote, b for the block's table.
	query(t, a, "BEGIN")
	query(t, a, "ALTER TABLE hl ADD COLUMN y int")
	query(t, b, "BEGIN")
	query(t, b, "INSERT INTO hu VALUES (1)")
	blocked := waits(a, "INSERT INTO hu VALUES (1)")
	_, err := tryQuery(b, "INSERT INTO hl (id) VALUES (4)")
	wantCode(t, err, sqlerr.DeadlockDetected)
	query(t, b, "ROLLBACK")
	if err := <-blocked; err != nil {
		t.Fatalf("the block's INSERT after the deadlock: %v", err)
	}
	query(t, a, "COMMIT")

	// DROP TABLE: the waiting writer finds the table gone.
	query(t, a, "BEGIN")
	query(t, a, "DROP TABLE hl")
	query(t, b, "BEGIN")
	insert = waits(b, "INSERT INTO hl (id) VALUES (5)")
	query(t, a, "COMMIT")
	wantCode(t, <-insert, sqlerr.UndefinedTable)
	query(t, b, "ROLLBACK")

	// A ROLLBACK ends them too.
	query(t, a, "BEGIN")
	query(t, a, "TRUNCATE hu")
	insert = waits(b, "INSERT INTO hu VALUES (2)")
	query(t, a, "ROLLBACK")
	if err := <-insert; err != nil {
		t.Fatalf("the writer after the block's ROLLBACK: %v", err)
	}
	if got := query(t, c, "SELECT count(*) FROM hu"); got[0][0].Int() != 2 {
		t.Fatalf("rows after the rolled-back TRUNCATE: %v", got)
	}
}
