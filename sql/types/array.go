package types

import (
	"cmp"
	"strconv"
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// Arrays are PostgreSQL's: a Value of family Array holds its element
// type, its dimensions (lengths and lower bounds, at most MaxArrayDims of
// them) and its elements flattened in row-major order; an empty array
// has no dimensions. The Type of an array is Family Array with Elem
// naming the element family, and Precision, Scale, Width and Blank
// describing the element (so Type stays comparable with ==). As in
// PostgreSQL, the type does not fix the number of dimensions: int[] and
// int[][] are the same type.
//
// Arrays of arrays do not exist (ArrayOf of an array is that array
// type); elements are never arrays.

// MaxArrayDims is PostgreSQL's MAXDIM.
const MaxArrayDims = 6

// arrayData is the payload of an array Value. It is never mutated once
// the Value is built.
type arrayData struct {
	elem  Type
	dims  []int // length of each dimension; nil for an empty array
	lower []int // lower bound of each dimension
	elems []Value
	// vector marks PostgreSQL's int2vector / oidvector values of the
	// catalog (pg_index.indkey, pg_proc.proargtypes): one-dimensional
	// arrays that print as "1 2" (clients split indkey::varchar on
	// blanks). Everything built from one is a plain array again.
	vector bool
}

// ArrayOf returns the type of arrays of t (t itself when t is an array).
func ArrayOf(t Type) Type {
	if t.Family == Array {
		return t
	}
	return Type{Family: Array, Elem: t.Family, Precision: t.Precision, Scale: t.Scale, Width: t.Width, Blank: t.Blank, Enum: t.Enum,
		Qual: t.Qual}
}

// IsArray reports whether t is an array type.
func (t Type) IsArray() bool { return t.Family == Array }

// ElemType returns the element type of an array type (t itself for
// other types).
func (t Type) ElemType() Type {
	if t.Family != Array {
		return t
	}
	return Type{Family: t.Elem, Precision: t.Precision, Scale: t.Scale, Width: t.Width, Blank: t.Blank, Enum: t.Enum,
		Qual: t.Qual}
}

// NewArray returns a one-dimensional array of elem with the given
// elements (lower bound 1); no elements make the empty array. elems is
// kept: the caller must not change it afterwards.
func NewArray(elem Type, elems []Value) Value {
	a := &arrayData{elem: elem, elems: elems}
	if len(elems) > 0 {
		a.dims, a.lower = []int{len(elems)}, []int{1}
	}
	return Value{fam: Array, a: a}
}

// NewVector returns a one-dimensional array that prints as PostgreSQL's
// int2vector and oidvector do: the elements separated by blanks, "" when
// empty. Its subscripts start at 0, as theirs do (indkey[0] is an index's
// first column; pgjdbc's getIndexInfo reads indoption[n - 1]).
func NewVector(elem Type, elems []Value) Value {
	v := NewArray(elem, elems)
	v.a.vector = true
	if len(elems) > 0 {
		v.a.lower = []int{0}
	}
	return v
}

// NewArrayDims returns an array with the given dimensions and lower
// bounds (row-major elements). It checks that the dimensions hold
// exactly the elements and stay within PostgreSQL's limits.
func NewArrayDims(elem Type, dims, lower []int, elems []Value) (Value, error) {
	if len(dims) != len(lower) {
		return Value{}, sqlerr.New(sqlerr.InternalError, "types: %d dimensions but %d lower bounds", len(dims), len(lower))
	}
	if len(dims) > MaxArrayDims {
		return Value{}, sqlerr.New(sqlerr.ProgramLimitExceeded, "number of array dimensions (%d) exceeds the maximum allowed (%d)", len(dims), MaxArrayDims)
	}
	n := 1
	for i, d := range dims {
		if d < 0 {
			return Value{}, sqlerr.New(sqlerr.ArraySubscriptError, "array size exceeds the maximum allowed")
		}
		if d == 0 {
			n = 0
		}
		if n > 0 {
			n *= d
			if n > maxArrayElems {
				return Value{}, sqlerr.New(sqlerr.ProgramLimitExceeded, "array size exceeds the maximum allowed (%d)", maxArrayElems)
			}
		}
		if int64(lower[i])+int64(d) > 1<<31 {
			return Value{}, sqlerr.New(sqlerr.ProgramLimitExceeded, "array upper bound is too large")
		}
	}
	if len(dims) == 0 || n == 0 {
		if len(elems) != 0 {
			return Value{}, sqlerr.New(sqlerr.InternalError, "types: an empty array with %d elements", len(elems))
		}
		return NewArray(elem, nil), nil
	}
	if n != len(elems) {
		return Value{}, sqlerr.New(sqlerr.InternalError, "types: dimensions hold %d elements, got %d", n, len(elems))
	}
	return Value{fam: Array, a: &arrayData{elem: elem, dims: dims, lower: lower, elems: elems}}, nil
}

// maxArrayElems bounds the elements of one array (PostgreSQL's MaxArraySize
// is about 134 million; PivotDB keeps values in memory).
const maxArrayElems = 1 << 27

// ArrayElems returns the elements of an array value in row-major order.
// The slice must not be modified.
func (v Value) ArrayElems() []Value {
	if v.a == nil {
		return nil
	}
	return v.a.elems
}

// ArrayDims returns the lengths of an array's dimensions (none for an
// empty array). The slice must not be modified.
func (v Value) ArrayDims() []int {
	if v.a == nil {
		return nil
	}
	return v.a.dims
}

// ArrayLower returns the lower bounds of an array's dimensions.
func (v Value) ArrayLower() []int {
	if v.a == nil {
		return nil
	}
	return v.a.lower
}

// ArrayElemType returns the element type of an array value.
func (v Value) ArrayElemType() Type {
	if v.a == nil {
		return TypeNull
	}
	return v.a.elem
}

// PayloadSize approximates the bytes v refers to besides the Value
// itself (memory accounting): the string payload, or an array's
// elements.
func (v Value) PayloadSize() int {
	if v.a != nil {
		n := 48 + 48*len(v.a.elems)
		for _, e := range v.a.elems {
			n += e.PayloadSize()
		}
		return n
	}
	return len(v.s)
}

// formatArray renders an array in PostgreSQL's text form: {1,2,3},
// {{1,2},{3,4}}, with "[0:1]={...}" in front when a lower bound is not
// 1, '{}' when empty. Elements are double-quoted when PostgreSQL's
// array_out would (empty, NULL, blanks or one of {}",\).
func (v Value) formatArray() string {
	a := v.a
	if a != nil && a.vector {
		parts := make([]string, len(a.elems))
		for i, e := range a.elems {
			parts[i] = e.Text()
		}
		return strings.Join(parts, " ")
	}
	if a == nil || len(a.dims) == 0 {
		return "{}"
	}
	var sb strings.Builder
	for i, lo := range a.lower {
		if lo != 1 {
			for k := range a.lower {
				sb.WriteByte('[')
				sb.WriteString(strconv.Itoa(a.lower[k]))
				sb.WriteByte(':')
				sb.WriteString(strconv.Itoa(a.lower[k] + a.dims[k] - 1))
				sb.WriteByte(']')
			}
			sb.WriteByte('=')
			break
		}
		_ = i
	}
	k := 0
	var rec func(d int)
	rec = func(d int) {
		sb.WriteByte('{')
		for i := 0; i < a.dims[d]; i++ {
			if i > 0 {
				sb.WriteByte(',')
			}
			if d+1 < len(a.dims) {
				rec(d + 1)
				continue
			}
			e := a.elems[k]
			k++
			if e.IsNull() {
				sb.WriteString("NULL")
				continue
			}
			AppendArrayElemText(&sb, e.Text())
		}
		sb.WriteByte('}')
	}
	rec(0)
	return sb.String()
}

// AppendArrayElemText writes one element's text as array_out does:
// quoted and escaped when needed.
func AppendArrayElemText(sb *strings.Builder, s string) {
	if !arrayElemNeedsQuotes(s) {
		sb.WriteString(s)
		return
	}
	sb.WriteByte('"')
	for j := 0; j < len(s); j++ {
		c := s[j]
		if c == '"' || c == '\\' {
			sb.WriteByte('\\')
		}
		sb.WriteByte(c)
	}
	sb.WriteByte('"')
}

func arrayElemNeedsQuotes(s string) bool {
	if s == "" || strings.EqualFold(s, "NULL") {
		return true
	}
	for j := 0; j < len(s); j++ {
		switch s[j] {
		case '{', '}', ',', '"', '\\', ' ', '\t', '\n', '\r', '\v', '\f':
			return true
		}
	}
	return false
}

// malformedArray is PostgreSQL's 22P02 for array input it cannot read.
func malformedArray(s, detail string) error {
	e := sqlerr.New(sqlerr.InvalidTextRepresentation, "malformed array literal: %q", s)
	e.Detail = detail
	return e
}

// ParseArrayLiteral reads PostgreSQL's text form of an array —
// '{1,2,NULL}', '{{1,2},{3,4}}', '[0:1]={a,b}', '{"a b","c\"d"}' — into
// its dimensions, lower bounds and elements (nil for NULL), as array_in
// does: white space around elements is ignored, an unquoted NULL is
// NULL, a backslash escapes the next character. Errors are 22P02
// "malformed array literal" with PostgreSQL's detail.
func ParseArrayLiteral(s string) (dims, lower []int, elems []*string, err error) {
	p := arrayParser{s: s, leaf: -1}
	p.skipSpace()
	var given []int // lower bounds and lengths from "[lo:hi]..." decoration
	var givenLo []int
	if p.peek() == '[' {
		for p.peek() == '[' {
			p.pos++
			lo, hi, ok := p.bounds()
			if !ok {
				return nil, nil, nil, malformedArray(s, `"[" must introduce explicitly-specified array dimensions.`)
			}
			givenLo = append(givenLo, lo)
			given = append(given, hi-lo+1)
			if hi < lo {
				return nil, nil, nil, sqlerr.New(sqlerr.ArraySubscriptError, "upper bound cannot be less than lower bound")
			}
			if len(given) > MaxArrayDims {
				return nil, nil, nil, sqlerr.New(sqlerr.ProgramLimitExceeded, "number of array dimensions (%d) exceeds the maximum allowed (%d)", len(given), MaxArrayDims)
			}
			p.skipSpace()
		}
		if p.peek() != '=' {
			return nil, nil, nil, malformedArray(s, `Missing "=" after array dimensions.`)
		}
		p.pos++
		p.skipSpace()
	}
	if p.peek() != '{' {
		return nil, nil, nil, malformedArray(s, `Array value must start with "{" or dimension information.`)
	}
	if err := p.level(0); err != nil {
		return nil, nil, nil, err
	}
	p.skipSpace()
	if p.pos < len(s) {
		return nil, nil, nil, malformedArray(s, "Junk after closing right brace.")
	}
	dims = p.dims
	if p.leaf < 0 {
		// '{}': empty whatever the decoration says... except that
		// PostgreSQL insists decorated dimensions match.
		if len(given) > 0 {
			return nil, nil, nil, malformedArray(s, "Specified array dimensions do not match array contents.")
		}
		return nil, nil, nil, nil
	}
	dims = dims[:p.leaf+1]
	lower = make([]int, len(dims))
	for i := range lower {
		lower[i] = 1
	}
	if given != nil {
		if len(given) != len(dims) {
			return nil, nil, nil, malformedArray(s, "Specified array dimensions do not match array contents.")
		}
		for i := range given {
			if given[i] != dims[i] {
				return nil, nil, nil, malformedArray(s, "Specified array dimensions do not match array contents.")
			}
		}
		lower = givenLo
	}
	return dims, lower, p.elems, nil
}

type arrayParser struct {
	s     string
	pos   int
	dims  []int // items seen at each depth (checked equal for every sub-array)
	leaf  int   // the depth where elements (not sub-arrays) stand; -1 before the first
	elems []*string
}

func (p *arrayParser) peek() byte {
	if p.pos < len(p.s) {
		return p.s[p.pos]
	}
	return 0
}

func isArraySpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func (p *arrayParser) skipSpace() {
	for p.pos < len(p.s) && isArraySpace(p.s[p.pos]) {
		p.pos++
	}
}

// bounds reads "lo:hi]" or "hi]" after a '['.
func (p *arrayParser) bounds() (lo, hi int, ok bool) {
	num := func() (int, bool) {
		start := p.pos
		if p.peek() == '-' || p.peek() == '+' {
			p.pos++
		}
		for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
			p.pos++
		}
		n, err := strconv.Atoi(p.s[start:p.pos])
		return n, err == nil
	}
	a, ok := num()
	if !ok {
		return 0, 0, false
	}
	if p.peek() == ':' {
		p.pos++
		b, ok := num()
		if !ok {
			return 0, 0, false
		}
		lo, hi = a, b
	} else {
		lo, hi = 1, a
	}
	if p.peek() != ']' {
		return 0, 0, false
	}
	p.pos++
	return lo, hi, true
}

