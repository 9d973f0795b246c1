package sql

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/tests/logictest"
)

// TestLogicFilesInProcess runs the SQL regression files (tests/sql/*.test)
// over a Session in this process, each file in a database of its own, with
// the record parser and runner of tests/logictest — the same files
// tests.TestLogicFiles runs over the wire against a built server.
func TestLogicFilesInProcess(t *testing.T) {
	files, _ := filepath.Glob("../tests/sql/*.test")
	if len(files) == 0 {
		t.Fatal("no .test files in tests/sql")
	}
	e := testEngine(t)
	admin := testSession(t, e)
	for i, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			db := fmt.Sprintf("logictest_%d", i)
			query(t, admin, "CREATE DATABASE "+db)
			s, err := e.NewSession(db, "pivotdb")
			if err != nil {
				t.Fatal(err)
			}
			opts := logictest.Options{FileTimeout: 5 * time.Minute}
			r := logictest.RunConn(context.Background(), opts, file, sessionConn{s})
			s.Close()
			query(t, admin, "DROP DATABASE "+db)
			t.Logf("%s", r.Summary())
			for _, p := range r.Problems() {
				t.Error(p)
			}
		})
	}
}

// sessionConn runs records on a Session as the server runs a simple Query:
// the statements of one string in one implicit transaction that commits at
// Sync, the first error skipping the rest and failing an open block, every
// value in text format.
type sessionConn struct{ s *Session }

func (c sessionConn) Exec(ctx context.Context, sql string) error {
	_, _, err := c.Query(ctx, sql)
	return err
}

func (c sessionConn) Query(ctx context.Context, sql string) (ncols int, rows [][][]byte, err error) {
	c.s.BeginImplicit()
	defer func() {
		if err != nil {
			c.s.FailTransaction()
		}
		if serr := c.s.Sync(); err == nil {
			err = serr
		}
	}()
	stmts, err := c.s.PrepareScript(ctx, sql)
	if err != nil {
		return -1, nil, err
	}
	several := 0
	for _, p := range stmts {
		if !p.Empty {
			several++
		}
	}
	c.s.SetScript(several > 1)
	ncols = -1
	for _, p := range stmts {
		if p.Empty {
			continue
		}
		if rows, err = c.run(ctx, p, &ncols, rows); err != nil {
			return ncols, rows, err
		}
	}
	return ncols, rows, nil
}

// run executes one statement, collecting its rows when it is the first
// that returns any columns.
func (c sessionConn) run(ctx context.Context, p *Prepared, ncols *int, rows [][][]byte) ([][][]byte, error) {
	if len(p.ParamTypes) > 0 {
		return rows, sqlerr.New(sqlerr.UndefinedParameter, "there is no parameter $1")
	}
	res, err := c.s.Execute(ctx, p, nil)
	if err != nil {
		return rows, err
	}
	defer res.Close()
	collect := *ncols < 0 && len(res.Columns()) > 0
	if collect {
		*ncols = len(res.Columns())
	}
	for {
		row, err := res.Next(ctx)
		if err != nil || row == nil {
			return rows, err
		}
		if !collect {
			continue
		}
		vals := make([][]byte, len(row))
		for i, v := range row {
			if !v.IsNull() {
				vals[i] = []byte(v.Text())
			}
		}
		rows = append(rows, vals)
	}
}

func (sessionConn) Lost() bool { return false }
