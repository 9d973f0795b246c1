package tests

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/mvcc"
	"github.com/pivotdb/pivotdb/storage/storagetest"
)

// TestIntentsKillDuringCommit: a block's writes past the intent threshold
// (issue 16 item 9, step 2; set low here with PIVOTDB_INTENT_FLUSH_BYTES)
// are intents until COMMIT resolves them. The server is killed -9 while
// such a commit runs, at several points of it (before, during and after
// the resolution); after the restart the killed transaction shows all of
// its writes or none (its new rows and its update of the previous round's
// rows together), every acknowledged round is there, a round whose record
// was COMMITTED at the kill is there, and no transaction record is left.
func TestIntentsKillDuringCommit(t *testing.T) {
	t.Setenv("PIVOTDB_INTENT_FLUSH_BYTES", "65536")
	srv := startServer(t)
	ctx := ctxT(t)
	c := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	mustExec(t, c, "CREATE TABLE big (k int PRIMARY KEY, round int, v text)")
	const rows = 20000
	// round r inserts rows [r*rows, (r+1)*rows) and sets the round of the
	// previous round's rows to r.
	round := func(c *pgx.Conn, r int) error {
		for _, q := range []string{
			"BEGIN",
			fmt.Sprintf("INSERT INTO big SELECT x, %d, repeat('x', 100) FROM generate_series(%d, %d) AS g(x)", r, r*rows, (r+1)*rows-1),
			fmt.Sprintf("UPDATE big SET round = %d WHERE k >= %d AND k < %d", r, (r-1)*rows, r*rows),
		} {
			if _, err := c.Exec(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		return nil
	}
	// check verifies rounds 0..acked and that the killed round (acked+1)
	// is all there or not at all; it returns the last round present.
	check := func(c *pgx.Conn, acked int) int {
		t.Helper()
		last := acked
		var n int64
		if err := c.QueryRow(ctx, "SELECT count(*) FROM big WHERE k >= $1", (acked+1)*rows).Scan(&n); err != nil {
			t.Fatal(err)
		}
		switch n {
		case 0:
		case rows:
			last = acked + 1
		default:
			t.Fatalf("round %d (killed during its commit) left %d of its %d rows", acked+1, n, rows)
		}
		for r := 0; r <= last; r++ {
			want := r + 1 // updated by the next round
			if r == last {
				want = r
			}
			var cnt, lo, hi int64
			if err := c.QueryRow(ctx, "SELECT count(*), min(round), max(round) FROM big WHERE k >= $1 AND k < $2", r*rows, (r+1)*rows).Scan(&cnt, &lo, &hi); err != nil {
				t.Fatal(err)
			}
			if cnt != rows || lo != int64(want) || hi != int64(want) {
				t.Fatalf("after round %d: rows of round %d: %d rows, rounds %d..%d; want %d rows of round %d", last, r, cnt, lo, hi, rows, want)
			}
		}
		return last
	}
	mustExec(t, c, fmt.Sprintf("INSERT INTO big SELECT x, 0, 'r0' FROM generate_series(0, %d) AS g(x)", rows-1))
	// An undisturbed round measures how long a commit takes.
	if err := round(c, 1); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	mustExec(t, c, "COMMIT")
	commitTime := time.Since(start)
	t.Logf("a commit of %d new and %d updated rows takes %v", rows, rows, commitTime)
	acked := 1
	for i, frac := range []float64{0, 0.3, 0.8} {
		r := acked + 1
		if err := round(c, r); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := c.Exec(context.Background(), "COMMIT")
			done <- err
		}()
		time.Sleep(time.Duration(frac * float64(commitTime)))
		srv.kill()
		if err := <-done; err == nil {
			acked = r // acknowledged before the kill: it must be there
		}
		c.Close(ctx)
		records := txnRecordsIn(t, srv.dataDir)
		srv.start()
		c = srv.connect(t, pgx.QueryExecModeSimpleProtocol)
		last := check(c, acked)
		t.Logf("kill %d at %.0f%% of a commit: round %d acknowledged, %d present; records at the kill: %v", i, frac*100, acked, last, records)
		// A record COMMITTED at the kill is a commit that passed its
		// commit point (durable): recovery must finish it.
		if len(records) == 1 && records[0] == mvcc.Committed && last != r {
			t.Fatalf("round %d's record was COMMITTED at the kill, but the round is not there after the restart", r)
		}
		acked = last
	}
	srv.stop()
	if recs := txnRecordsIn(t, srv.dataDir); len(recs) != 0 {
		t.Fatalf("transaction records left after recovery: %v", recs)
	}
}

// txnRecordsIn opens a stopped server's data directory and lists the
// statuses of its transaction records.
func txnRecordsIn(t *testing.T, dir string) []mvcc.TxnStatus {
	t.Helper()
	eng, err := storage.Open(dir, storage.Options{Logger: storagetest.QuietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	var out []mvcc.TxnStatus
	if err := mvcc.ScanTxnRecords(eng.LocalReader(), func(_ []byte, _ mvcc.TxnID, rec mvcc.TxnRecord) error {
		out = append(out, rec.Status)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}