// level reads the braces at p.pos, at nesting depth d.
func (p *arrayParser) level(d int) error {
	if d >= MaxArrayDims {
		return sqlerr.New(sqlerr.ProgramLimitExceeded, "number of array dimensions (%d) exceeds the maximum allowed (%d)", d+1, MaxArrayDims)
	}
	if len(p.dims) <= d {
		p.dims = append(p.dims, -1)
	}
	p.pos++ // '{'
	p.skipSpace()
	if p.peek() == '}' {
		p.pos++
		if d > 0 {
			// {{},{}}: PostgreSQL 15 reads an empty inner level as an
			// error too.
			return malformedArray(p.s, "Multidimensional arrays must have sub-arrays with matching dimensions.")
		}
		return nil
	}
	count := 0
	for {
		p.skipSpace()
		if p.peek() == '{' {
			if p.leaf >= 0 && p.leaf <= d {
				return malformedArray(p.s, "Unexpected \"{\" character.")
			}
			if err := p.level(d + 1); err != nil {
				return err
			}
		} else {
			if p.leaf >= 0 && p.leaf != d {
				return malformedArray(p.s, "Multidimensional arrays must have sub-arrays with matching dimensions.")
			}
			p.leaf = d
			e, err := p.element()
			if err != nil {
				return err
			}
			p.elems = append(p.elems, e)
		}
		count++
		p.skipSpace()
		switch p.peek() {
		case ',':
			p.pos++
			continue
		case '}':
			p.pos++
		case 0:
			return malformedArray(p.s, "Unexpected end of input.")
		default:
			return malformedArray(p.s, "Unexpected \""+string(p.s[p.pos])+"\" character.")
		}
		break
	}
	if p.dims[d] < 0 {
		p.dims[d] = count
	} else if p.dims[d] != count {
		return malformedArray(p.s, "Multidimensional arrays must have sub-arrays with matching dimensions.")
	}
	return nil
}

