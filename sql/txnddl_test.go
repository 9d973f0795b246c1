package sql

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
)

// tableHasKeys reports whether any key is stored in table id's span.
func tableHasKeys(t *testing.T, e *Engine, id uint64) bool {
	t.Helper()
	it, err := e.storage.NewIter(storage.TableSpan(id))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	return it.First()
}

// TestTxnDDLPhysical: what a transaction's schema changes leave on disk.
// A rolled-back CREATE TABLE leaves no shard map; a committed DROP TABLE
// leaves no shard map, its rows to its GC job; and the creations of a transaction the server did not
// get to end (a crash: the session is abandoned, not closed) are dropped
// at the next start.
func TestTxnDDLPhysical(t *testing.T) {
	dir := t.TempDir()
	quiet := storage.SlogLogger{L: slog.New(slog.NewTextHandler(io.Discard, nil))}
	e, err := Open(Options{DataDir: dir, NoSync: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	s, err := e.NewSession("pivotdb", "pivotdb")
	if err != nil {
		t.Fatal(err)
	}
	run := func(q string) { t.Helper(); query(t, s, q) }

	run("BEGIN")
	run("CREATE TABLE rb (id Int32, v Utf8, PRIMARY KEY (id))")
	run("CREATE INDEX rb_v ON rb (v)")
	rb, _ := s.catalogSnap().Table(s.db.ID, "rb")
	if e.shards.Map(rb.ID) == nil || e.shards.Map(rb.Indexes[0].ID) == nil {
		t.Fatal("a table created in a transaction has no shard map")
	}
	if _, ok := e.catalog.Snapshot().TableByID(rb.ID); ok {
		t.Fatal("the uncommitted table is in the committed catalog")
	}
	run("ROLLBACK")
	if e.shards.Map(rb.ID) != nil || e.shards.Map(rb.Indexes[0].ID) != nil {
		t.Fatal("a rolled-back CREATE TABLE left its shard maps")
	}

	run("CREATE TABLE dr (id Int32, PRIMARY KEY (id))")
	run("INSERT INTO dr VALUES (1), (2)")
	dr, _ := s.catalogSnap().Table(s.db.ID, "dr")
	run("BEGIN")
	run("DROP TABLE dr")
	if !tableHasKeys(t, e, dr.ID) {
		t.Fatal("an uncommitted DROP TABLE removed the rows")
	}
	run("COMMIT")
	// Its rows stay for historical reads until its GC job removes them
	// (dropgc.go).
	if !tableHasKeys(t, e, dr.ID) || !e.dropgc.pending(dr.ID) || e.shards.Map(dr.ID) != nil {
		t.Fatal("a committed DROP TABLE left a shard map, or its rows are not kept for its GC job")
	}

	run("BEGIN")
	run("CREATE TABLE crash (id Int32, PRIMARY KEY (id))")
	run("CREATE SEQUENCE crash_seq")
	crash, _ := s.catalogSnap().Table(s.db.ID, "crash")
	q, _ := s.catalogSnap().Sequence(s.db.ID, "crash_seq")
	if _, ok, _ := e.meta.Get(sequenceKey(q.ID)); !ok {
		t.Fatal("the sequence's record was not written at once")
	}
	if e.shards.Map(crash.ID) == nil {
		t.Fatal("no shard map before the crash")
	}
	// The crash: the transaction never ends.
	s.txn, s.tddl = nil, nil
	s.Close()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = Open(Options{DataDir: dir, NoSync: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.shards.Map(crash.ID) != nil {
		t.Fatal("the shard map of a table whose transaction never committed survived the restart")
	}
	if _, ok, _ := e.meta.Get(sequenceKey(q.ID)); ok {
		t.Fatal("the record of a sequence whose transaction never committed survived the restart")
	}
	s2, err := e.NewSession("pivotdb", "pivotdb")
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, err := tryQuery(s2, "SELECT * FROM crash"); err == nil {
		t.Fatal("the table of a transaction that never committed exists")
	}
	// Ids are never reused: the counter was persisted with the creations.
	query(t, s2, "CREATE TABLE after (id Int32, PRIMARY KEY (id))")
	after, _ := s2.catalogSnap().Table(s2.db.ID, "after")
	if after.ID <= q.ID {
		t.Fatalf("id %d reused after the restart (the crashed transaction had %d)", after.ID, q.ID)
	}
}

// TestCatalogAsOfSnapshot: a REPEATABLE READ transaction sees the schema as
// of its snapshot (issue 16 item 1): a table created and a column renamed
// after it are not seen until the transaction ends.
func TestCatalogAsOfSnapshot(t *testing.T) {
	e := testEngine(t)
	a, b := testSession(t, e), testSession(t, e)
	query(t, b, "CREATE TABLE rr (id Int32, v Int64, PRIMARY KEY (id))")
	query(t, b, "INSERT INTO rr VALUES (1, 10)")
	query(t, a, "BEGIN ISOLATION LEVEL REPEATABLE READ")
	query(t, a, "SELECT count(*) FROM rr")
	query(t, b, "CREATE TABLE later (id Int32, PRIMARY KEY (id))")
	query(t, b, "ALTER TABLE rr RENAME COLUMN v TO w")
	if got := query(t, a, "SELECT v FROM rr"); len(got) != 1 || got[0][0].Text() != "10" {
		t.Fatalf("old column name in the snapshot: %v", got)
	}
	if _, err := tryQuery(a, "SELECT * FROM later"); err == nil {
		t.Fatal("a table created after the snapshot is visible to it")
	}
	query(t, a, "ROLLBACK")
	if got := query(t, a, "SELECT w FROM rr"); len(got) != 1 {
		t.Fatalf("new column name after the transaction: %v", got)
	}
	query(t, a, "SELECT * FROM later")
}

// TestTxnDDLConcurrent runs transaction blocks with schema changes in
// several sessions at once, with writers of a shared table, under the race
// detector: each block's tables exist after it exactly when it committed,
// with its rows, and no session hangs (the schema-change lock serialises
// the blocks; writers of a table another block alters fail with 40001 and
// retry).
func TestTxnDDLConcurrent(t *testing.T) {
	e := testEngine(t)
	setup := testSession(t, e)
	query(t, setup, "CREATE TABLE shared (id Int32, v Int64, PRIMARY KEY (id))")
	const workers, rounds = 3, 6
	errs := make(chan error, workers+1)
	committed := make([][]bool, workers)
	for w := 0; w < workers; w++ {
		s := testSession(t, e)
		committed[w] = make([]bool, rounds)
		go func(w int, s *Session) {
			for r := 0; r < rounds; r++ {
				name := fmt.Sprintf("c_%d_%d", w, r)
				stmts := []string{"BEGIN",
					"CREATE TABLE " + name + " (id Int32, PRIMARY KEY (id))",
					"INSERT INTO " + name + " VALUES (1), (2)",
					fmt.Sprintf("ALTER TABLE shared ADD COLUMN x_%d_%d Int32", w, r)}
				end := "ROLLBACK"
				if r%2 == 0 {
					end = "COMMIT"
				}
				var err error
				for _, q := range append(stmts, end) {
					if _, err = tryQuery(s, q); err != nil {
						break
					}
				}
				if err != nil {
					errs <- fmt.Errorf("%s: %w", name, err)
					return
				}
				committed[w][r] = end == "COMMIT"
			}
			errs <- nil
		}(w, s)
	}
	writer := testSession(t, e)
	go func() {
		for i := 0; i < 40; i++ {
			for attempt := 0; ; attempt++ {
				_, err := tryQuery(writer, fmt.Sprintf("INSERT INTO shared (id, v) VALUES (%d, 1)", i))
				if err == nil {
					break
				}
				var se *sqlerr.Error
				if !errors.As(err, &se) || se.Code != sqlerr.SerializationFailure || attempt > 1000 {
					errs <- fmt.Errorf("insert %d: %w", i, err)
					return
				}
			}
		}
		errs <- nil
	}()
	for i := 0; i < workers+1; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for w := range committed {
		for r, ok := range committed[w] {
			rows, err := tryQuery(setup, fmt.Sprintf("SELECT count(*) FROM c_%d_%d", w, r))
			if ok && (err != nil || rows[0][0].Text() != "2") {
				t.Fatalf("committed c_%d_%d: %v %v", w, r, rows, err)
			}
			if !ok && err == nil {
				t.Fatalf("rolled-back c_%d_%d exists", w, r)
			}
		}
	}
	if got := query(t, setup, "SELECT count(*) FROM shared"); got[0][0].Text() != "40" {
		t.Fatalf("shared has %v rows", got)
	}
}

// TestDropOrphansAfterCommittedDrop: a server stopped between a committed
// DROP TABLE and the removal of its data (which runs after the commit)
// removes the data at the next start.
func TestDropOrphansAfterCommittedDrop(t *testing.T) {
	dir := t.TempDir()
	quiet := storage.SlogLogger{L: slog.New(slog.NewTextHandler(io.Discard, nil))}
	e, err := Open(Options{DataDir: dir, NoSync: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	s, err := e.NewSession("pivotdb", "pivotdb")
	if err != nil {
		t.Fatal(err)
	}
	query(t, s, "CREATE TABLE od (id Int32, v Utf8, PRIMARY KEY (id))")
	query(t, s, "CREATE INDEX od_v ON od (v)")
	query(t, s, "INSERT INTO od VALUES (1, 'a'), (2, 'b')")
	od, _ := s.catalogSnap().Table(s.db.ID, "od")
	// The commit of the DROP without the drops that follow it.
	ch := e.catalog.Begin()
	ch.DropTable(od)
	b := e.storage.NewBatch()
	if err := ch.Write(e.meta.With(b)); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	ch.Install()
	s.Close()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = Open(Options{DataDir: dir, NoSync: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, id := range []uint64{od.ID, od.Indexes[0].ID} {
		if e.shards.Map(id) != nil || tableHasKeys(t, e, id) {
			t.Fatalf("key space %d of a dropped table survived the restart", id)
		}
	}
}

// TestTxnRewritePhysical: what a rewrite inside a transaction block
// (ALTER COLUMN TYPE) leaves on disk. Until the end the new table's rows
// are only in the transaction (its shard maps exist, unnamed) and the old
// rows stay; ROLLBACK drops the new shard maps, COMMIT the old rows and
// maps; and a crash with the block open leaves the old table whole and no
// shard map of the new one after the restart.
func TestTxnRewritePhysical(t *testing.T) {
	dir := t.TempDir()
	quiet := storage.SlogLogger{L: slog.New(slog.NewTextHandler(io.Discard, nil))}
	e, err := Open(Options{DataDir: dir, NoSync: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	s, err := e.NewSession("pivotdb", "pivotdb")
	if err != nil {
		t.Fatal(err)
	}
	run := func(q string) { t.Helper(); query(t, s, q) }
	run("CREATE TABLE rw (id Int32, v Int32, w Utf8, PRIMARY KEY (id))")
	run("CREATE INDEX rw_w ON rw (w)")
	run("INSERT INTO rw VALUES (1, 1, 'a'), (2, 2, 'b')")
	old, _ := s.catalogSnap().Table(s.db.ID, "rw")

	// rewritten runs the rewrite in a new block and returns the new table.
	rewritten := func(typ string) *catalog.Table {
		t.Helper()
		run("BEGIN")
		run("ALTER TABLE rw ALTER COLUMN v TYPE " + typ)
		nt, _ := s.catalogSnap().Table(s.db.ID, "rw")
		if nt.ID == old.ID || e.shards.Map(nt.ID) == nil || e.shards.Map(nt.Indexes[0].ID) == nil {
			t.Fatalf("the rewrite made no new table with shard maps: %d (old %d)", nt.ID, old.ID)
		}
		if tableHasKeys(t, e, nt.ID) || tableHasKeys(t, e, nt.Indexes[0].ID) {
			t.Fatal("the new table's rows were committed before the block")
		}
		if !tableHasKeys(t, e, old.ID) || e.shards.Map(old.ID) == nil {
			t.Fatal("the old rows went before the block ended")
		}
		return nt
	}

	nt := rewritten("Int64")
	run("ROLLBACK")
	if e.shards.Map(nt.ID) != nil || e.shards.Map(nt.Indexes[0].ID) != nil {
		t.Fatal("a rolled-back rewrite left its shard maps")
	}
	if cur, _ := s.catalogSnap().Table(s.db.ID, "rw"); cur.ID != old.ID {
		t.Fatal("the old table is not back after ROLLBACK")
	}

	nt = rewritten("Int64")
	run("COMMIT")
	// The old rows stay for historical reads until the GC job removes
	// them (dropgc.go); the shard maps go.
	if !tableHasKeys(t, e, old.ID) || !e.dropgc.pending(old.ID) || !e.dropgc.pending(old.Indexes[0].ID) ||
		e.shards.Map(old.ID) != nil || e.shards.Map(old.Indexes[0].ID) != nil {
		t.Fatal("a committed rewrite left the old shard maps, or its old rows are not kept for its GC job")
	}
	if !tableHasKeys(t, e, nt.ID) || !tableHasKeys(t, e, nt.Indexes[0].ID) {
		t.Fatal("a committed rewrite has no rows or index entries")
	}
	old = nt

	nt = rewritten("Int32")
	// The crash: the transaction never ends.
	s.txn, s.tddl = nil, nil
	s.Close()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = Open(Options{DataDir: dir, NoSync: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.shards.Map(nt.ID) != nil || e.shards.Map(nt.Indexes[0].ID) != nil {
		t.Fatal("the shard maps of a rewrite whose block never committed survived the restart")
	}
	s2, err := e.NewSession("pivotdb", "pivotdb")
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if got := query(t, s2, "SELECT sum(v) FROM rw WHERE w IN ('a', 'b')"); got[0][0].Text() != "3" {
		t.Fatalf("the old table after the restart: %v", got)
	}
	if cur, _ := s2.catalogSnap().Table(s2.db.ID, "rw"); cur.ID != old.ID {
		t.Fatalf("table id %d after the restart, want the committed %d", cur.ID, old.ID)
	}
}
