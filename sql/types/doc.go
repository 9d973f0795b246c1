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
//	Date                      i = days since 1970-01-01 (±infinity:
//	                          the extreme int64s, infinity.go)
//	Datetime                  i = seconds since 1970-01-01 00:00:00 UTC
//	Timestamp                 i = microseconds since 1970-01-01 00:00:00 UTC
//	                          (±infinity as for Date)
//	Time                      i = microseconds since midnight, 0 to
//	                          86,400,000,000 (24:00:00; time.go)
//	TimeTZ                    i = (time + zone·10⁶)·2¹⁷ + zone + 2¹⁶, zone in
//	                          seconds west of UTC: integer order is timetz's
//	                          (timetz.go)
//	Interval                  i = microseconds (signed); s = "" or, when
//	                          months or days are not zero, 8 bytes of
//	                          months and days (interval.go)
//	Array                     a (*arrayData: element type, dimensions,
//	                          lower bounds, elements row-major; array.go)
//	Enum                      s = label, i = float64 bits of its sort
//	                          position (declaration order; enum.go)
//	Record                    a (the fields as a one-dimensional array's
//	                          elements; record.go)
//
// A Record Type (PostgreSQL's anonymous record) points at its fields'
// names and types (*RecordDef). Records exist in queries only (the row of
// information_schema._pg_expandarray, selected from by (expr).field);
// they print as record_out does, (1,"a b"), and have no storage (CREATE
// TABLE AS refuses one with 42P16). int2vector and oidvector values are
// arrays whose subscripts start at 0, as PostgreSQL's do.
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
// PostgreSQL's interval keeps months, days and microseconds apart;
// YQL's Interval is the same family with months and days zero, so YQL's
// semantics (a length in microseconds) hold unchanged. Intervals compare,
// group and key by their span with 30-day months (interval.go).
//
// An interval Type may carry PostgreSQL's field qualifier and seconds
// precision (Type.Qual: INTERVAL DAY TO SECOND(2), interval(3);
// interval_qual.go): input reads a bare number as the qualifier's last
// field, and ParseText and Cast drop the fields below it and round the
// seconds (AdjustInterval). A value does not carry its qualifier. Type.Plain
// reports a type without any modifier (precision, width, qualifier): only
// then is a value of its family already one of it.
//
// A date, time or interval Value also carries a Style (style.go): the
// session's DateStyle and IntervalStyle, set at output (WithStyle) and
// read only by Text, like a timestamptz's zone (InZone). The zero Style
// is PostgreSQL's default, ISO, MDY and postgres. Input reads numeric
// dates in a field order (ParseTextOrder) and a leading minus of an
// interval under sql_standard (ParseIntervalStyle); ParseText is MDY and
// postgres.
//
// Debugging: Value.String prints a value with its family's text;
// IntervalParts shows an interval's three fields.
//
// Values are immutable; sharing them between rows and goroutines is safe.
package types
