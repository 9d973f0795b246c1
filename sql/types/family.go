package types

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// Family is a YQL type family.
type Family uint8

// The families of design.md §3.1. Null is the family of an untyped NULL
// literal; Unknown is an unresolved parameter or string literal whose type
// comes from context.
const (
	Null Family = iota
	Bool
	Int8
	Int16
	Int32
	Int64
	Uint8
	Uint16
	Uint32
	Uint64
	Float
	Double
	Decimal
	String
	Utf8
	Json
	Date
	Datetime
	Timestamp
	Interval
	// Uuid is PostgreSQL's uuid (16 bytes).
	Uuid
	Unknown
	// TimestampTZ is PostgreSQL's timestamp with time zone
	// (timestamptz.go); it comes after Unknown so that the numbers of the
	// older families do not move.
	TimestampTZ
	// Array is PostgreSQL's array of a scalar element type (array.go).
	Array
	// Enum is a user-defined enum type (enum.go).
	Enum
	// Record is PostgreSQL's anonymous composite type (record.go).
	Record
	// Time is PostgreSQL's time without time zone (time.go).
	Time
	// TimeTZ is PostgreSQL's time with time zone (timetz.go).
	TimeTZ
	numFamilies
)

var familyNames = [numFamilies]string{
	Null: "Null", Bool: "Bool", Int8: "Int8", Int16: "Int16", Int32: "Int32", Int64: "Int64",
	Uint8: "Uint8", Uint16: "Uint16", Uint32: "Uint32", Uint64: "Uint64", Float: "Float",
	Double: "Double", Decimal: "Decimal", String: "String", Utf8: "Utf8", Json: "Json",
	Date: "Date", Datetime: "Datetime", Timestamp: "Timestamp", Interval: "Interval",
	Uuid: "Uuid", Unknown: "Unknown", TimestampTZ: "TimestampTZ", Array: "List",
	Enum: "Enum", Record: "Record", Time: "Time", TimeTZ: "TimeTZ",
}

func (f Family) String() string {
	if f < numFamilies {
		return familyNames[f]
	}
	return fmt.Sprintf("Family(%d)", uint8(f))
}

// IsInteger reports whether f is one of the signed or unsigned integers.
func (f Family) IsInteger() bool { return f >= Int8 && f <= Uint64 }

// IsUnsigned reports whether f is an unsigned integer.
func (f Family) IsUnsigned() bool { return f >= Uint8 && f <= Uint64 }

// IsNumeric reports whether f is an integer, floating point or decimal.
func (f Family) IsNumeric() bool { return f >= Int8 && f <= Decimal }

// IsFloat reports whether f is Float or Double.
func (f Family) IsFloat() bool { return f == Float || f == Double }

// IsStringLike reports whether f holds its value in the string field.
func (f Family) IsStringLike() bool { return f == String || f == Utf8 || f == Json }

// IsTime reports whether f is one of the point-in-time families.
func (f Family) IsTime() bool {
	return f == Date || f == Datetime || f == Timestamp || f == TimestampTZ
}

// Type is a column or expression type: a family plus its parameters.
type Type struct {
	Family Family
	// Precision and Scale of a Decimal; Precision 0 means unconstrained
	// (PostgreSQL's bare numeric).
	Precision, Scale int
	// Width is the declared maximum length in characters of a varchar(n)
	// or char(n); 0 means unbounded.
	Width int
	// Blank marks PostgreSQL's blank-padded character type (bpchar.go):
	// char(n) is a Utf8 with Width n and Blank set, bare bpchar has
	// Width 0. Its values are stored padded to Width; trailing blanks are
	// insignificant to comparisons, length() and casts to text.
	Blank bool `json:",omitempty"`
	// Elem is the element family of an Array; Precision, Scale, Width
	// and Blank then describe the element (array.go).
	Elem Family `json:",omitempty"`
	// Enum is the definition of an Enum (enum.go).
	Enum *EnumDef `json:",omitempty"`
	// Fields are a Record's field names and types (record.go).
	Fields *RecordDef `json:",omitempty"`
	// Qual is the field qualifier and seconds precision of an
	// Interval (INTERVAL DAY TO SECOND(3)) and the precision of a Time
	// (interval_qual.go); zero is none.
	Qual Qual `json:",omitempty"`
}

