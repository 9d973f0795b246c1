package sql

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/pivotdb/pivotdb/jobs"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/exec"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/pgbinary"
	"github.com/pivotdb/pivotdb/sql/pgcopy"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/txn"
	"github.com/pivotdb/pivotdb/sql/types"
)

// COPY ... FROM STDIN and COPY ... TO STDOUT (sql/pgcopy has the formats).
//
// Execute returns a Result that the server drives through CopyOf: for
// FROM it feeds the client's CopyData bytes to Write and ends with Done
// (or Fail); for TO it sends what Read returns. The Result's Tag is
// "COPY n" once the copy ended.
//
// COPY FROM completes and checks rows with the INSERT path's rowWriter
// (defaults, computed columns, sequences, NOT NULL, CHECK, foreign keys).
// Inside a transaction block (or after a write of the same protocol
// cycle, or before other statements of it) it writes them through the
// session's transaction, indexes included, so the COPY is part of the
// transaction; otherwise it takes the bulk path
// (copybulk.go), which keeps memory bounded and commits at CopyDone. A bad
// row fails the statement with the row's line in the error's CONTEXT, and
// the transaction with it: nothing of the COPY is visible.

// CopyProgress is what a running COPY reports to the engine's progress
// hook (SetCopyProgressHook): the jobs table shows it.
type CopyProgress struct {
	// ID identifies the COPY among those running (unique per Engine).
	ID       uint64
	PID      uint32
	Relation string // the table, or "" for COPY (query) TO
	From     bool   // COPY FROM (else TO)
	Rows     int64  // rows copied so far
	Bytes    int64  // bytes of data received or sent so far
	Done     bool   // the last report of this COPY
	Err      error  // with Done: why it failed (nil: it succeeded)
}

// copyProgressEvery is how many rows pass between progress reports.
const copyProgressEvery = 10000

// SetCopyProgressHook installs fn to receive the progress of every COPY:
// every copyProgressEvery rows and once when it ends. fn runs on the
// session's goroutine and must not block; nil removes the hook.
func (e *Engine) SetCopyProgressHook(fn func(CopyProgress)) {
	if fn == nil {
		e.copyProgress.Store(nil)
		return
	}
	e.copyProgress.Store(&fn)
}

func (e *Engine) reportCopy(p CopyProgress) {
	if fn := e.copyProgress.Load(); fn != nil {
		(*fn)(p)
	}
}

// copyJob is a COPY's entry in sys.jobs (SHOW JOBS): rows done (the total
// is unknown), and its end; CANCEL JOB cancels the COPY.
type copyJob struct {
	job *jobs.Job
	ctx context.Context // the statement's context, cancelled by CANCEL JOB too
}

func (s *Session) startCopyJob(ctx context.Context) copyJob {
	job := s.startJob(jobs.KindCopy)
	job.Progress(0, -1)
	return copyJob{job: job, ctx: job.Context(ctx)}
}

// report passes progress to the engine's hook and the job.
func (j copyJob) report(e *Engine, p CopyProgress) {
	e.reportCopy(p)
	if p.Done {
		total := int64(-1)
		if p.Err == nil {
			total = p.Rows
		}
		j.job.Progress(p.Rows, total)
		j.job.Finish(p.Err)
		return
	}
	j.job.Progress(p.Rows, -1)
}

// err is the error of a COPY whose context ended: 57014 naming CANCEL
// JOB when that is why.
func (j copyJob) err() error {
	if errors.Is(context.Cause(j.ctx), jobs.ErrCanceled) {
		return sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to CANCEL JOB %d", j.job.ID())
	}
	return j.ctx.Err()
}

// CopyStream is the copy side of a COPY statement's Result.
type CopyStream struct {
	sr  *sessionResult
	in  *copyFrom
	out *copyTo
}

