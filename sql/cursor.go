package sql

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"
	"unsafe"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/exec"
	"github.com/pivotdb/pivotdb/sql/memory"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/pgcatalog"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Cursors (DECLARE, FETCH, MOVE, CLOSE) as in PostgreSQL.
//
// A cursor reads its query's executor iterator as FETCH asks for rows: a
// forward-only cursor (NO SCROLL, or no option, which behaves as NO SCROLL
// because PivotDB's plans cannot run backward) holds one iterator and no
// rows, so a client may page through any number of rows in bounded
// memory. A SCROLL cursor keeps every row it has read, so that it can go
// back; a WITH HOLD cursor reads all its rows when its transaction
// commits (at once when declared outside a block), since the
// transaction's view it reads from ends then. Rows a cursor keeps count
// against --max-query-memory per cursor (53200 beyond it).
//
// The iterator outlives the DECLARE statement, so it runs under a context
// of the cursor's own (without the statement's memory account, which
// closes with the statement). Each FETCH ties that context to its own
// statement context: a cancelled or timed-out FETCH stops the iterator
// (and the cursor with it; the block fails anyway, as in PostgreSQL).

// cursor is one open cursor of a session.
type cursor struct {
	name   string
	text   string // the DECLARE statement, for pg_cursors
	cols   []planner.Column
	rcols  []ResultColumn
	scroll bool
	hold   bool
	binary bool
	// inTxn marks a cursor declared in the open block: it ends with the
	// block (a held one survives a COMMIT, not a ROLLBACK).
	inTxn   bool
	created time.Time

	src    exec.Iter // nil once exhausted or materialized
	ctx    context.Context
	cancel context.CancelFunc
	// rows are the rows kept (SCROLL, or a held cursor after its
	// transaction): rows[k-1] is row k. A forward-only cursor keeps none.
	rows    [][]types.Value
	keepAll bool
	mem     int64
	read    int64 // rows taken from src so far
	done    bool  // src is exhausted: read is the row count
	// pos is the cursor's position: 0 before the first row, k on row k,
	// read+1 after the last (once done).
	pos int64
	// broken is set when a read failed: the cursor cannot go on.
	broken error
	limit  int64
}

// cursorColumns gives the binder the columns of an open cursor.
func (s *Session) cursorColumns(name string) ([]planner.Column, bool) {
	c, ok := s.cursors[name]
	if !ok {
		return nil, false
	}
	return c.cols, true
}

