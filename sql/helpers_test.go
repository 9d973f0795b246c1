package sql

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/pivotdb/pivotdb/storage"

	"github.com/pivotdb/pivotdb/sql/types"
)

// testEngine opens an engine on a temporary directory without fsync.
func testEngine(t testing.TB) *Engine {
	t.Helper()
	quiet := storage.SlogLogger{L: slog.New(slog.NewTextHandler(io.Discard, nil))}
	e, err := Open(Options{DataDir: t.TempDir(), NoSync: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func testSession(t testing.TB, e *Engine) *Session {
	t.Helper()
	s, err := e.NewSession("pivotdb", "pivotdb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// query runs one statement with parameters and returns its rows.
func query(t testing.TB, s *Session, sql string, params ...types.Value) [][]types.Value {
	t.Helper()
	rows, err := tryQuery(s, sql, params...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return rows
}

func tryQuery(s *Session, sql string, params ...types.Value) ([][]types.Value, error) {
	ctx := context.Background()
	s.BeginImplicit()
	p, err := s.Prepare(ctx, sql, nil)
	if err != nil {
		s.Sync()
		return nil, err
	}
	for i := range params {
		if params[i], err = types.Cast(params[i], p.ParamTypes[i]); err != nil {
			s.Sync()
			return nil, err
		}
	}
	res, err := s.Execute(ctx, p, params)
	if err != nil {
		s.FailTransaction()
		s.Sync()
		return nil, err
	}
	defer res.Close()
	var out [][]types.Value
	for {
		row, err := res.Next(ctx)
		if err != nil {
			s.FailTransaction()
			s.Sync()
			return nil, err
		}
		if row == nil {
			break
		}
		out = append(out, append([]types.Value(nil), row...))
	}
	return out, s.Sync()
}

// execCount runs the prepared statement p in an implicit transaction and
// returns how many rows it produced, without copying them: the loop body of
// benchmarks that measure reads.
func execCount(t testing.TB, s *Session, p *Prepared, params []types.Value) int {
	t.Helper()
	ctx := context.Background()
	s.BeginImplicit()
	res, err := s.Execute(ctx, p, params)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		row, err := res.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if row == nil {
			break
		}
		n++
	}
	res.Close()
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	return n
}

// inCycle runs sql in s's open protocol cycle (BeginImplicit, no Sync),
// drains its rows and returns its tag: the extended protocol's Execute
// before Sync.
func inCycle(t testing.TB, s *Session, sql string) string {
	t.Helper()
	ctx := context.Background()
	p, err := s.Prepare(ctx, sql, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Execute(ctx, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	for {
		row, err := res.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if row == nil {
			return res.Tag()
		}
	}
}
