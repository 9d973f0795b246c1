package sql

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// retryable reports whether a writer may retry err: a transaction that
// wrote rows under a table definition an ALTER TABLE replaced fails with
// 40001.
func retryable(err error) bool {
	var se *sqlerr.Error
	return errors.As(err, &se) && se.Code == sqlerr.SerializationFailure
}

// TestAlterTableConcurrentWrites runs ADD COLUMN with a DEFAULT, ALTER
// COLUMN TYPE and ADD PRIMARY KEY while writers insert, update and delete
// rows, then checks every row: each committed insert not deleted since is
// there once, with the values written and the new column's default.
func TestAlterTableConcurrentWrites(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE cw (id int, v int)")
	const preload = 500
	var sb strings.Builder
	for i := 0; i < preload; i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "(%d, %d)", i, i*2)
	}
	query(t, s, "INSERT INTO cw VALUES "+sb.String())

	const writers = 3
	var stop atomic.Bool
	var ops atomic.Int64 // committed writes
	var wg sync.WaitGroup
	committed := make([][]int, writers)
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		ws := testSession(t, e)
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				id := 100000*(w+1) + i
				stmt := fmt.Sprintf("INSERT INTO cw (id, v) VALUES (%d, %d)", id, id*2)
				deleting := i%5 == 4 && len(committed[w]) > 0
				switch {
				case deleting:
					// Delete this writer's oldest remaining row.
					stmt = fmt.Sprintf("DELETE FROM cw WHERE id = %d", committed[w][0])
				case i%3 == 2:
					// Rewrite an existing row with the value it has.
					old := i % preload
					stmt = fmt.Sprintf("UPDATE cw SET v = %d WHERE id = %d", old*2, old)
				}
				for {
					_, err := tryQuery(ws, stmt)
					if err == nil {
						break
					}
					if !retryable(err) {
						errs <- fmt.Errorf("writer %d: %s: %w", w, stmt, err)
						return
					}
				}
				switch {
				case deleting:
					committed[w] = committed[w][1:]
				case i%3 != 2:
					committed[w] = append(committed[w], id)
				}
				ops.Add(1)
			}
		}(w)
	}
	for _, stmt := range []string{
		"ALTER TABLE cw ADD COLUMN c int DEFAULT 5",
		"ALTER TABLE cw ALTER COLUMN v TYPE bigint",
		"ALTER TABLE cw ADD PRIMARY KEY (id)",
		"ALTER TABLE cw ALTER COLUMN c SET NOT NULL",
	} {
		// Let the writers commit some rows under each definition.
		for target := ops.Load() + 100; ops.Load() < target && len(errs) == 0; {
			time.Sleep(time.Millisecond)
		}
		if _, err := tryQuery(s, stmt); err != nil {
			stop.Store(true)
			wg.Wait()
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	for target := ops.Load() + 100; ops.Load() < target && len(errs) == 0; {
		time.Sleep(time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	want := map[int]bool{}
	for i := 0; i < preload; i++ {
		want[i] = true
	}
	for _, ids := range committed {
		for _, id := range ids {
			want[id] = true
		}
	}
	rows := query(t, s, "SELECT id, v, c FROM cw")
	seen := map[int]bool{}
	for _, r := range rows {
		id := int(r[0].Int())
		if seen[id] {
			t.Fatalf("row %d appears twice", id)
		}
		seen[id] = true
		if !want[id] {
			t.Fatalf("row %d was never committed", id)
		}
		if r[1].Int() != int64(id*2) || r[2].IsNull() || r[2].Int() != 5 {
			t.Fatalf("row %d reads (%v, %v), want (%d, 5)", id, r[1], r[2], id*2)
		}
	}
	if len(seen) != len(want) {
		t.Fatalf("%d rows, want %d", len(seen), len(want))
	}
	if _, err := tryQuery(s, "INSERT INTO cw (id, v) VALUES (0, 0)"); err == nil {
		t.Fatal("the new primary key accepted a duplicate")
	}
	checkIndexes(t, e)
	t.Logf("%d rows after %d concurrent inserts", len(rows), len(want)-preload)
}

// TestForeignKeyConcurrentWrites deletes parent rows while other sessions
// insert child rows that reference them, parents and children on
// different shards; after every round no child row may reference a
// missing parent.
func TestForeignKeyConcurrentWrites(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE par (id Int64, PRIMARY KEY (id)) WITH (PARTITION_AT_KEYS = (100, 200, 300))")
	query(t, s, "CREATE TABLE chi (id Int64, pid Int64 REFERENCES par ON DELETE NO ACTION, PRIMARY KEY (id)) WITH (PARTITION_AT_KEYS = (1000000, 2000000))")
	const parents = 400
	var sb strings.Builder
	for i := 0; i < parents; i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "(%d)", i)
	}
	query(t, s, "INSERT INTO par VALUES "+sb.String())

	const writers = 3
	var wg sync.WaitGroup
	var inserted, refused atomic.Int64
	errs := make(chan error, writers+1)
	for w := 0; w < writers; w++ {
		ws := testSession(t, e)
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				id := 1000000*w + i
				pid := (i*7 + w*13) % parents
				_, err := tryQuery(ws, fmt.Sprintf("INSERT INTO chi VALUES (%d, %d)", id, pid))
				var se *sqlerr.Error
				switch {
				case err == nil:
					inserted.Add(1)
				case errors.As(err, &se) && (se.Code == sqlerr.ForeignKeyViolation || se.Code == sqlerr.DeadlockDetected):
					refused.Add(1)
				default:
					errs <- fmt.Errorf("child writer %d: %w", w, err)
					return
				}
			}
		}(w)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		ds := testSession(t, e)
		for i := 0; i < parents; i += 2 {
			_, err := tryQuery(ds, fmt.Sprintf("DELETE FROM par WHERE id = %d", i))
			var se *sqlerr.Error
			if err != nil && !(errors.As(err, &se) && (se.Code == sqlerr.ForeignKeyViolation || se.Code == sqlerr.DeadlockDetected)) {
				errs <- fmt.Errorf("parent deleter: %w", err)
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	orphans := query(t, s, "SELECT count(*) FROM chi WHERE pid NOT IN (SELECT id FROM par)")
	if n := orphans[0][0].Int(); n != 0 {
		t.Fatalf("%d child rows reference a deleted parent", n)
	}
	if inserted.Load() == 0 || refused.Load() == 0 {
		t.Fatalf("%d inserts committed, %d refused: the test did not race parent deletes with child inserts", inserted.Load(), refused.Load())
	}
	t.Logf("%d child inserts committed, %d refused", inserted.Load(), refused.Load())
}

// TestDeferredPivots checks pg_dump's restore order for a sharded table:
// CREATE TABLE without a primary key WITH (partition_at_keys = '...'),
// the rows, then ADD PRIMARY KEY, which cuts the shards at those pivots of
// the new key (checked against its types then).
func TestDeferredPivots(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, `CREATE TABLE dp (k Utf8 NOT NULL, n Int64) WITH (partition_at_keys = '(("m"), ("t"))')`)
	query(t, s, "INSERT INTO dp (k, n) VALUES ('a', 1), ('p', 2), ('z', 3)")
	query(t, s, "ALTER TABLE dp ADD PRIMARY KEY (k)")
	if got := formatRows(query(t, s, "SELECT reloptions FROM pg_class WHERE relname = 'dp'")); got != `{"partition_at_keys=((\"m\"), (\"t\"))"}` {
		t.Fatalf("reloptions: %s", got)
	}
	if got := formatRows(query(t, s, "SELECT count(*) FROM sys.partitions WHERE table_name = 'dp'")); got != "3" {
		t.Fatalf("shards: %s", got)
	}
	query(t, s, `CREATE TABLE dp2 (k Int64 NOT NULL) WITH (partition_at_keys = '(("m"))')`)
	if _, err := tryQuery(s, "ALTER TABLE dp2 ADD PRIMARY KEY (k)"); err == nil {
		t.Fatal("pivots of the wrong type were accepted")
	}
}
