package server

import (
	"context"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pivotdb/pivotdb/sql"
	"github.com/pivotdb/pivotdb/sql/memory"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// handleQuery runs a simple-protocol Query: every statement of the string in
// turn, each answered with RowDescription, DataRows and CommandComplete in
// text format; the first error skips the rest of the string. One
// ReadyForQuery ends the cycle.
func (c *conn) handleQuery(text string) error {
	// A simple Query replaces the unnamed statement and portal, as in
	// PostgreSQL.
	c.closePortal("")
	delete(c.stmts, "")

	ctx, done := c.statementContext()
	acct := c.statementAccount()
	ctx = memory.WithAccount(ctx, acct)
	c.resultAcct = acct
	defer func() { c.resultAcct = nil }()
	c.sess.BeginImplicit()
	err := c.runScript(ctx, text)
	if err == nil {
		if serr := c.sess.Sync(); serr != nil {
			err = c.commandError(ctx, serr)
		}
	}
	done()
	if err != nil {
		return err
	}
	return c.readyForQuery()
}

// runScript returns a non-nil error only when the connection must end.
func (c *conn) runScript(ctx context.Context, text string) error {
	if err := memory.FromContext(ctx).Grow(memory.ParseEstimate(text), "parsing"); err != nil {
		return c.commandError(ctx, err)
	}
	stmts, err := c.sess.PrepareScript(ctx, text)
	if err != nil {
		return c.commandError(ctx, err)
	}
	ran := false
	last, several := -1, 0
	for i, p := range stmts {
		if !p.Empty {
			last = i
			several++
		}
	}
	// Several statements form PostgreSQL's implicit transaction block:
	// their schema changes commit with the rest at Sync, or roll back.
	c.sess.SetScript(several > 1)
	for i, p := range stmts {
		if p.Empty {
			continue
		}
		ran = true
		end := c.startStatement(p.SQL)
		sctx := ctx
		if i < last {
			// The cycle's transaction spans the whole string (COPY FROM
			// must not commit on its own before the rest has run).
			sctx = sql.WithStatementsAfter(ctx)
		}
		tag, err := c.runSimpleStatement(sctx, p)
		end(tag, err)
		if err != nil {
			return c.commandError(ctx, err)
		}
		c.sendSessionEvents()
	}
	if !ran {
		c.send(&pgproto3.EmptyQueryResponse{})
	}
	return nil
}

func (c *conn) runSimpleStatement(ctx context.Context, p *sql.Prepared) (string, error) {
	if len(p.ParamTypes) > 0 {
		// Only the extended protocol can supply parameters.
		return "", sqlerr.New(sqlerr.UndefinedParameter, "there is no parameter $1")
	}
	// Each statement of the script reserves in a child of the Query's
	// account that it gives back when it ends: what one statement's
	// executor held does not count against the next.
	acct := memory.FromContext(ctx).Child("statement", 0)
	defer acct.Close()
	ctx = memory.WithAccount(ctx, acct)
	res, err := c.sess.Execute(ctx, p, nil)
	if err != nil {
		return "", err
	}
	defer res.Close()
	if cs := sql.CopyOf(res); cs != nil {
		tag, err := c.runCopy(cs, res)
		if err != nil {
			return "", err
		}
		c.sendCommandComplete(tag)
		return tag, nil
	}
	cols := res.Columns()
	formats := binaryCursorFormats(res, cols)
	if cols != nil {
		c.send(rowDescription(cols, formats))
	}
	var send rowSender
	send.start(res, cols, formats, c.simpleWire)
	c.simpleWire = nil
	defer func() { c.simpleWire = send.finish() }()
	for {
		more, err := send.next(ctx, c)
		if err != nil {
			return "", err
		}
		if !more {
			break
		}
	}
	tag := res.Tag()
	c.sendCommandComplete(tag)
	return tag, nil
}

// binaryCursorFormats is the formats of a FETCH from a DECLARE BINARY
// cursor: binary for every column whose type has a binary format here,
// text for the rest (nil: all text, any other result).
func binaryCursorFormats(res sql.Result, cols []sql.ResultColumn) []int16 {
	if !sql.BinaryRows(res) {
		return nil
	}
	formats := make([]int16, len(cols))
	for i, col := range cols {
		if hasBinary(col.Type.OID()) {
			formats[i] = formatBinary
		}
	}
	return formats
}