// element reads one element: "quoted" or bare up to ',' or '}'.
func (p *arrayParser) element() (*string, error) {
	var sb strings.Builder
	if p.peek() == '"' {
		p.pos++
		for {
			if p.pos >= len(p.s) {
				return nil, malformedArray(p.s, "Unexpected end of input.")
			}
			c := p.s[p.pos]
			p.pos++
			switch c {
			case '\\':
				if p.pos >= len(p.s) {
					return nil, malformedArray(p.s, "Unexpected end of input.")
				}
				sb.WriteByte(p.s[p.pos])
				p.pos++
				continue
			case '"':
				e := sb.String()
				return &e, nil
			}
			sb.WriteByte(c)
		}
	}
	escaped := false
	keep := 0 // characters up to the last escaped one survive trimming
	for {
		if p.pos >= len(p.s) {
			return nil, malformedArray(p.s, "Unexpected end of input.")
		}
		c := p.s[p.pos]
		switch c {
		case ',', '}':
			e := sb.String()
			if t := strings.TrimRight(e, " \t\n\r\v\f"); len(t) >= keep {
				e = t
			} else {
				e = e[:keep]
			}
			if e == "" && !escaped {
				return nil, malformedArray(p.s, "Unexpected \""+string(c)+"\" character.")
			}
			if !escaped && strings.EqualFold(e, "NULL") {
				return nil, nil
			}
			return &e, nil
		case '{', '"':
			return nil, malformedArray(p.s, "Unexpected \""+string(c)+"\" character.")
		case '\\':
			p.pos++
			if p.pos >= len(p.s) {
				return nil, malformedArray(p.s, "Unexpected end of input.")
			}
			sb.WriteByte(p.s[p.pos])
			p.pos++
			escaped = true
			keep = sb.Len()
			continue
		}
		sb.WriteByte(c)
		p.pos++
	}
}

