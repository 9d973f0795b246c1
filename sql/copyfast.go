package sql

import (
	"bytes"

	"github.com/pivotdb/pivotdb/sql/types"
)

// The per-field and per-row shortcuts of COPY FROM: most fields of a
// load are plain integers and texts, whose general parse (types.ParseText
// on a string copy of the field) and cast (expr.CastInZone) cost more
// than the rest of the row. Each shortcut answers only the cases it is
// sure of and leaves everything else (spaces, signs it does not know,
// overflow, typmods) to the general path, so errors and their messages
// stay the general path's.

// parseCopyField parses a text or CSV field of type t for the common
// cases: integers of at most 18 digits with an optional sign, and texts
// without a width. f must have passed the decoder's UTF-8 check. ok is
// false when the general parse must decide.
func parseCopyField(t types.Type, f []byte) (v types.Value, ok bool, err error) {
	if !t.Plain() {
		return types.Value{}, false, nil
	}
	switch t.Family {
	case types.Int8, types.Int16, types.Int32, types.Int64:
		i, ok := parseSmallInt(f)
		if !ok {
			return types.Value{}, false, nil
		}
		v, err = types.IntToFamily(t.Family, i)
		return v, true, err
	case types.Uint8, types.Uint16, types.Uint32, types.Uint64:
		if len(f) > 0 && (f[0] == '-' || f[0] == '+') {
			return types.Value{}, false, nil // "-0" is valid, "-1" out of range: general path
		}
		i, ok := parseSmallInt(f)
		if !ok {
			return types.Value{}, false, nil
		}
		v, err = types.UintToFamily(t.Family, uint64(i))
		return v, true, err
	case types.Utf8:
		// The decoder checked that the field is UTF-8 (pgcopy.Decoder);
		// what types.CheckText adds is the NUL byte, which text cannot hold.
		if bytes.IndexByte(f, 0) >= 0 {
			return types.Value{}, false, nil
		}
		return types.NewUtf8(string(f)), true, nil
	}
	return types.Value{}, false, nil
}

// parseSmallInt parses [+-]digits of 1 to 18 digits (no overflow
// possible); anything else is not ok.
func parseSmallInt(f []byte) (int64, bool) {
	neg := false
	if len(f) > 0 && (f[0] == '-' || f[0] == '+') {
		neg = f[0] == '-'
		f = f[1:]
	}
	if len(f) == 0 || len(f) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range f {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// castFree reports whether v needs no cast to be stored in a column of
// type t: NULL, or a value of t's own family when t has no typmod (and
// is not an array or enum, whose casts check element types and labels).
// expr.CastInZone returns such values unchanged.
func castFree(v types.Value, t types.Type) bool {
	if v.IsNull() {
		return true
	}
	f := v.Family()
	return f == t.Family && t.Plain() && f != types.Array && f != types.Enum
}

// place completes the source values of a row into a table row, with the
// defaults of the columns the COPY does not list. The bulk path encodes
// the row before the next one is read, so it reuses one slice; the
// transaction path gets a new row each time, as INSERT's rows are.
func (c *copyFrom) place() ([]types.Value, error) {
	ins := c.p.Insert
	if c.bulk == nil {
		return placeRow(c.ec, ins, c.src, c.listed)
	}
	if c.rowBuf == nil {
		c.rowBuf = make([]types.Value, len(ins.Table.Columns))
	}
	clear(c.rowBuf)
	return placeRowInto(c.rowBuf, c.ec, ins, c.src, c.listed)
}