// Plain reports whether t has no type modifier (precision, scale, width,
// qualifier): a value of its family needs no conversion to be a t.
func (t Type) Plain() bool { return t.Precision == 0 && t.Width == 0 && t.Qual == 0 }

// T returns a Type of family f without parameters.
func T(f Family) Type { return Type{Family: f} }

// Common types.
var (
	TypeNull      = T(Null)
	TypeUnknown   = T(Unknown)
	TypeBool      = T(Bool)
	TypeInt32     = T(Int32)
	TypeInt64     = T(Int64)
	TypeUint64    = T(Uint64)
	TypeDouble    = T(Double)
	TypeUtf8      = T(Utf8)
	TypeString    = T(String)
	TypeDecimal   = T(Decimal)
	TypeTimestamp = T(Timestamp)
	TypeInterval  = T(Interval)
	// TypeBPChar is PostgreSQL's bare bpchar: blank-padded, unbounded.
	TypeBPChar = Type{Family: Utf8, Blank: true}
)

// String renders the type in YQL spelling, as SHOW CREATE TABLE prints it.
func (t Type) String() string {
	switch {
	case t.Family == Array:
		return "List<" + t.ElemType().String() + ">"
	case t.Family == Enum && t.Enum != nil:
		return t.Enum.Name
	case t.Family == Decimal && t.Precision > 0:
		return fmt.Sprintf("Decimal(%d,%d)", t.Precision, t.Scale)
	case t.Family == Utf8 && t.Blank && t.Width > 0:
		return fmt.Sprintf("Char(%d)", t.Width)
	case t.Family == Utf8 && t.Blank:
		return "Bpchar"
	case t.Family == Utf8 && t.Width > 0:
		return fmt.Sprintf("Utf8(%d)", t.Width)
	case t.Family == Interval && t.Qual != 0:
		return intervalTypeText("Interval", t.Qual)
	case t.Family == Time && t.Qual != 0:
		return intervalTypeText("Time", t.Qual)
	case t.Family == TimeTZ && t.Qual != 0:
		return intervalTypeText("TimeTZ", t.Qual)
	case t.Family == Timestamp && t.Qual != 0:
		return intervalTypeText("Timestamp", t.Qual)
	case t.Family == TimestampTZ && t.Qual != 0:
		return intervalTypeText("TimestampTZ", t.Qual)
	}
	return t.Family.String()
}

// PGName is the PostgreSQL type name clients see (information_schema, psql \d).
func (t Type) PGName() string {
	switch t.Family {
	case Array:
		return t.ElemType().PGName() + "[]"
	case Enum:
		if t.Enum != nil {
			return t.Enum.Name
		}
	case Bool:
		return "boolean"
	case Int8, Int16, Uint8:
		return "smallint"
	case Int32, Uint16:
		return "integer"
	case Int64, Uint32:
		return "bigint"
	case Uint64:
		return "numeric(20,0)"
	case Float:
		return "real"
	case Double:
		return "double precision"
	case Decimal:
		if t.Precision > 0 {
			return fmt.Sprintf("numeric(%d,%d)", t.Precision, t.Scale)
		}
		return "numeric"
	case String:
		return "bytea"
	case Utf8:
		if t.Blank {
			if t.Width > 0 {
				return fmt.Sprintf("character(%d)", t.Width)
			}
			return "bpchar"
		}
		if t.Width > 0 {
			return fmt.Sprintf("character varying(%d)", t.Width)
		}
		return "text"
	case Json:
		return "json"
	case Date:
		return "date"
	case Datetime, Timestamp:
		return "timestamp without time zone"
	case TimestampTZ:
		return "timestamp with time zone"
	case Interval:
		// Without the qualifier, as PostgreSQL's format_type_be names
		// types in messages (format_type with a typmod has it).
		return "interval"
	case Uuid:
		return "uuid"
	case Record:
		return "record"
	case Time:
		return "time without time zone"
	case TimeTZ:
		return "time with time zone"
	}
	return "unknown"
}