// CopyOf returns the copy stream of a COPY's Result, nil for any other
// Result.
func CopyOf(r Result) *CopyStream {
	sr, ok := r.(*sessionResult)
	if !ok {
		return nil
	}
	switch c := sr.Result.(type) {
	case *copyFrom:
		return &CopyStream{sr: sr, in: c}
	case *copyTo:
		return &CopyStream{sr: sr, out: c}
	}
	return nil
}

// In reports whether this is COPY FROM (the client sends data).
func (c *CopyStream) In() bool { return c.in != nil }

// Binary reports whether the data is in binary format; Columns is the
// number of columns.
func (c *CopyStream) Binary() bool {
	if c.in != nil {
		return c.in.p.Options.Format == pgcopy.Binary
	}
	return c.out.p.Options.Format == pgcopy.Binary
}

func (c *CopyStream) Columns() int {
	if c.in != nil {
		return len(c.in.p.Names)
	}
	return len(c.out.p.Names)
}

// fail maps a copy error as errors of statements are (cancel, timeout)
// and fails the session's transaction.
func (c *CopyStream) fail(err error) error {
	s := c.sr.s
	err = s.mapError(c.sr.ctx, err)
	s.onError()
	return err
}

// Write decodes and writes the rows of data (one CopyData message's
// bytes). After an error the COPY is over: the caller reports it and
// drops the rest of the client's data.
func (c *CopyStream) Write(data []byte) error {
	if err := c.in.write(c.sr.ctx, data); err != nil {
		return c.fail(err)
	}
	return nil
}

// Done ends COPY FROM: the last row, then the commit when the COPY runs
// in a transaction of its own.
func (c *CopyStream) Done() error {
	if err := c.in.finish(c.sr.ctx); err != nil {
		return c.fail(err)
	}
	return nil
}

// Fail is the client's CopyFail: the COPY fails with 57014 and its
// message, as in PostgreSQL.
func (c *CopyStream) Fail(msg string) error {
	err := sqlerr.New(sqlerr.QueryCanceled, "COPY from stdin failed: %s", msg)
	c.in.abort(err)
	c.sr.s.onError()
	return err
}

// Read returns the next piece of COPY TO's data (a row, with the header
// before the first), nil at the end.
func (c *CopyStream) Read() ([]byte, error) {
	b, err := c.out.read(c.sr.ctx)
	if err != nil {
		return nil, c.fail(err)
	}
	return b, nil
}

type statementsAfterKey struct{}

// WithStatementsAfter marks ctx as the context of a statement that more
// statements of the same protocol cycle follow (the rest of a simple
// Query's string). COPY FROM then writes through the cycle's transaction,
// which commits at the cycle's end, instead of taking the bulk path, which
// commits when the COPY ends.
func WithStatementsAfter(ctx context.Context) context.Context {
	return context.WithValue(ctx, statementsAfterKey{}, true)
}

func statementsAfter(ctx context.Context) bool {
	v, _ := ctx.Value(statementsAfterKey{}).(bool)
	return v
}

// copyStatement starts a COPY.
func (s *Session) copyStatement(ctx context.Context, p *bind.Copy) (Result, error) {
	id := s.e.copyIDs.Add(1)
	job := s.startCopyJob(ctx)
	ctx = job.ctx
	res, err := s.startCopy(ctx, p, id, job)
	if err != nil {
		job.job.Finish(err)
	}
	return res, err
}

