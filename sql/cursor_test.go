package sql

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
)

// cursorEngine is an engine whose statements may hold limit bytes of rows.
func cursorEngine(t *testing.T, limit int64) *Session {
	t.Helper()
	quiet := storage.SlogLogger{L: slog.New(slog.NewTextHandler(io.Discard, nil))}
	e, err := Open(Options{DataDir: t.TempDir(), NoSync: true, Logger: quiet, MaxQueryMemory: limit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	s := testSession(t, e)
	query(t, s, "CREATE TABLE ct (k Int64, v Utf8, PRIMARY KEY (k))")
	// In steps, since an INSERT's source counts against the limit too.
	for lo := 1; lo <= 5000; lo += 100 {
		query(t, s, "INSERT INTO ct SELECT generate_series, repeat('x', 100) FROM generate_series($1::Int64, $2::Int64)",
			types.NewInt64(int64(lo)), types.NewInt64(int64(lo+99)))
	}
	return s
}

// A forward-only cursor keeps no rows: it reads 5000 rows of ~150 bytes
// under a 64 KB limit, which a SCROLL or WITH HOLD cursor cannot.
func TestCursorMemoryLimit(t *testing.T) {
	s := cursorEngine(t, 64<<10)
	query(t, s, "BEGIN")
	query(t, s, "DECLARE f CURSOR FOR SELECT k, v FROM ct")
	if rows := query(t, s, "FETCH ALL FROM f"); len(rows) != 5000 {
		t.Fatalf("forward-only cursor gave %d rows, want 5000", len(rows))
	}
	query(t, s, "DECLARE sc SCROLL CURSOR FOR SELECT k, v FROM ct")
	_, err := tryQuery(s, "FETCH ALL FROM sc")
	wantCode(t, err, sqlerr.OutOfMemory)
	query(t, s, "ROLLBACK")

	// WITH HOLD reads its rows at COMMIT; when they do not fit, the
	// COMMIT fails and the block's writes are rolled back.
	query(t, s, "BEGIN")
	query(t, s, "INSERT INTO ct VALUES (0, 'in the block')")
	query(t, s, "DECLARE h CURSOR WITH HOLD FOR SELECT k, v FROM ct")
	_, err = tryQuery(s, "COMMIT")
	wantCode(t, err, sqlerr.OutOfMemory)
	if rows := query(t, s, "SELECT count(*) FROM ct WHERE k = 0"); rows[0][0].Int() != 0 {
		t.Fatal("the block's write survived a failed COMMIT")
	}
	_, err = tryQuery(s, "FETCH h")
	wantCode(t, err, sqlerr.InvalidCursorName)

	// A held cursor that fits survives COMMIT with its rows.
	query(t, s, "BEGIN")
	query(t, s, "DECLARE h CURSOR WITH HOLD FOR SELECT k FROM ct WHERE k <= 100")
	query(t, s, "COMMIT")
	if rows := query(t, s, "FETCH ALL FROM h"); len(rows) != 100 || rows[99][0].Int() != 100 {
		t.Fatalf("held cursor gave %d rows", len(rows))
	}
	query(t, s, "CLOSE h")
}

// A cancelled FETCH stops reading and reports 57014.
func TestCursorFetchCancel(t *testing.T) {
	s := cursorEngine(t, 0)
	query(t, s, "BEGIN")
	query(t, s, "DECLARE f CURSOR FOR SELECT k FROM ct")
	ctx, cancel := context.WithCancel(context.Background())
	p, err := s.Prepare(ctx, "FETCH ALL FROM f", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Execute(ctx, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if row, err := res.Next(ctx); err != nil || row == nil {
		t.Fatalf("first row: %v %v", row, err)
	}
	cancel()
	for {
		row, err := res.Next(ctx)
		if err != nil {
			wantCode(t, err, sqlerr.QueryCanceled)
			break
		}
		if row == nil {
			t.Fatal("FETCH ALL finished after its context was cancelled")
		}
	}
	res.Close()
	if s.TxStatus() != 'E' {
		t.Errorf("transaction status %c after a cancelled FETCH, want E", s.TxStatus())
	}
	query(t, s, "ROLLBACK")
}