// PostgreSQL type OIDs used on the wire.
const (
	OIDBool        uint32 = 16
	OIDBytea       uint32 = 17
	OIDName        uint32 = 19
	OIDInt8        uint32 = 20
	OIDInt2        uint32 = 21
	OIDInt4        uint32 = 23
	OIDText        uint32 = 25
	OIDOid         uint32 = 26
	OIDJSON        uint32 = 114
	OIDFloat4      uint32 = 700
	OIDFloat8      uint32 = 701
	OIDUnknown     uint32 = 705
	OIDBPChar      uint32 = 1042
	OIDVarchar     uint32 = 1043
	OIDDate        uint32 = 1082
	OIDTime        uint32 = 1083
	OIDTimeTZ      uint32 = 1266
	OIDTimestamp   uint32 = 1114
	OIDTimestampTZ uint32 = 1184
	OIDInterval    uint32 = 1186
	OIDNumeric     uint32 = 1700
	OIDJSONB       uint32 = 3802
	OIDChar        uint32 = 18
	OIDRegclass    uint32 = 2205
	OIDUuid        uint32 = 2950
	OIDRecord      uint32 = 2249
)

// OID is the wire type of t (design.md §3.1).
func (t Type) OID() uint32 {
	switch t.Family {
	case Array:
		if t.Elem == Enum && t.Enum.Resolved() {
			return t.Enum.ArrayOID()
		}
		return ArrayOID(t.ElemType().OID())
	case Enum:
		if t.Enum.Resolved() {
			return t.Enum.OID()
		}
	case Bool:
		return OIDBool
	case Int8, Int16, Uint8:
		return OIDInt2
	case Int32, Uint16:
		return OIDInt4
	case Int64, Uint32:
		return OIDInt8
	case Uint64, Decimal:
		return OIDNumeric
	case Float:
		return OIDFloat4
	case Double:
		return OIDFloat8
	case String:
		return OIDBytea
	case Utf8:
		if t.Blank {
			return OIDBPChar
		}
		return OIDText
	case Null, Unknown:
		return OIDText
	case Json:
		return OIDJSON
	case Date:
		return OIDDate
	case Datetime, Timestamp:
		return OIDTimestamp
	case TimestampTZ:
		return OIDTimestampTZ
	case Interval:
		return OIDInterval
	case Uuid:
		return OIDUuid
	case Record:
		return OIDRecord
	case Time:
		return OIDTime
	case TimeTZ:
		return OIDTimeTZ
	}
	return OIDText
}

// TypeSize is the pg_type.typlen clients read from RowDescription.
func (t Type) TypeSize() int16 {
	switch t.Family {
	case Bool:
		return 1
	case Int8, Int16, Uint8:
		return 2
	case Int32, Uint16, Float, Date:
		return 4
	case Int64, Uint32, Double, Datetime, Timestamp, TimestampTZ, Time:
		return 8
	case TimeTZ:
		return 12
	case Interval, Uuid:
		return 16
	}
	return -1
}

