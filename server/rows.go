package server

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pivotdb/pivotdb/sql"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Wire format codes.
const (
	formatText   int16 = 0
	formatBinary int16 = 1
)

// rowDescription describes cols; formats has one code per column (nil: all
// text).
func rowDescription(cols []sql.ResultColumn, formats []int16) *pgproto3.RowDescription {
	fields := make([]pgproto3.FieldDescription, len(cols))
	for i, col := range cols {
		f := formatText
		if formats != nil {
			f = formats[i]
		}
		fields[i] = pgproto3.FieldDescription{
			Name:                 []byte(col.Name),
			TableOID:             col.TableOID,
			TableAttributeNumber: uint16(col.ColumnNumber),
			DataTypeOID:          col.Type.OID(),
			DataTypeSize:         col.Type.TypeSize(),
			TypeModifier:         typeModifier(col.Type),
			Format:               f,
		}
	}
	return &pgproto3.RowDescription{Fields: fields}
}

// typeModifier is pg_attribute.atttypmod as PostgreSQL reports it: numeric
// packs precision and scale, varchar its length, both offset by the 4-byte
// varlena header; -1 means none.
func typeModifier(t types.Type) int32 {
	switch {
	case t.Family == types.Uint64:
		return 20<<16 + 4 // numeric(20,0)
	case t.Family == types.Decimal && t.Precision > 0:
		return (int32(t.Precision)<<16 | int32(t.Scale)) + 4
	case t.Family == types.Utf8 && t.Width > 0:
		return int32(t.Width) + 4
	}
	return -1
}

// resultFormats expands a Bind message's result format codes to one per
// column: none means all text, one applies to all.
func resultFormats(codes []int16, ncols int) ([]int16, error) {
	if len(codes) > 1 && len(codes) != ncols {
		return nil, &sqlerr.Error{Code: sqlerr.ProtocolViolation,
			Message: fmt.Sprintf("bind message has %d result formats but query has %d columns", len(codes), ncols)}
	}
	out := make([]int16, ncols)
	for i := range out {
		f := formatText
		switch len(codes) {
		case 1:
			f = codes[0]
		case ncols:
			f = codes[i]
		}
		if f != formatText && f != formatBinary {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "unsupported format code: %d", f)
		}
		out[i] = f
	}
	return out, nil
}

// sendRow queues one DataRow, encoded straight into the connection's
// output buffer: each value's text or binary form is appended where the
// message needs it and its length prefix filled in after, so a row costs
// no allocation and no copy beyond its bytes.
func (c *conn) sendRow(cols []sql.ResultColumn, formats []int16, row []types.Value) error {
	if len(row) != len(cols) {
		return sqlerr.New(sqlerr.InternalError, "server: row has %d values but the result has %d columns", len(row), len(cols))
	}
	if len(row) > math.MaxUint16 {
		return sqlerr.New(sqlerr.ProgramLimitExceeded, "a row of %d columns cannot be sent (the protocol's limit is %d)", len(row), math.MaxUint16)
	}
	if c.encodeErr != nil {
		return c.flush()
	}
	if est := rowEstimate(row); est >= bigRow {
		// Reserved until the row is flushed below (est > flushThreshold).
		if err := c.resultAcct.Grow(est, "a result row"); err != nil {
			return err
		}
		defer c.resultAcct.Shrink(est)
	}
	start := len(c.wbuf)
	buf := append(c.wbuf, 'D', 0, 0, 0, 0, byte(len(row)>>8), byte(len(row)))
	for i, v := range row {
		if v.IsNull() {
			buf = append(buf, 0xff, 0xff, 0xff, 0xff)
			continue
		}
		at := len(buf)
		buf = append(buf, 0, 0, 0, 0)
		if formats != nil && formats[i] == formatBinary {
			var err error
			buf, err = appendBinary(buf, cols[i].Type.OID(), v)
			if err != nil {
				c.wbuf = buf[:start]
				return err
			}
		} else {
			buf = v.AppendText(buf)
		}
		n := len(buf) - at - 4
		if n > math.MaxInt32 {
			c.wbuf = buf[:start]
			return sqlerr.New(sqlerr.ProgramLimitExceeded, "value of column %q is too long to send (%d bytes)", cols[i].Name, n)
		}
		binary.BigEndian.PutUint32(buf[at:], uint32(n))
	}
	if n := len(buf) - start - 1; n > math.MaxInt32 {
		c.wbuf = buf[:start]
		return sqlerr.New(sqlerr.ProgramLimitExceeded, "row is too long to send (%d bytes)", n)
	}
	binary.BigEndian.PutUint32(buf[start+1:], uint32(len(buf)-start-1))
	c.wbuf = buf
	if len(c.wbuf) >= flushThreshold {
		return c.flush()
	}
	return nil
}