func (s *Session) startCopy(ctx context.Context, p *bind.Copy, id uint64, job copyJob) (Result, error) {
	var pid uint32
	if s.backend != nil {
		pid = s.backend.PID
	}
	if !p.Stmt.From {
		enc, err := pgcopy.NewEncoder(p.Options, p.Types)
		if err != nil {
			return nil, err
		}
		it, err := s.iterate(ctx, p.Query, nil)
		if err != nil {
			return nil, err
		}
		return &copyTo{s: s, p: p, enc: enc, it: it, job: job, prog: CopyProgress{ID: id, PID: pid, Relation: p.Relation}}, nil
	}
	if p.Options.Freeze {
		if err := s.checkFreeze(p.Insert.Table); err != nil {
			return nil, err
		}
	}
	if p.Options.Format == pgcopy.Binary {
		for i, t := range p.Types {
			if !pgbinary.Has(t.OID()) {
				return nil, sqlerr.NotSupported("COPY BINARY of %s column \"%s\"", t.String(), p.Names[i])
			}
		}
	}
	c := &copyFrom{s: s, p: p, dec: pgcopy.NewDecoder(p.Options, p.Names), job: job,
		prog: CopyProgress{ID: id, PID: pid, Relation: p.Relation, From: true}}
	ins := p.Insert
	// At SERIALIZABLE the rows go through the transaction, whose commit
	// refreshes its reads (sql/txn); an ingestion has no such check. On
	// an engine whose commits go through Raft groups the load goes as
	// replicated writes (storage/replbulk.go).
	if s.txn == nil && !statementsAfter(ctx) && bulkUsable(ins.Table) && s.isolation() != txn.Serializable {
		// Outside a block and before any write of the protocol cycle: the
		// bulk path (copybulk.go), in a transaction of the COPY's own that
		// holds its foreign-key locks and commits at CopyDone.
		c.t, c.own = s.beginTxn(), true
		c.bulk = newBulkLoad(ctx, s.e, ins.Table, p.Relation)
	} else {
		if s.txn == nil && s.implicit {
			s.txn = s.beginTxn()
		}
		c.t = s.txn
		if c.t == nil {
			c.t, c.own = s.beginTxn(), true
		}
		// The rows' locks are memory holds until the block's next flush
		// turns them into its intents (sql/txn's write holds): no lock
		// record written and deleted per row. Off again when the COPY
		// ends (finish, abort).
		c.t.SetWriteHolds(true)
	}
	c.ec = &exec.Context{Ctx: ctx, Eval: s.evalContext(ctx, nil), Reader: c.t.Reader(), Shards: s.e.shards,
		RangeLimit: s.vars.RangeExpansionLimit(), MemLimit: s.memLimit(), Scans: &s.e.tableActivity}
	c.w = newRowWriter(ctx, c.t, ins.Table, ins.Computed, c.ec)
	c.w.checks = ins.Checks
	if ins.FK != nil {
		c.w.fk, c.w.fkt = newFKWriter(ctx, c.t, c.ec.Eval), ins.FK.Root
	}
	c.src = make([]types.Value, len(p.Names))
	c.listed = insertListed(ins)
	return c, nil
}

// copyFrom is the Result of COPY FROM STDIN while the client sends data.
type copyFrom struct {
	s   *Session
	p   *bind.Copy
	dec *pgcopy.Decoder
	t   *txn.Txn
	own bool // t is the COPY's own (no protocol cycle, no block): it commits at Done
	// bulk collects the rows of the bulk path (nil: rows are written
	// through t as INSERT writes them).
	bulk *bulkLoad
	ec   *exec.Context
	w    *rowWriter
	src  []types.Value
	// listed marks the columns the COPY supplies (the same for every
	// row); rowBuf is the bulk path's row, reused (copyfast.go).
	listed []bool
	rowBuf []types.Value

	prog CopyProgress
	job  copyJob
	done bool // finished or failed; tag set when finished
	tag  string
}

func (c *copyFrom) Columns() []ResultColumn                     { return nil }
func (c *copyFrom) Next(context.Context) ([]types.Value, error) { return nil, nil }
func (c *copyFrom) Tag() string                                 { return c.tag }

// Close ends a COPY the client never finished (the connection ended).
func (c *copyFrom) Close() {
	if !c.done {
		c.abort(sqlerr.New(sqlerr.QueryCanceled, "COPY from stdin did not finish"))
	}
}

