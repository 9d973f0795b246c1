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
// Append; Result.Next must not be called on the same result meanwhile.
type WireRows struct {
	sr       *sessionResult
	rr       *rowsResult
	src      *exec.WireSource
	enc      rowenc.WireEncoder
	key, val []byte
}

// WireOf returns the wire-form rows of r with the given result formats
// (one code per column, 1 for binary; nil: all text), or nil when r's rows
// come another way.
func WireOf(r Result, formats []int16) *WireRows {
	sr, ok := r.(*sessionResult)
	if !ok {
		return nil
	}
	rr, ok := sr.Result.(*rowsResult)
	if !ok || rr.wireIt == nil {
		return nil
	}
	src := exec.WireSourceOf(rr.wireIt)
	if src == nil || len(src.Cols) < len(rr.cols) {
		return nil
	}
	w := &WireRows{sr: sr, rr: rr, src: src}
	w.enc.Init(src.Table, src.Cols[:len(rr.cols)], formats, func(i int) uint32 { return rr.cols[i].Type.OID() })
	w.enc.Present = w
	return w
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