// rowSender queues the rows of a result as DataRows: straight from their
// stored encoding when the engine offers it (sql.WireOf: a plain
// projection of stored columns), else value by value (sendRow). It is a
// value kept in its portal rather than a closure, and its WireRows comes
// from the prepared statement's last execution, so that a point SELECT's
// way out allocates nothing per execution.
type rowSender struct {
	res     sql.Result
	cols    []sql.ResultColumn
	formats []int16
	wire    *sql.WireRows // nil: value by value
	spare   *sql.WireRows // start's reuse when the rows go value by value
}

// start readies s for res's rows. reuse is a WireRows no longer in use, or
// nil; s.wire, when set, is the one to give back once res is done.
func (s *rowSender) start(res sql.Result, cols []sql.ResultColumn, formats []int16, reuse *sql.WireRows) {
	*s = rowSender{res: res, cols: cols, formats: formats}
	if len(cols) <= math.MaxUint16 {
		s.wire = sql.WireOf(res, formats, reuse)
	}
	if s.wire == nil {
		s.spare = reuse
	}
}

// next queues res's next row; more is false at the end of the rows.
func (s *rowSender) next(ctx context.Context, c *conn) (more bool, err error) {
	if s.wire != nil {
		more, err := s.wire.Next(ctx)
		if !more || err != nil {
			return false, err
		}
		return true, c.sendWireRow(s.wire, len(s.cols))
	}
	row, err := s.res.Next(ctx)
	if row == nil || err != nil {
		return false, err
	}
	return true, c.sendRow(s.cols, s.formats, row)
}

// finish ends s's use of its result and returns the WireRows start was
// given or made (released, ready for reuse), or nil.
func (s *rowSender) finish() *sql.WireRows {
	w := s.wire
	if w == nil {
		w = s.spare
	}
	if w != nil {
		w.Release()
	}
	*s = rowSender{}
	return w
}

// sendWireRow is sendRow for the current row of w, whose fields w appends
// itself.
func (c *conn) sendWireRow(w *sql.WireRows, ncols int) error {
	if c.encodeErr != nil {
		return c.flush()
	}
	if est := w.Size(); est >= bigRow {
		// Reserved until the row is flushed below (est > flushThreshold).
		if err := c.resultAcct.Grow(est, "a result row"); err != nil {
			return err
		}
		defer c.resultAcct.Shrink(est)
	}
	start := len(c.wbuf)
	buf := append(c.wbuf, 'D', 0, 0, 0, 0, byte(ncols>>8), byte(ncols))
	buf, err := w.Append(buf)
	if err != nil {
		c.wbuf = buf[:start]
		return err
	}
	if n := len(buf) - start - 1; n > math.MaxInt32 {
		c.wbuf = buf[:start]
		return sqlerr.New(sqlerr.ProgramLimitExceeded, "row is too long to send (%d bytes)", n)
	}
	binary.BigEndian.PutUint32(buf[start+1:], uint32(len(buf)-start-1))
	c.wbuf = buf
	if len(c.wbuf) >= flushThreshold {
		return c.flush()
	}
	return nil
}
