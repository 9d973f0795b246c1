package logictest

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Conn is what a file's records run on: a connection to a server over the
// wire (RunFile), or a session inside the test process (RunConn, used by
// package sql's tests). Every statement runs as a simple query would.
type Conn interface {
	// Exec runs sql (one or more statements) and reads its results.
	Exec(ctx context.Context, sql string) error
	// Query runs sql and returns the text values of the first statement
	// of it that returns rows: ncols columns (-1 when none returned rows),
	// rows of ncols values, nil for NULL.
	Query(ctx context.Context, sql string) (ncols int, rows [][][]byte, err error)
	// Lost reports whether the connection is gone, so the file cannot go on.
	Lost() bool
}

// pgxConn is a Conn over the wire, in the simple query protocol.
type pgxConn struct{ c *pgx.Conn }

func (p pgxConn) Exec(ctx context.Context, sql string) error {
	_, err := p.c.PgConn().Exec(ctx, sql).ReadAll()
	return err
}

func (p pgxConn) Query(ctx context.Context, sql string) (int, [][][]byte, error) {
	ncols := -1
	var rows [][][]byte
	mrr := p.c.PgConn().Exec(ctx, sql)
	for mrr.NextResult() {
		rr := mrr.ResultReader()
		collect := false
		if fds := rr.FieldDescriptions(); ncols < 0 && len(fds) > 0 {
			// The first statement that returns rows is the query's result.
			ncols, collect = len(fds), true
		}
		for rr.NextRow() {
			if !collect {
				continue
			}
			row := make([][]byte, ncols)
			for i, v := range rr.Values() {
				if v != nil {
					row[i] = append([]byte{}, v...)
				}
			}
			rows = append(rows, row)
		}
		rr.Close()
	}
	return ncols, rows, mrr.Close()
}

func (p pgxConn) Lost() bool { return p.c.IsClosed() }
