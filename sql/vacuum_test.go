package sql

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
)

// TestVacuumCompacts checks that VACUUM gives back the space of deleted
// rows: after a DELETE the rows' old versions and tombstones still take
// space in the sstables; with a retention window (--gc-ttl) they are past,
// VACUUM removes them and compacts the table's span and its index's down
// to nothing.
func TestVacuumCompacts(t *testing.T) {
	quiet := storage.SlogLogger{L: slog.New(slog.NewTextHandler(io.Discard, nil))}
	// GC's background loop runs once a minute at the most: VACUUM does
	// the work here.
	e, err := Open(Options{DataDir: t.TempDir(), NoSync: true, Logger: quiet, GCTTL: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	s := testSession(t, e)
	query(t, s, "CREATE TABLE v (id Int64, pad Utf8, PRIMARY KEY (id))")
	query(t, s, "CREATE INDEX v_pad ON v (pad)")
	query(t, s, "INSERT INTO v SELECT x, repeat('x', 200) || CAST(x AS Utf8) FROM generate_series(1, 5000) AS g(x)")
	query(t, s, "DELETE FROM v")
	time.Sleep(10 * time.Millisecond) // the tombstones fall below the GC threshold
	tbl, _ := e.catalog.Snapshot().Table(s.db.ID, "v")
	usage := func() uint64 {
		if err := e.storage.Flush(); err != nil {
			t.Fatal(err)
		}
		var n uint64
		for _, id := range []uint64{tbl.ID, tbl.Indexes[0].ID} {
			u, err := e.storage.EstimateDiskUsage(storage.TableSpan(id))
			if err != nil {
				t.Fatal(err)
			}
			n += u
		}
		return n
	}
	before := usage()
	if before < 100_000 {
		t.Fatalf("deleted rows take %d bytes before VACUUM; the test expects them on disk", before)
	}
	query(t, s, "VACUUM v")
	if after := usage(); after > before/20 {
		t.Fatalf("VACUUM left %d of %d bytes", after, before)
	}
	got := query(t, s, "SELECT vacuum_count, analyze_count, last_vacuum IS NOT NULL FROM pg_stat_user_tables WHERE relname = 'v'")
	if len(got) != 1 || got[0][0].Int() != 1 || got[0][1].Int() != 0 || !got[0][2].Bool() {
		t.Fatalf("pg_stat_user_tables after VACUUM: %v", got)
	}
	query(t, s, "BEGIN")
	if _, err := tryQuery(s, "VACUUM v"); sqlerr.Code(err) != sqlerr.ActiveSQLTransaction {
		t.Fatalf("VACUUM in a transaction block: %v", err)
	}
	query(t, s, "ROLLBACK")
}

// TestAnalyzeRecounts checks that ANALYZE recounts the shard statistics:
// counters made wrong behind the engine's back are right afterwards.
func TestAnalyzeRecounts(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE a (id Int64, PRIMARY KEY (id)) WITH (UNIFORM_PARTITIONS = 4)")
	query(t, s, "INSERT INTO a SELECT x FROM generate_series(1, 300) AS g(x)")
	tbl, _ := e.catalog.Snapshot().Table(s.db.ID, "a")
	// Delete the rows straight in the storage engine, as a bug that
	// bypassed the statistics would: the counters still say 300.
	b := e.storage.NewBatch()
	defer b.Close()
	if err := b.DeleteRange(storage.TableSpan(tbl.ID)); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	live := func() int64 {
		return query(t, s, "SELECT n_live_tup FROM pg_stat_user_tables WHERE relname = 'a'")[0][0].Int()
	}
	if n := live(); n != 300 {
		t.Fatalf("n_live_tup = %d before ANALYZE", n)
	}
	query(t, s, "ANALYZE a")
	if n := live(); n != 0 {
		t.Fatalf("n_live_tup = %d after ANALYZE", n)
	}
	got := query(t, s, "SELECT analyze_count, vacuum_count FROM pg_stat_user_tables WHERE relname = 'a'")
	if got[0][0].Int() != 1 || got[0][1].Int() != 0 {
		t.Fatalf("counts after ANALYZE: %v", got)
	}
}