// FromOID maps a parameter type OID a client declared to a type. Unknown
// OIDs (0) give TypeUnknown so the planner infers the type from context.
func FromOID(oid uint32) (Type, bool) {
	switch oid {
	case 0, OIDUnknown:
		return TypeUnknown, true
	case OIDBool:
		return TypeBool, true
	case OIDInt2:
		return T(Int16), true
	case OIDInt4, OIDOid, OIDRegclass:
		return TypeInt32, true
	case OIDInt8:
		return TypeInt64, true
	case OIDFloat4:
		return T(Float), true
	case OIDFloat8:
		return TypeDouble, true
	case OIDNumeric:
		return TypeDecimal, true
	case OIDBytea:
		return TypeString, true
	case OIDBPChar:
		return TypeBPChar, true
	case OIDText, OIDVarchar, OIDName, OIDChar:
		return TypeUtf8, true
	case OIDJSON, OIDJSONB:
		return T(Json), true
	case OIDDate:
		return T(Date), true
	case OIDTimestamp:
		return TypeTimestamp, true
	case OIDTimestampTZ:
		return TypeTimestampTZ, true
	case OIDInterval:
		return TypeInterval, true
	case OIDTime:
		return TypeTime, true
	case OIDTimeTZ:
		return TypeTimeTZ, true
	case OIDUuid:
		return T(Uuid), true
	}
	if e := ElemOID(oid); e != 0 {
		if et, ok := FromOID(e); ok && et.Family != Unknown {
			return ArrayOf(et), true
		}
	}
	return TypeUnknown, false
}

// ParseTypeName parses a type name in YQL or PostgreSQL/MySQL spelling:
// "Uint64", "Utf8", "varchar(20)", "double precision", "Decimal(22, 9)",
// "timestamp without time zone", "numeric".
//
// Names are case-insensitive with one exception: the YQL 8-bit integer is
// spelled exactly "Int8", while "int8" in any other case is PostgreSQL's
// 64-bit integer, because drivers send `$1::int8` and expect a bigint.
func ParseTypeName(name string) (Type, error) {
	s := strings.TrimSpace(name)
	if t, ok, err := parseArrayTypeName(s); ok {
		return t, err
	}
	if open, close := strings.IndexByte(s, '('), strings.IndexByte(s, ')'); open > 0 && close > open && close < len(s)-1 {
		// format_type's "time(3) without time zone": the suffix goes
		// before the arguments.
		if suffix := strings.ToLower(strings.TrimSpace(s[close+1:])); suffix == "with time zone" || suffix == "without time zone" {
			s = strings.TrimSpace(s[:open]) + " " + suffix + s[open:close+1]
		}
	}
	base, args, err := splitTypeArgs(s)
	if err != nil {
		return Type{}, err
	}
	if base == "Int8" && len(args) == 0 {
		return T(Int8), nil
	}
	lower := strings.ToLower(strings.Join(strings.Fields(base), " "))
	lower = strings.TrimPrefix(lower, "pg_catalog.")
	noArgs := func(t Type) (Type, error) {
		if len(args) != 0 {
			return Type{}, sqlerr.New(sqlerr.SyntaxError, "type %s does not take parameters", base)
		}
		return t, nil
	}
	switch lower {
	case "bool", "boolean":
		return noArgs(TypeBool)
	case "uuid":
		return noArgs(T(Uuid))
	case "tinyint":
		return noArgs(T(Int8))
	case "int16", "smallint", "int2":
		return noArgs(T(Int16))
	case "int32", "int", "integer", "int4", "mediumint":
		return noArgs(TypeInt32)
	case "int64", "bigint", "int8", "signed":
		// SIGNED and UNSIGNED are MySQL's CAST targets (sqllogictest uses them).
		return noArgs(TypeInt64)
	case "unsigned":
		return noArgs(TypeUint64)
	case "uint8":
		return noArgs(T(Uint8))
	case "uint16":
		return noArgs(T(Uint16))
	case "uint32":
		return noArgs(T(Uint32))
	case "uint64":
		return noArgs(TypeUint64)
	case "float", "real", "float4":
		return noArgs(T(Float))
	case "double", "double precision", "float8":
		return noArgs(TypeDouble)
	case "decimal", "numeric", "dec":
		switch len(args) {
		case 0:
			return TypeDecimal, nil
		case 1, 2:
			p := args[0]
			sc := 0
			if len(args) == 2 {
				sc = args[1]
			}
			if p < 1 || p > 1000 {
				return Type{}, sqlerr.New(sqlerr.InvalidParameterValue, "NUMERIC precision %d must be between 1 and 1000", p)
			}
			if sc < 0 || sc > p {
				return Type{}, sqlerr.New(sqlerr.InvalidParameterValue, "NUMERIC scale %d must be between 0 and precision %d", sc, p)
			}
			return Type{Family: Decimal, Precision: p, Scale: sc}, nil
		}
		return Type{}, sqlerr.New(sqlerr.SyntaxError, "invalid NUMERIC type modifier")
	case "string", "bytea", "blob", "bytes", "binary", "varbinary", "longblob":
		return noArgs(TypeString)
	case "char", "character", "bpchar":
		return parseBPChar(lower, base, args)
	case "utf8", "text", "varchar", "character varying", "name", "longtext":
		switch len(args) {
		case 0:
			return TypeUtf8, nil
		case 1:
			if args[0] < 1 {
				return Type{}, sqlerr.New(sqlerr.InvalidParameterValue, "length for type %s must be at least 1", lower)
			}
			if lower == "utf8" || lower == "text" {
				return Type{}, sqlerr.New(sqlerr.SyntaxError, "type %s does not take a length", base)
			}
			return Type{Family: Utf8, Width: args[0]}, nil
		}
		return Type{}, sqlerr.New(sqlerr.SyntaxError, "invalid type modifier for %s", base)
	case "json", "jsonb":
		return noArgs(T(Json))
	case "date":
		return noArgs(T(Date))
	case "datetime":
		return noArgs(T(Datetime))
	case "timestamp with time zone", "timestamptz":
		return parseTimestampType(TypeTimestampTZ, args)
	case "timestamp", "timestamp without time zone":
		return parseTimestampType(TypeTimestamp, args)
	case "interval", "interval year", "interval month", "interval day", "interval hour", "interval minute",
		"interval second", "interval year to month", "interval day to hour", "interval day to minute",
		"interval day to second", "interval hour to minute", "interval hour to second", "interval minute to second":
		return parseIntervalType(lower, args)
	case "time", "time without time zone":
		return parseTimeType(args)
	case "timetz", "time with time zone":
		return parseTimeTZType(args)
	}
	if t, ok := userTypeRef(lower, args); ok {
		return t, nil
	}
	return Type{}, sqlerr.New(sqlerr.UndefinedObject, "type %q does not exist", s)
}

