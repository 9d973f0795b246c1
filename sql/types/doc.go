// Package types defines PivotDB's SQL types and values: the YQL type families
// of design.md §3.1 with their PostgreSQL synonyms and wire OIDs, the Value
// that carries one datum through the executor, and the conversions between
// values and text (PostgreSQL output format), and between types (casts with
// range checks).
//
// A Value is a small struct passed by value. The zero Value is NULL. The
// representation per family:
//
//	Bool                      i = 0 or 1
//	Int8..Int64               i
//	Uint8..Uint64             i holds the unsigned bits (read with Uint())
//	Float, Double             f (Float values are rounded to float32)
//	Decimal                   d (*apd.Decimal, never mutated once built)
//	String, Utf8, Json        s (String is raw bytes kept in a Go string;
//	                          a char(n) value, Utf8 of a Type with Blank,
//	                          is kept padded to n: bpchar.go)
//	Date                      i = days since 1970-01-01
//	Datetime                  i = seconds since 1970-01-01 00:00:00 UTC
//	Timestamp                 i = microseconds since 1970-01-01 00:00:00 UTC
//	Interval                  i = microseconds (signed)
//	Array                     a (*arrayData: element type, dimensions,
//	                          lower bounds, elements row-major; array.go)
//	Enum                      s = label, i = float64 bits of its sort
//	                          position (declaration order; enum.go)
//
// An array Type is Family Array with Elem naming the element family and
// Precision, Scale, Width and Blank describing the element, so Type stays
// a comparable value (==) and ArrayOf/ElemType convert. Array text is
// PostgreSQL's array_in/array_out format (ParseText, Text); Compare orders
// arrays as PostgreSQL's btree does.
//
// An enum Type is Family Enum with Enum pointing at the type's definition
// (*EnumDef: catalog id, name, labels with sort positions); Compare orders
// enum values by position, and storage keeps positions, which never change,
// so ALTER TYPE rewrites no rows. A type name ParseTypeName does not know
// is an unresolved reference (an EnumDef with only a name) that the binder
// resolves against the catalog, also as an array element type (mood[],
// _mood). An enum's OID is EnumOIDBase + its id, its array type's
// EnumArrayOIDBase + its id.
//
// Values are immutable; sharing them between rows and goroutines is safe.
package types
