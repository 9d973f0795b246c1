package types

import "strings"

// RecordDef describes an anonymous composite value (PostgreSQL's record):
// its fields' names and types, in order. A Record type carries one; two
// Record types are the same type only when they share the definition,
// which the expression that builds the records makes.
//
// Records exist in queries only: a set-returning function's row
// (information_schema._pg_expandarray) travels through a subquery as one
// value, and (expr).field selects a field of it. They cannot be stored.
type RecordDef struct {
	Names []string
	Types []Type
}

// RecordOf returns the Record type with the given fields.
func RecordOf(def *RecordDef) Type { return Type{Family: Record, Fields: def} }

// Field returns the position of the field called name, or -1.
func (d *RecordDef) Field(name string) int {
	for i, n := range d.Names {
		if n == name {
			return i
		}
	}
	return -1
}

// NewRecord returns a Record value with the given field values, which
// must not be modified afterwards. Its fields are kept as a
// one-dimensional array's elements, so that records compare, encode into
// sort and grouping keys and account for memory as arrays do.
func NewRecord(fields []Value) Value {
	return Value{fam: Record, a: &arrayData{dims: []int{len(fields)}, lower: []int{1}, elems: fields}}
}

// RecordFields returns a Record's field values. The slice must not be
// modified.
func (v Value) RecordFields() []Value { return v.ArrayElems() }

// formatRecord renders a record as PostgreSQL's record_out does: (1,abc),
// a NULL field empty, a field double-quoted when it is empty or holds a
// blank or one of "\(), (with " and \ doubled inside).
func (v Value) formatRecord() string {
	var b strings.Builder
	b.WriteByte('(')
	for i, f := range v.RecordFields() {
		if i > 0 {
			b.WriteByte(',')
		}
		if f.IsNull() {
			continue
		}
		t := f.Text()
		if t != "" && !strings.ContainsAny(t, "\"\\(), \t\n\r\v\f") {
			b.WriteString(t)
			continue
		}
		b.WriteByte('"')
		for _, c := range []byte(t) {
			if c == '"' || c == '\\' {
				b.WriteByte(c)
			}
			b.WriteByte(c)
		}
		b.WriteByte('"')
	}
	b.WriteByte(')')
	return b.String()
}