// parseArray converts text to an array of t's element type.
func parseArray(t Type, s string) (Value, error) {
	dims, lower, texts, err := ParseArrayLiteral(s)
	if err != nil {
		return Value{}, err
	}
	et := t.ElemType()
	elems := make([]Value, len(texts))
	for i, e := range texts {
		if e == nil {
			continue
		}
		if et.Family == Interval && et.Qual != 0 {
			// PostgreSQL reads the elements as plain intervals, then
			// applies the qualifier ('{5}'::interval minute[] is 5
			// seconds, dropped): array_in, then interval_scale.
			if elems[i], err = ParseText(TypeInterval, *e); err == nil {
				elems[i], err = AdjustInterval(elems[i], et.Qual)
			}
		} else {
			elems[i], err = ParseText(et, *e)
		}
		if err != nil {
			return Value{}, err
		}
	}
	return NewArrayDims(et, dims, lower, elems)
}

// castArray converts every element of array v to t's element type,
// keeping the dimensions.
func castArray(v Value, t Type) (Value, error) {
	et := t.ElemType()
	a := v.a
	if a == nil {
		return NewArray(et, nil), nil
	}
	out := make([]Value, len(a.elems))
	for i, e := range a.elems {
		c, err := Cast(e, et)
		if err != nil {
			return Value{}, err
		}
		out[i] = c
	}
	return Value{fam: Array, a: &arrayData{elem: et, dims: a.dims, lower: a.lower, elems: out}}, nil
}