func (c *copyFrom) write(ctx context.Context, data []byte) error {
	if c.done {
		return nil
	}
	c.prog.Bytes += int64(len(data))
	c.dec.Write(data)
	return c.drain(ctx)
}

// drain writes every complete row buffered.
func (c *copyFrom) drain(ctx context.Context) error {
	for {
		if c.job.ctx.Err() != nil {
			err := c.job.err()
			c.abort(err)
			return err
		}
		fields, ok, err := c.dec.Next()
		if err != nil {
			err = c.context(err, -1, nil)
			c.abort(err)
			return err
		}
		if !ok {
			return nil
		}
		if err := c.row(fields); err != nil {
			c.abort(err)
			return err
		}
	}
}

// row converts one row's fields to values and writes it as INSERT does.
func (c *copyFrom) row(fields [][]byte) error {
	binary := c.p.Options.Format == pgcopy.Binary
	for i, f := range fields {
		if f == nil {
			c.src[i] = types.Value{}
			continue
		}
		t := c.p.Types[i]
		var v types.Value
		var err error
		if binary {
			if v, err = pgbinary.Decode(t.OID(), f); err == nil && (v.Family() != t.Family || !t.Plain() || t.Family == types.Array) {
				v, err = types.Cast(v, t)
			}
		} else if types.StyleDependent(t.Family) {
			// Times are read as a literal of a statement would be: a
			// timestamptz without an offset in the session's zone, a
			// numeric date in DateStyle's order, an interval in
			// IntervalStyle (PostgreSQL's COPY reads with the same
			// input functions).
			v, err = expr.CastInZone(c.ec.Eval, types.NewUtf8(string(f)), t)
		} else if fv, ok, ferr := parseCopyField(t, f); ok {
			v, err = fv, ferr
		} else {
			v, err = types.ParseText(t, string(f))
		}
		if err != nil {
			return c.context(err, i, f)
		}
		c.src[i] = v
	}
	row, err := c.place()
	if err != nil {
		return c.context(err, -1, nil)
	}
	if c.bulk != nil {
		err = c.bulkRow(row)
	} else {
		err = c.w.write(row, c.listed, bind.ModeInsert)
	}
	if err != nil {
		return c.context(err, -1, nil)
	}
	c.prog.Rows++
	if c.prog.Rows%copyProgressEvery == 0 {
		c.job.report(c.s.e, c.prog)
	}
	return nil
}

// context adds PostgreSQL's CONTEXT line to a COPY FROM error: the line,
// and the column and its value when one value was at fault (col >= 0).
func (c *copyFrom) context(err error, col int, val []byte) error {
	var se *sqlerr.Error
	if !errors.As(err, &se) || se.Where != "" {
		return err
	}
	e := *se
	where := fmt.Sprintf("COPY %s, line %d", c.p.Relation, c.dec.Line())
	binary := c.p.Options.Format == pgcopy.Binary
	switch {
	case col >= 0 && !binary:
		where += fmt.Sprintf(", column %s: \"%s\"", c.p.Names[col], printable(val))
	case col >= 0:
		where += ", column " + c.p.Names[col]
	case !binary && c.dec.LineText() != nil:
		where += fmt.Sprintf(": \"%s\"", printable(c.dec.LineText()))
	}
	e.Where = where
	if errors.Is(err, pgbinary.ErrBadFormat) {
		e.Message = "incorrect binary data format"
	}
	return &e
}

// printable shortens a value or line for CONTEXT as PostgreSQL does: at
// most 100 bytes, cut at a character boundary, then "...".
func printable(b []byte) string {
	const max = 100
	if len(b) <= max {
		return string(b)
	}
	n := max
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return string(b[:n]) + "..."
}