// splitTypeArgs splits "name(1, 2)" into "name" and [1 2].
func splitTypeArgs(s string) (string, []int, error) {
	open := strings.IndexByte(s, '(')
	if open < 0 {
		return s, nil, nil
	}
	if !strings.HasSuffix(s, ")") {
		return "", nil, sqlerr.New(sqlerr.SyntaxError, "syntax error in type name %q", s)
	}
	base := strings.TrimSpace(s[:open])
	inner := s[open+1 : len(s)-1]
	var args []int
	for _, part := range strings.Split(inner, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil {
			return "", nil, sqlerr.New(sqlerr.SyntaxError, "invalid type modifier %q in type %q", strings.TrimSpace(part), s)
		}
		args = append(args, n)
	}
	// "timestamp(3) with time zone" style suffixes are not needed by clients
	// PivotDB supports, so the closing parenthesis must end the name.
	return base, args, nil
}

// IntRange returns the inclusive range of an integer family as int64 for
// signed families; for unsigned families min is 0 and max is the bit pattern
// of the maximum (read max as uint64).
func IntRange(f Family) (min int64, max uint64) {
	switch f {
	case Int8:
		return -1 << 7, 1<<7 - 1
	case Int16:
		return -1 << 15, 1<<15 - 1
	case Int32:
		return -1 << 31, 1<<31 - 1
	case Int64:
		return -1 << 63, 1<<63 - 1
	case Uint8:
		return 0, 1<<8 - 1
	case Uint16:
		return 0, 1<<16 - 1
	case Uint32:
		return 0, 1<<32 - 1
	case Uint64:
		return 0, 1<<64 - 1
	}
	return 0, 0
}
