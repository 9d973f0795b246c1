package server

import (
	"encoding/binary"
	"errors"

	"github.com/cockroachdb/apd/v3"
	"github.com/pivotdb/pivotdb/sql/pgbinary"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// The binary format of values lives in sql/pgbinary, shared with COPY;
// these are the server's names for it.

func hasBinary(oid uint32) bool { return pgbinary.Has(oid) }

func appendBinary(buf []byte, oid uint32, v types.Value) ([]byte, error) {
	return pgbinary.Append(buf, oid, v)
}

func decodeNumeric(b []byte) (*apd.Decimal, bool) { return pgbinary.DecodeNumeric(b) }

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// errBadBinary is PostgreSQL's complaint about a binary parameter that does
// not parse as its type.
func errBadBinary(param int) error {
	return sqlerr.New(sqlerr.InvalidBinaryRepresentation, "incorrect binary data format in bind parameter %d", param)
}

// decodeBinary decodes a binary bind parameter (param is its 1-based
// number, for the error).
func decodeBinary(oid uint32, b []byte, param int) (types.Value, error) {
	v, err := pgbinary.Decode(oid, b)
	if errors.Is(err, pgbinary.ErrBadFormat) {
		return v, errBadBinary(param)
	}
	return v, err
}

// decodeParam turns one non-NULL Bind parameter into a value of type t.
// wireOID is the type the client encoded it as (statement.paramOID).
func decodeParam(t types.Type, wireOID uint32, format int16, b []byte, param int) (types.Value, error) {
	if paramIsText(t, format) {
		return decodeTextParam(t, string(b))
	}
	// The usual key parameter, a binary int8 for an Int64 column, without
	// the generic decoder's lookups and checks: the IN-list bench binds a
	// hundred per statement. The value is the one the generic path gives.
	if wireOID == types.OIDInt8 && t.Family == types.Int64 && t.Plain() && len(b) == 8 {
		return types.NewInt64(int64(binary.BigEndian.Uint64(b))), nil
	}
	if !hasBinary(wireOID) {
		wireOID = t.OID()
	}
	v, err := decodeBinary(wireOID, b, param)
	if err != nil {
		return types.Value{}, err
	}
	if v.Family() == t.Family && t.Plain() && t.Family != types.Array {
		return v, nil
	}
	// The wire type may differ from the statement's: Uint64 travels as
	// numeric, a declared int8 may feed a Uint32 column. Cast with its range
	// checks bridges them.
	return types.Cast(v, t)
}

// paramIsText reports whether a parameter of type t sent in format is
// decoded from its text. An untyped parameter's bytes are its text
// whatever the format, as for PostgreSQL's "unknown".
func paramIsText(t types.Type, format int16) bool {
	return format == formatText || t.Family == types.Unknown || t.Family == types.Null
}

// decodeTextParam is decodeParam of a text parameter, given as a string
// (bindParams cuts all of a Bind's text parameters from one).
func decodeTextParam(t types.Type, s string) (types.Value, error) {
	if err := types.CheckText(s); err != nil {
		return types.Value{}, err
	}
	return types.ParseText(t, s)
}

func appendNumeric(buf []byte, d *apd.Decimal) ([]byte, error) { return pgbinary.AppendNumeric(buf, d) }

// microsPerDay is an interval day here (24 hours).
const microsPerDay = 86400 * 1000000