// finish is CopyDone: the rows left, the commit of the COPY's own
// transaction, the tag.
func (c *copyFrom) finish(ctx context.Context) error {
	if c.done {
		return nil
	}
	c.dec.Close()
	if err := c.drain(ctx); err != nil {
		return err
	}
	c.t.SetWriteHolds(false)
	if c.bulk != nil {
		err := c.bulk.finish(c.job.ctx, c.t)
		if err != nil && c.job.ctx.Err() != nil {
			err = c.job.err()
		}
		c.bulk.close()
		if err != nil {
			c.abort(err)
			return err
		}
	}
	c.done = true
	if c.own && c.bulk == nil {
		if err := c.t.Commit(); err != nil {
			c.prog.Done, c.prog.Err = true, err
			c.job.report(c.s.e, c.prog)
			return err
		}
	}
	c.tag = fmt.Sprintf("COPY %d", c.prog.Rows)
	c.s.e.tableActivity.countWrites(c.p.Insert.Table.ID, c.prog.Rows, 0, 0)
	c.prog.Done = true
	c.job.report(c.s.e, c.prog)
	return nil
}

// abort ends the COPY after an error: its own transaction rolls back (the
// session's fails with the error, through the caller).
func (c *copyFrom) abort(err error) {
	if c.done {
		return
	}
	c.done = true
	c.t.SetWriteHolds(false)
	if c.own {
		c.t.Rollback()
	}
	if c.bulk != nil {
		c.bulk.close()
	}
	c.prog.Done, c.prog.Err = true, err
	c.job.report(c.s.e, c.prog)
}

// copyTo is the Result of COPY ... TO STDOUT.
type copyTo struct {
	s       *Session
	p       *bind.Copy
	enc     *pgcopy.Encoder
	it      exec.Iter
	started bool
	ended   bool
	buf     []byte
	prog    CopyProgress
	job     copyJob
	tag     string
}

func (c *copyTo) Columns() []ResultColumn                     { return nil }
func (c *copyTo) Next(context.Context) ([]types.Value, error) { return nil, nil }
func (c *copyTo) Tag() string                                 { return c.tag }
func (c *copyTo) Close() {
	if c.it != nil {
		c.it.Close()
		c.it = nil
	}
	if !c.ended && !c.prog.Done {
		// Ended before its last row (an error, the client gone).
		c.prog.Done, c.prog.Err = true, sqlerr.New(sqlerr.QueryCanceled, "COPY to stdout did not finish")
		c.job.report(c.s.e, c.prog)
	}
}

func (c *copyTo) read(ctx context.Context) ([]byte, error) {
	if c.ended {
		return nil, nil
	}
	buf := c.buf[:0]
	if !c.started {
		c.started = true
		buf = c.enc.Start(buf, c.p.Names)
	}
	if c.job.ctx.Err() != nil {
		err := c.job.err()
		c.prog.Done, c.prog.Err = true, err
		c.job.report(c.s.e, c.prog)
		return nil, err
	}
	row, err := c.it.Next()
	if err != nil {
		c.prog.Done, c.prog.Err = true, err
		c.job.report(c.s.e, c.prog)
		return nil, err
	}
	if row == nil {
		c.ended = true
		c.Close()
		buf = c.enc.End(buf)
		c.tag = fmt.Sprintf("COPY %d", c.prog.Rows)
		c.prog.Done = true
		c.job.report(c.s.e, c.prog)
		if len(buf) == 0 {
			return nil, nil
		}
		c.buf = buf
		return buf, nil
	}
	row = row[:len(c.p.Names)]
	// Printed in the session's TimeZone, DateStyle and IntervalStyle,
	// as rows of a query are.
	row = presentRow(row, c.s.vars)
	if buf, err = c.enc.AppendRow(buf, row); err != nil {
		return nil, err
	}
	c.prog.Rows++
	c.prog.Bytes += int64(len(buf))
	if c.prog.Rows%copyProgressEvery == 0 {
		c.job.report(c.s.e, c.prog)
	}
	if cap(buf) <= 1<<20 {
		c.buf = buf
	}
	return buf, nil
}
