package tests

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/mvcc"
	"github.com/pivotdb/pivotdb/storage/storagetest"
)

// lockRecordsIn opens a stopped server's data directory and lists the
// lock records in it, and the statuses of its transaction records.
func lockRecordsIn(t *testing.T, dir string) ([]mvcc.LockRecord, []mvcc.TxnStatus) {
	t.Helper()
	eng, err := storage.Open(dir, storage.Options{Logger: storagetest.QuietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	var out []mvcc.LockRecord
	if err := mvcc.ScanLocks(eng.LocalReader(), storage.Span{}, func(r mvcc.LockRecord) error {
		out = append(out, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var statuses []mvcc.TxnStatus
	if err := mvcc.ScanTxnRecords(eng.LocalReader(), func(_ []byte, _ mvcc.TxnID, rec mvcc.TxnRecord) error {
		statuses = append(statuses, rec.Status)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out, statuses
}

// TestLockRecordsAfterKill: row locks live in the data (issue 16 item 9).
// An open transaction's locking read and write leave lock records and its
// PENDING transaction record in the store, which a kill -9 leaves behind;
// the restarted server removes them before its first transaction, and the
// rows are free (and unchanged: the write was never committed). The rows
// of a multi-row INSERT (INSERT ... SELECT) are locked by write holds in
// memory until the block's next flush makes them intents (sql/txn's
// writeholds.go): they leave no lock record, and the rows they guard were
// only in the block's memory, so the kill loses both.
func TestLockRecordsAfterKill(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	c := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	if _, err := c.Exec(ctx, "CREATE TABLE lr (id int PRIMARY KEY, v int); INSERT INTO lr VALUES (1, 1), (2, 2), (3, 3)"); err != nil {
		t.Fatal(err)
	}
	a := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	for _, q := range []string{"BEGIN", "SELECT v FROM lr WHERE id = 1 FOR SHARE", "UPDATE lr SET v = 20 WHERE id = 2"} {
		if _, err := a.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'tuple' AND relation = 'lr'::regclass").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("pg_locks shows %d row locks, want 2", n)
	}
	if _, err := a.Exec(ctx, "INSERT INTO lr SELECT id + 10, v FROM lr WHERE id <= 3"); err != nil {
		t.Fatal(err)
	}
	// Lock records are committed without fsync (a lost one belonged to a
	// transaction that died with its process); the next synced commit
	// carries them to the disk, as it does here.
	if _, err := c.Exec(ctx, "INSERT INTO lr VALUES (4, 4)"); err != nil {
		t.Fatal(err)
	}
	srv.kill()
	recs, txnRecs := lockRecordsIn(t, srv.dataDir)
	if len(txnRecs) != 1 || txnRecs[0] != mvcc.Pending {
		t.Fatalf("transaction records after kill -9: %v, want one PENDING", txnRecs)
	}
	strengths := map[mvcc.Strength]int{}
	for _, r := range recs {
		strengths[r.Strength]++
	}
	if len(recs) != 2 || strengths[mvcc.Share] != 1 || strengths[mvcc.NoKeyUpdate] != 1 {
		t.Fatalf("lock records after kill -9: %v (by strength), want a FOR SHARE and a FOR NO KEY UPDATE", strengths)
	}
	srv.start()
	srv.stop()
	if recs, txnRecs := lockRecordsIn(t, srv.dataDir); len(recs) != 0 || len(txnRecs) != 0 {
		t.Fatalf("%d lock records and %d transaction records left after a restart", len(recs), len(txnRecs))
	}
	srv.start()
	c = srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	if _, err := c.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	var v int
	if err := c.QueryRow(ctx, "SELECT v FROM lr WHERE id = 2 FOR UPDATE NOWAIT").Scan(&v); err != nil || v != 2 {
		t.Fatalf("row 2 after the restart: v=%d, %v (want 2, free)", v, err)
	}
	if _, err := c.Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(ctx, "SELECT count(*) FROM lr WHERE id > 10").Scan(&n); err != nil || n != 0 {
		t.Fatalf("rows of the killed block's INSERT ... SELECT: %d, %v", n, err)
	}
}