// compareArrays orders arrays as PostgreSQL's btree does: element by
// element (a NULL element after every other value), then the one with
// fewer elements first, then by dimensions and lower bounds.
func compareArrays(x, y Value) int {
	xe, ye := x.ArrayElems(), y.ArrayElems()
	for i := 0; i < len(xe) && i < len(ye); i++ {
		a, b := xe[i], ye[i]
		switch {
		case a.IsNull() && b.IsNull():
			continue
		case a.IsNull():
			return 1
		case b.IsNull():
			return -1
		}
		if c := Compare(a, b); c != 0 {
			return c
		}
	}
	if c := cmp.Compare(len(xe), len(ye)); c != 0 {
		return c
	}
	xd, yd := x.ArrayDims(), y.ArrayDims()
	if c := cmp.Compare(len(xd), len(yd)); c != 0 {
		return c
	}
	for i := range xd {
		if c := cmp.Compare(xd[i], yd[i]); c != 0 {
			return c
		}
		if c := cmp.Compare(x.a.lower[i], y.a.lower[i]); c != 0 {
			return c
		}
	}
	return 0
}

// appendArrayGroupKey appends the group key of an array: its shape, then
// each element's key.
func appendArrayGroupKey(buf []byte, v Value) []byte {
	buf = append(buf, 7, byte(len(v.ArrayDims())))
	for i, d := range v.ArrayDims() {
		buf = strconv.AppendInt(buf, int64(d), 10)
		buf = append(buf, ':')
		buf = strconv.AppendInt(buf, int64(v.a.lower[i]), 10)
		buf = append(buf, ',')
	}
	for _, e := range v.ArrayElems() {
		buf = AppendGroupKey(buf, e)
	}
	return append(buf, 0xfe)
}

