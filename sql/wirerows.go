package sql

import (
	"context"

	"github.com/pivotdb/pivotdb/sql/exec"
	"github.com/pivotdb/pivotdb/sql/rowenc"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// WireRows gives the server a result's rows in wire form, encoded straight
// from the rows' stored keys and values (exec.WireSource,
// rowenc.WireEncoder) rather than through typed values (Result.Next): the
// way out of a plain projection of stored columns, such as a range scan's
// or an IN-list's `SELECT k, v FROM t WHERE ...` (issue 23). The bytes are
// the same either way; only the cost differs.
//
// The server asks for it once per portal (WireOf) and then loops Next and
// Append; Result.Next must not be called on the same result meanwhile. A
// WireRows whose rows are done may be handed to the next WireOf, which
// then reuses its memory: the server keeps one per prepared statement, so
// that a point SELECT's encoder set-up allocates nothing per execution.
type WireRows struct {
	sr       *sessionResult
	rr       *rowsResult
	src      exec.WireSource
	enc      rowenc.WireEncoder
	key, val []byte
}

// WireOf returns the wire-form rows of r with the given result formats
// (one code per column, 1 for binary; nil: all text), or nil when r's rows
// come another way. reuse, when not nil, is a WireRows no longer in use
// (its rows done or abandoned) whose memory the result takes over; it is
// returned, reset, unless the result is nil.
func WireOf(r Result, formats []int16, reuse *WireRows) *WireRows {
	sr, ok := r.(*sessionResult)
	if !ok {
		return nil
	}
	rr, ok := sr.Result.(*rowsResult)
	if !ok || rr.wireIt == nil {
		return nil
	}
	w := reuse
	if w == nil {
		w = new(WireRows)
	}
	if !w.src.Reset(rr.wireIt) || len(w.src.Cols) < rr.width() {
		w.Release()
		return nil
	}
	w.sr, w.rr, w.key, w.val = sr, rr, nil, nil
	// Init rebuilds the column plan in the memory of the last one; it is
	// cheap next to the allocations it avoids, and redoing it keeps a
	// reused WireRows right after a schema change or with other formats.
	w.enc.Init(w.src.Table, w.src.Cols[:rr.width()], formats, rr.colOID)
	w.enc.Present = w
	return w
}

// Release drops w's references to its result (its scan, stored rows and
// session), so that keeping w for reuse keeps nothing else alive.
func (w *WireRows) Release() {
	w.sr, w.rr, w.key, w.val = nil, nil, nil, nil
	w.src.Release()
	w.enc.Release()
}

// colOID is the wire type of output column i.
func (rr *rowsResult) colOID(i int) uint32 {
	if rr.query != nil {
		return rr.query[i].Type.OID() // the first columns are the visible ones
	}
	return rr.cols[i].Type.OID()
}

// Present readies a value of a style- or zone-dependent type for output,
// as sessionResult.Next does a row.
func (w *WireRows) Present(row []types.Value) []types.Value { return presentRow(row, w.sr.s.vars) }

// Next moves to the next row; false at the end (the result's Tag is then
// valid).
func (w *WireRows) Next(ctx context.Context) (bool, error) {
	key, val, err := w.src.Next()
	if err != nil {
		return false, w.fail(err)
	}
	if key == nil {
		return false, nil
	}
	w.key, w.val = key, val
	w.rr.count++
	return true, nil
}

// Size bounds the bytes Append adds for the current row, for the server's
// memory accounting of big rows.
func (w *WireRows) Size() int64 { return w.enc.EstimateSize(w.key, w.val) }

// Append appends the current row's fields (each an int32 length, -1 for
// NULL, and the value's bytes) to buf, the body of a DataRow after its
// column count.
func (w *WireRows) Append(buf []byte) ([]byte, error) {
	out, err := w.enc.AppendRow(buf, w.key, w.val)
	if rowenc.IsTooLong(err) {
		return buf, sqlerr.New(sqlerr.ProgramLimitExceeded, "a value is too long to send (the protocol's limit is 2 GB)")
	}
	if err != nil {
		return buf, w.fail(err)
	}
	return out, nil
}

// fail maps an error as sessionResult.Next does.
func (w *WireRows) fail(err error) error {
	err = w.sr.s.mapError(w.sr.ctx, err)
	w.sr.s.onError()
	return err
}
