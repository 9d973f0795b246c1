package sql

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
)

// TestTruncate checks that TRUNCATE empties a table and its indexes, keeps
// the table's shard boundaries, survives a restart, and that it waits for
// a transaction that wrote the table before it, whose rows it empties too.
func TestTruncate(t *testing.T) {
	dir := t.TempDir()
	quiet := storage.SlogLogger{L: slog.New(slog.NewTextHandler(io.Discard, nil))}
	e, err := Open(Options{DataDir: dir, NoSync: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	s := testSession(t, e)
	query(t, s, "CREATE TABLE tt (k Int64, u Int64, PRIMARY KEY (k)) WITH (UNIFORM_PARTITIONS = 4)")
	query(t, s, "CREATE UNIQUE INDEX tt_u ON tt (u)")
	query(t, s, "INSERT INTO tt SELECT x, x * 2 FROM generate_series(1, 200) AS x")
	shards := formatRows(query(t, s, "SELECT count(*) FROM sys.partitions WHERE table_name = 'tt'"))

	// A transaction that wrote the table before TRUNCATE: TRUNCATE waits
	// for it (SHARE against its ROW EXCLUSIVE), so it commits, and its row
	// goes with the others.
	other := testSession(t, e)
	if _, err := tryQuery(other, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	query(t, other, "INSERT INTO tt VALUES (1000, 1000)")
	done := make(chan error, 1)
	go func() {
		_, err := tryQuery(s, "TRUNCATE tt")
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("TRUNCATE did not wait for the transaction that wrote the table: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	if _, err := tryQuery(other, "COMMIT"); err != nil {
		t.Fatalf("COMMIT of a transaction that wrote the table before TRUNCATE: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := formatRows(query(t, s, "SELECT count(*) FROM tt")); got != "0" {
		t.Fatalf("rows after TRUNCATE: %s", got)
	}
	if got := formatRows(query(t, s, "SELECT count(*) FROM sys.partitions WHERE table_name = 'tt'")); got != shards {
		t.Fatalf("shards after TRUNCATE: %s, before %s", got, shards)
	}
	if got := formatRows(query(t, s, "SELECT sum(row_count) FROM sys.partitions WHERE table_name = 'tt'")); got != "0" {
		t.Fatalf("sys.partitions counts %s rows after TRUNCATE", got)
	}
	query(t, s, "INSERT INTO tt VALUES (1, 2), (3, 4)")
	wantStmtCode(t, s, "INSERT INTO tt VALUES (5, 2)", sqlerr.UniqueViolation)
	wantStmtCode(t, s, "TRUNCATE nope", sqlerr.UndefinedTable)
	checkIndexes(t, e)
	s.Close()
	other.Close()
	e.Close()

	e, err = Open(Options{DataDir: dir, NoSync: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s = testSession(t, e)
	if got := formatRows(query(t, s, "SELECT k, u FROM tt ORDER BY k")); got != "1,2|3,4" {
		t.Fatalf("after restart: %s", got)
	}
	checkIndexes(t, e)
}