// arrayOIDs maps element type OIDs to their array type OIDs (pg_type's
// typarray).
var arrayOIDs = map[uint32]uint32{
	OIDBool: 1000, OIDBytea: 1001, OIDChar: 1002, OIDName: 1003, OIDInt2: 1005, OIDInt4: 1007,
	OIDText: 1009, OIDOid: 1028, OIDBPChar: 1014, OIDVarchar: 1015, OIDInt8: 1016, OIDFloat4: 1021,
	OIDFloat8: 1022, OIDTimestamp: 1115, OIDDate: 1182, OIDTimestampTZ: 1185, OIDInterval: 1187,
	OIDNumeric: 1231, OIDUuid: 2951, OIDJSON: 199, OIDJSONB: 3807, OIDRegclass: 2210, OIDTime: 1183, OIDTimeTZ: 1270,
}

var elemOIDs = func() map[uint32]uint32 {
	m := make(map[uint32]uint32, len(arrayOIDs))
	for e, a := range arrayOIDs {
		m[a] = e
	}
	return m
}()

// ArrayOID returns the OID of the array type whose elements have type
// OID elem (0 when there is none).
func ArrayOID(elem uint32) uint32 { return arrayOIDs[elem] }

// ElemOID returns the element type OID of array type OID oid (0 when oid
// is no array type).
func ElemOID(oid uint32) uint32 { return elemOIDs[oid] }

// parseArrayTypeName reads the array spellings of a type name: T[],
// T[3][], T ARRAY, T ARRAY[3], _int4 (pg_type's name of int4[]) and YQL's
// List<T>. ok is false when name is none of them.
func parseArrayTypeName(name string) (t Type, ok bool, err error) {
	lower := strings.ToLower(name)
	elem := ""
	switch {
	case strings.HasSuffix(lower, "]"):
		open := strings.IndexByte(lower, '[')
		if open <= 0 {
			return Type{}, false, nil
		}
		rest := lower[open:]
		for rest != "" {
			if rest[0] != '[' {
				return Type{}, true, sqlerr.New(sqlerr.SyntaxError, "syntax error in type name %q", name)
			}
			close := strings.IndexByte(rest, ']')
			if close < 0 {
				return Type{}, true, sqlerr.New(sqlerr.SyntaxError, "syntax error in type name %q", name)
			}
			if n := strings.TrimSpace(rest[1:close]); n != "" {
				if _, err := strconv.Atoi(n); err != nil {
					return Type{}, true, sqlerr.New(sqlerr.SyntaxError, "syntax error in type name %q", name)
				}
			}
			rest = strings.TrimSpace(rest[close+1:])
		}
		elem = strings.TrimSpace(name[:open])
		if l := strings.ToLower(elem); strings.HasSuffix(l, " array") {
			elem = strings.TrimSpace(elem[:len(elem)-len(" array")])
		}
	case strings.HasSuffix(lower, " array"):
		elem = strings.TrimSpace(name[:len(name)-len(" array")])
	case strings.HasPrefix(lower, "list<") && strings.HasSuffix(lower, ">"):
		elem = strings.TrimSpace(name[len("list<") : len(name)-1])
	case strings.HasPrefix(lower, "_") && len(lower) > 1:
		et, err := ParseTypeName(name[1:])
		if err != nil || et.Family == Array {
			return Type{}, false, nil
		}
		// An unresolved name (_mood) is an array of a user-defined type,
		// which the binder resolves.
		return ArrayOf(et), true, nil
	default:
		return Type{}, false, nil
	}
	et, err := ParseTypeName(elem)
	if err != nil {
		return Type{}, true, err
	}
	if et.Family == Array {
		return et, true, nil
	}
	return ArrayOf(et), true, nil
}

// ArrayType returns the type of an array value.
func (v Value) ArrayType() Type { return ArrayOf(v.ArrayElemType()) }
