package server

import (
	"fmt"

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

// sendRow sends one DataRow. Values are encoded into a scratch buffer that
// is reused for every row: the backend copies a message when it is sent.
func (c *conn) sendRow(cols []sql.ResultColumn, formats []int16, row []types.Value) error {
	if len(row) != len(cols) {
		return sqlerr.New(sqlerr.InternalError, "server: row has %d values but the result has %d columns", len(row), len(cols))
	}
	if est := rowEstimate(row); est >= bigRow {
		// Reserved until the row is flushed below (est > flushThreshold).
		if err := c.resultAcct.Grow(est, "a result row"); err != nil {
			return err
		}
		defer c.resultAcct.Shrink(est)
	}
	buf := c.rowBuf[:0]
	vals := c.rowVals[:0]
	for i, v := range row {
		if v.IsNull() {
			vals = append(vals, nil)
			continue
		}
		start := len(buf)
		if formats != nil && formats[i] == formatBinary {
			var err error
			buf, err = appendBinary(buf, cols[i].Type.OID(), v)
			if err != nil {
				return err
			}
		} else {
			buf = append(buf, v.Text()...)
		}
		// Earlier slices keep pointing into the old array when append
		// grows buf; that array is unchanged, so they stay valid. buf is
		// never nil, so an empty value stays distinct from NULL.
		vals = append(vals, buf[start:len(buf):len(buf)])
	}
	c.send(&pgproto3.DataRow{Values: vals})
	c.pending += len(buf) + 4*len(vals) + 7
	if cap(buf) <= 1<<20 {
		c.rowBuf, c.rowVals = buf, vals
	}
	if c.pending >= flushThreshold {
		return c.flush()
	}
	return nil
}
