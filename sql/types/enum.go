package types

import (
	"math"
	"regexp"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// Enum types (CREATE TYPE name AS ENUM): a family like Array, whose Type
// carries its definition (Type.Enum).
//
// An enum value is its label and its sort position: Value{fam: Enum, i:
// float64 bits of the position, s: the label}. Positions order the values
// (declaration order, as PostgreSQL's pg_enum.enumsortorder); they are
// what storage keeps, in rows and keys (the key encoding of a float keeps
// declaration order, so enums may be key and index columns). A position
// never changes once given: ALTER TYPE ... ADD VALUE BEFORE/AFTER takes
// the midpoint of its neighbours and RENAME VALUE changes only the label,
// so stored data never needs rewriting (PostgreSQL keeps the value's OID on
// disk for the same reason).
//
// A type name the parser does not know becomes an unresolved reference,
// EnumDef with ID 0 and only Name set (ParseTypeName); the binder resolves
// it against the catalog (42704 when there is no such type) before any
// value of it exists.

// EnumDef is an enum type's definition as columns and casts carry it.
type EnumDef struct {
	// ID is the catalog object id (0: an unresolved name); OID is the
	// PostgreSQL type OID clients see.
	ID     uint64      `json:"id"`
	Name   string      `json:"name"`
	Labels []EnumLabel `json:"labels,omitempty"`
}

// EnumLabel is one value of an enum: its label and its sort position.
type EnumLabel struct {
	Label string  `json:"label"`
	Sort  float64 `json:"sort"`
}

// EnumOIDBase is added to an enum's catalog id to form its type OID; the
// range is above the OIDs pg_catalog gives relations.
const EnumOIDBase = 1 << 30

// OID is the enum's PostgreSQL type OID.
func (d *EnumDef) OID() uint32 { return uint32(EnumOIDBase + d.ID) }

// EnumArrayOIDBase is added to an enum's catalog id to form the OID of
// its array type (_mood): a range of its own below the SQL functions'
// (5<<28, sql/pgcatalog).
const EnumArrayOIDBase = 9 << 27

// ArrayOID is the OID of the enum's array type.
func (d *EnumDef) ArrayOID() uint32 { return uint32(EnumArrayOIDBase + d.ID) }

// Resolved reports whether d is a real definition, not just a name.
func (d *EnumDef) Resolved() bool { return d != nil && d.ID != 0 }

// Label finds a label; ok is false when the enum has no such value.
func (d *EnumDef) Label(s string) (EnumLabel, bool) {
	for _, l := range d.Labels {
		if l.Label == s {
			return l, true
		}
	}
	return EnumLabel{}, false
}

// BySort finds the label at sort position p.
func (d *EnumDef) BySort(p float64) (EnumLabel, bool) {
	for _, l := range d.Labels {
		if l.Sort == p {
			return l, true
		}
	}
	return EnumLabel{}, false
}

// EnumType returns the type of enum d.
func EnumType(d *EnumDef) Type { return Type{Family: Enum, Enum: d} }

// NewEnum returns the value l of an enum.
func NewEnum(l EnumLabel) Value {
	return Value{fam: Enum, i: int64(math.Float64bits(l.Sort)), s: l.Label}
}

// EnumSort is an enum value's sort position.
func (v Value) EnumSort() float64 { return v.fl() }

// parseEnum reads an enum's label (22P02 for a label the enum lacks).
func parseEnum(t Type, s string) (Value, error) {
	if !t.Enum.Resolved() {
		name := "enum"
		if t.Enum != nil {
			name = t.Enum.Name
		}
		return Value{}, sqlerr.New(sqlerr.UndefinedObject, "type %q does not exist", name)
	}
	l, ok := t.Enum.Label(s)
	if !ok {
		return Value{}, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input value for enum %s: %q", t.Enum.Name, s)
	}
	return NewEnum(l), nil
}

// userTypeName matches what may name a user-defined type: an identifier,
// optionally qualified with public.
var userTypeName = regexp.MustCompile(`^(?:public\.)?([a-z_][a-z0-9_$]*)$`)

// userTypeRef returns an unresolved reference to the user-defined type
// named s, if s can name one.
func userTypeRef(lower string, args []int) (Type, bool) {
	m := userTypeName.FindStringSubmatch(lower)
	if m == nil || len(args) != 0 {
		return Type{}, false
	}
	return Type{Family: Enum, Enum: &EnumDef{Name: m[1]}}, true
}

// IsUserTypeRef reports whether t is an unresolved user-defined type name.
func (t Type) IsUserTypeRef() bool { return t.Family == Enum && !t.Enum.Resolved() }

// NextEnumSort returns the sort position for a label added to d: after
// the last when neighbour is "", else just before or after the neighbour
// (the midpoint with the label on that side). It fails when the
// neighbour does not exist or the positions ran out of precision.
func NextEnumSort(d *EnumDef, neighbour string, before bool) (float64, error) {
	if neighbour == "" {
		if len(d.Labels) == 0 {
			return 1, nil
		}
		return math.Floor(d.Labels[len(d.Labels)-1].Sort) + 1, nil
	}
	for i, l := range d.Labels {
		if l.Label != neighbour {
			continue
		}
		var lo, hi float64
		if before {
			hi = l.Sort
			if i == 0 {
				return hi - 1, nil
			}
			lo = d.Labels[i-1].Sort
		} else {
			lo = l.Sort
			if i == len(d.Labels)-1 {
				return math.Floor(lo) + 1, nil
			}
			hi = d.Labels[i+1].Sort
		}
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			return 0, sqlerr.New(sqlerr.ProgramLimitExceeded, "no room left between enum labels %q and its neighbour", neighbour)
		}
		return mid, nil
	}
	return 0, sqlerr.New(sqlerr.InvalidParameterValue, "%q is not an existing enum label", neighbour)
}