// openCursors lists the open cursors for pg_cursors, by name.
func (s *Session) openCursors() []pgcatalog.Cursor {
	out := make([]pgcatalog.Cursor, 0, len(s.cursors))
	for _, c := range s.cursors {
		out = append(out, pgcatalog.Cursor{Name: c.name, Statement: c.text, Holdable: c.hold, Binary: c.binary,
			Scrollable: c.scroll, Created: types.NewTimestamp(c.created.UnixMicro())})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// declareCursor opens a cursor on the query's iterator.
func (s *Session) declareCursor(ctx context.Context, st *bind.DeclareCursor, params []types.Value) (Result, error) {
	if !st.Hold && !s.inBlock() {
		return nil, sqlerr.New(sqlerr.NoActiveSQLTransaction, "DECLARE CURSOR can only be used in transaction blocks")
	}
	if _, dup := s.cursors[st.Name]; dup {
		return nil, sqlerr.New(sqlerr.DuplicateCursor, "cursor \"%s\" already exists", st.Name)
	}
	cctx, cancel := context.WithCancel(memory.WithAccount(context.WithoutCancel(ctx), nil))
	// The parameters outlive the protocol message that carried them.
	params = append([]types.Value(nil), params...)
	stop := context.AfterFunc(ctx, cancel)
	it, err := s.iterate(cctx, st.Query, params)
	stop()
	if err != nil {
		cancel()
		return nil, err
	}
	c := &cursor{
		name: st.Name, cols: st.Query.Columns(), rcols: resultColumns(st.Query.Columns()),
		scroll: st.Scroll == parser.ScrollYes, hold: st.Hold, binary: st.Binary,
		inTxn: s.inBlock(), created: s.e.opts.Now(), text: s.currentText,
		src: it, ctx: cctx, cancel: cancel, limit: s.e.opts.MaxQueryMemory,
	}
	c.keepAll = c.scroll
	if s.cursors == nil {
		s.cursors = map[string]*cursor{}
	}
	if !c.inTxn {
		// Outside a block the transaction ends with this statement.
		if err := c.materialize(ctx); err != nil {
			c.close()
			return nil, err
		}
	}
	s.cursors[st.Name] = c
	return &tagResult{tag: "DECLARE CURSOR"}, nil
}

// closeCursor is CLOSE name | ALL.
func (s *Session) closeCursor(st *bind.CloseCursor) (Result, error) {
	if st.All {
		s.closeCursors(func(*cursor) bool { return true })
		return &tagResult{tag: "CLOSE CURSOR ALL"}, nil
	}
	c, ok := s.cursors[st.Name]
	if !ok {
		return nil, bind.CursorNotFound(st.Name)
	}
	delete(s.cursors, st.Name)
	c.close()
	return &tagResult{tag: "CLOSE CURSOR"}, nil
}

// closeCursors closes the cursors drop selects.
func (s *Session) closeCursors(drop func(*cursor) bool) {
	for name, c := range s.cursors {
		if drop(c) {
			delete(s.cursors, name)
			c.close()
		}
	}
}

// endTxnCursors runs when the block ends: at COMMIT (commit true) held
// cursors read their rows before the transaction's view goes, the others
// close; at ROLLBACK every cursor declared in the block closes.
func (s *Session) endTxnCursors(ctx context.Context, commit bool) error {
	var err error
	if commit {
		names := make([]string, 0, len(s.cursors))
		for name, c := range s.cursors {
			if c.inTxn && c.hold {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		for _, name := range names {
			if err = s.cursors[name].materialize(ctx); err != nil {
				break
			}
		}
	}
	s.closeCursors(func(c *cursor) bool { return c.inTxn && (!commit || err != nil || !c.hold) })
	for _, c := range s.cursors {
		c.inTxn = false
	}
	return err
}

func (c *cursor) close() {
	if c.src != nil {
		c.src.Close()
		c.src = nil
	}
	c.cancel()
	c.rows = nil
}

// materialize reads the rest of the cursor's rows into memory, keeping
// those it has read already when it is a SCROLL cursor, so that it no
// longer needs its transaction.
func (c *cursor) materialize(ctx context.Context) error {
	if c.src == nil {
		return nil
	}
	if !c.keepAll {
		// A forward-only cursor only ever reads on: rows before pos are
		// gone, and positions shift so that the next row is row pos+1.
		c.keepAll = true
		// rows[k-1] must be row k: pad the rows already passed with nil,
		// which no move of a forward-only cursor reaches.
		c.rows = make([][]types.Value, c.read)
	}
	stop := context.AfterFunc(ctx, c.cancel)
	defer stop()
	for !c.done {
		if _, err := c.readOne(); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
	}
	return nil
}

// readOne takes the next row from the iterator, or reports the end.
func (c *cursor) readOne() ([]types.Value, error) {
	if c.broken != nil {
		return nil, c.broken
	}
	if c.done {
		return nil, nil
	}
	row, err := c.src.Next()
	if err != nil {
		c.broken = err
		return nil, err
	}
	if row == nil {
		c.done = true
		c.src.Close()
		c.src = nil
		return nil, nil
	}
	row = row[:len(c.rcols)]
	c.read++
	if c.keepAll {
		row = append([]types.Value(nil), row...)
		c.mem += cursorRowMemory(row)
		if c.limit > 0 && c.mem > c.limit {
			err := &sqlerr.Error{Code: sqlerr.OutOfMemory, Message: "out of memory",
				Detail: fmt.Sprintf("Cursor \"%s\" needs more than %d bytes to keep its rows (SCROLL or WITH HOLD).", c.name, c.limit),
				Hint:   "Declare the cursor NO SCROLL and WITHOUT HOLD to stream its rows, or raise the server's --max-query-memory."}
			c.broken = err
			return nil, err
		}
		c.rows = append(c.rows, row)
	}
	return row, nil
}

// rowAt returns row k (1-based), reading on as far as needed; nil when
// the result has fewer rows. A forward-only cursor can only give the row
// after the last one read.
func (c *cursor) rowAt(k int64) ([]types.Value, error) {
	if k <= c.read {
		if !c.keepAll || c.rows[k-1] == nil {
			return nil, c.backwardError()
		}
		return c.rows[k-1], nil
	}
	for c.read < k {
		row, err := c.readOne()
		if err != nil || row == nil {
			return nil, err
		}
		if c.read == k {
			return row, nil
		}
	}
	return nil, nil
}

func (c *cursor) backwardError() error {
	return &sqlerr.Error{Code: sqlerr.ObjectNotInPrerequisiteState, Message: "cursor can only scan forward",
		Hint: "Declare it with SCROLL option to enable backward scan."}
}

// passed forgets what a forward-only cursor can no longer reach: the rows
// before its position (a held cursor keeps its rows in memory).
func (c *cursor) passed() {
	if c.scroll || !c.keepAll {
		return
	}
	for k := c.pos - 1; k >= 1 && c.rows[k-1] != nil; k-- {
		c.mem -= cursorRowMemory(c.rows[k-1])
		c.rows[k-1] = nil
	}
}

// canGoBack reports whether the cursor may move to an earlier row.
func (c *cursor) canGoBack() bool { return c.scroll }

// end returns the position after the last row, reading to the end.
func (c *cursor) end() (int64, error) {
	for !c.done {
		if _, err := c.readOne(); err != nil {
			return 0, err
		}
	}
	return c.read + 1, nil
}

// cursorRowMemory approximates the memory a kept row holds.
func cursorRowMemory(r []types.Value) int64 {
	n := int64(24)
	for _, v := range r {
		n += int64(unsafe.Sizeof(v)) + int64(v.PayloadSize())
	}
	return n
}

// fetchCursor runs FETCH or MOVE: rows stream as the client reads them.
func (s *Session) fetchCursor(ctx context.Context, st *bind.Fetch) (Result, error) {
	c, ok := s.cursors[st.Name]
	if !ok {
		return nil, bind.CursorNotFound(st.Name)
	}
	if st.Kind == parser.CursorFetch && !sameColumns(resultColumns(st.Cols), c.rcols) {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "cached plan must not change result type")
	}
	f := &fetchResult{c: c, move: st.Kind == parser.CursorMove, ctx: ctx}
	if !f.move {
		f.cols = c.rcols
	}
	switch dir, n := st.Dir, st.Count; {
	case dir == parser.FetchAbsolute || dir == parser.FetchRelative:
		f.single, f.target, f.relative = true, n, dir == parser.FetchRelative
	case st.All:
		f.left, f.back = math.MaxInt64, dir == parser.FetchBackward
	case n == 0:
		// FETCH 0 / FORWARD 0 / BACKWARD 0 fetch the current row again.
		f.single, f.target, f.relative = true, 0, true
	default:
		f.back = dir == parser.FetchBackward
		if n < 0 {
			f.back, n = !f.back, -n
		}
		f.left = n
	}
	if f.back && !c.canGoBack() {
		return nil, c.backwardError()
	}
	if c.src != nil {
		f.stop = context.AfterFunc(ctx, c.cancel)
	}
	return f, nil
}

// fetchResult moves the cursor one row per Next.
type fetchResult struct {
	c      *cursor
	ctx    context.Context
	cols   []ResultColumn
	move   bool
	back   bool
	left   int64 // rows still to move (FORWARD/BACKWARD)
	single bool  // ABSOLUTE/RELATIVE: one jump, at most one row
	target int64
	// relative makes target relative to the current position.
	relative bool
	count    int64
	stop     func() bool
}

func (f *fetchResult) Columns() []ResultColumn { return f.cols }

func (f *fetchResult) Next(context.Context) ([]types.Value, error) {
	for {
		// A cancel stops the FETCH at the next row even when the
		// cursor's iterator has rows buffered and would not notice.
		if err := f.ctx.Err(); err != nil {
			return nil, err
		}
		row, more, err := f.step()
		if err != nil {
			if f.ctx.Err() != nil {
				return nil, f.ctx.Err()
			}
			return nil, err
		}
		if row != nil {
			f.count++
			if !f.move {
				return row, nil
			}
		}
		if !more {
			return nil, nil
		}
	}
}

// step makes one move: the row landed on (nil: none) and whether more
// moves are due.
func (f *fetchResult) step() (row []types.Value, more bool, err error) {
	c := f.c
	if f.single {
		f.single = false
		return f.jump()
	}
	if f.left <= 0 {
		return nil, false, nil
	}
	f.left--
	if f.back {
		if c.pos <= 1 {
			c.pos = 0
			return nil, false, nil
		}
		if c.pos > c.read+1 {
			c.pos = c.read + 1
		}
		c.pos--
		row, err := c.rowAt(c.pos)
		return row, row != nil, err
	}
	if c.done && c.pos > c.read {
		return nil, false, nil
	}
	row, err = c.rowAt(c.pos + 1)
	if err != nil {
		return nil, false, err
	}
	if row == nil {
		c.pos = c.read + 1
		return nil, false, nil
	}
	c.pos++
	c.passed()
	return row, true, nil
}

// jump is FETCH ABSOLUTE/RELATIVE: go to one position and return the row
// there.
func (f *fetchResult) jump() ([]types.Value, bool, error) {
	c := f.c
	target := f.target
	if f.relative {
		target += c.pos
	} else if target < 0 {
		if !c.canGoBack() {
			return nil, false, c.backwardError()
		}
		end, err := c.end()
		if err != nil {
			return nil, false, err
		}
		target += end
	}
	if target <= c.pos && !c.canGoBack() && !(target == c.pos && target == 0) {
		return nil, false, c.backwardError()
	}
	if target <= 0 {
		c.pos = 0
		return nil, false, nil
	}
	row, err := c.rowAt(target)
	if err != nil {
		return nil, false, err
	}
	if row == nil {
		c.pos = c.read + 1
		return nil, false, nil
	}
	c.pos = target
	c.passed()
	return row, false, nil
}

func (f *fetchResult) Tag() string {
	if f.move {
		return fmt.Sprintf("MOVE %d", f.count)
	}
	return fmt.Sprintf("FETCH %d", f.count)
}

func (f *fetchResult) Close() {
	if f.stop != nil {
		f.stop()
		f.stop = nil
	}
}

// BinaryRows reports whether a simple-protocol client gets r's rows in
// binary format: the FETCH of a DECLARE BINARY cursor, as in PostgreSQL.
// (In the extended protocol Bind's result formats decide, there too.)
func BinaryRows(r Result) bool {
	if sr, ok := r.(*sessionResult); ok {
		r = sr.Result
	}
	f, ok := r.(*fetchResult)
	return ok && f.c.binary
}
