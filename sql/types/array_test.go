package types

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// TestArrayText reads array literals in PostgreSQL's forms and prints
// them back as array_out does.
func TestArrayText(t *testing.T) {
	int4s, texts := ArrayOf(TypeInt32), ArrayOf(TypeUtf8)
	for _, tc := range []struct {
		t        Type
		in, want string
	}{
		{int4s, "{1,2,3}", "{1,2,3}"},
		{int4s, " { 1 , 2 ,3 } ", "{1,2,3}"},
		{int4s, "{}", "{}"},
		{int4s, "{ }", "{}"},
		{int4s, "{NULL,null,1}", "{NULL,NULL,1}"},
		{int4s, "{{1,2},{3,4}}", "{{1,2},{3,4}}"},
		{int4s, "{{{1},{2}},{{3},{4}}}", "{{{1},{2}},{{3},{4}}}"},
		{int4s, "[0:1]={5,6}", "[0:1]={5,6}"},
		{int4s, "[1:2]={5,6}", "{5,6}"},
		{int4s, "[-2:-1][1:1]={{5},{6}}", "[-2:-1][1:1]={{5},{6}}"},
		{texts, `{a,"b c","",NULL,"NULL",\"q\\,x\ y}`, `{a,"b c","",NULL,"NULL","\"q\\","x y"}`},
		{texts, `{ "  padded  " , bare word }`, `{"  padded  ","bare word"}`},
		{texts, `{a\ }`, `{"a "}`},
		{texts, `{{a,b},{c,d}}`, `{{a,b},{c,d}}`},
		{ArrayOf(TypeBool), "{t,false,yes}", "{t,f,t}"},
		{ArrayOf(TypeString), `{"\\x0102"}`, `{"\\x0102"}`},
		{ArrayOf(T(Date)), "{2024-01-02}", "{2024-01-02}"},
		{ArrayOf(TypeDouble), "{1.5,NaN,-Infinity}", "{1.5,NaN,-Infinity}"},
	} {
		v, err := ParseText(tc.t, tc.in)
		if err != nil {
			t.Errorf("%s as %v: %v", tc.in, tc.t, err)
			continue
		}
		if got := v.Text(); got != tc.want {
			t.Errorf("%s as %v: %s, want %s", tc.in, tc.t, got, tc.want)
		}
		back, err := ParseText(tc.t, v.Text())
		if err != nil || Compare(back, v) != 0 {
			t.Errorf("%s: reading %s back: %v, %v", tc.in, v.Text(), back, err)
		}
	}
	for _, tc := range []struct {
		in, code, detail string
	}{
		{"1,2", sqlerr.InvalidTextRepresentation, `Array value must start with "{" or dimension information.`},
		{"{1,2", sqlerr.InvalidTextRepresentation, "Unexpected end of input."},
		{"{1,2}x", sqlerr.InvalidTextRepresentation, "Junk after closing right brace."},
		{"{{1,2},{3}}", sqlerr.InvalidTextRepresentation, "Multidimensional arrays must have sub-arrays with matching dimensions."},
		{"{{1,2},3}", sqlerr.InvalidTextRepresentation, ""},
		{"{1,{2}}", sqlerr.InvalidTextRepresentation, ""},
		{"{1,,2}", sqlerr.InvalidTextRepresentation, ""},
		{`{"a}`, sqlerr.InvalidTextRepresentation, ""},
		{"{a}", sqlerr.InvalidTextRepresentation, ""},
		{"[1:3]={1,2}", sqlerr.InvalidTextRepresentation, "Specified array dimensions do not match array contents."},
		{"[1:2]{1,2}", sqlerr.InvalidTextRepresentation, `Missing "=" after array dimensions.`},
		{"[2:1]={}", sqlerr.ArraySubscriptError, ""},
		{"{{{{{{{1}}}}}}}", sqlerr.ProgramLimitExceeded, ""},
		{"{99999999999}", sqlerr.NumericValueOutOfRange, ""},
	} {
		_, err := ParseText(ArrayOf(TypeInt32), tc.in)
		e := sqlerr.As(err)
		if e == nil || e.Code != tc.code || tc.detail != "" && e.Detail != tc.detail {
			t.Errorf("%s: %v (detail %q), want %s %q", tc.in, err, detailOf(e), tc.code, tc.detail)
		}
	}
}

func detailOf(e *sqlerr.Error) string {
	if e == nil {
		return ""
	}
	return e.Detail
}

// TestArrayTypeNames checks the array spellings of type names and the
// array OIDs.
func TestArrayTypeNames(t *testing.T) {
	for name, want := range map[string]Type{
		"int[]": ArrayOf(TypeInt32), "integer[][]": ArrayOf(TypeInt32), "text[3]": ArrayOf(TypeUtf8),
		"_int8": ArrayOf(TypeInt64), "List<Utf8>": ArrayOf(TypeUtf8), "bigint array": ArrayOf(TypeInt64),
		"varchar(5)[]": ArrayOf(Type{Family: Utf8, Width: 5}), "numeric(10,2)[]": ArrayOf(Type{Family: Decimal, Precision: 10, Scale: 2}),
	} {
		got, err := ParseTypeName(name)
		if err != nil || got != want {
			t.Errorf("%s: %v %v, want %v", name, got, err, want)
		}
	}
	for _, bad := range []string{"int[x]", "int[", "List<no such>"} {
		if _, err := ParseTypeName(bad); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	for et, oid := range map[Type]uint32{TypeInt32: 1007, TypeInt64: 1016, TypeUtf8: 1009, TypeBool: 1000, T(Int16): 1005,
		TypeDouble: 1022, TypeDecimal: 1231, TypeTimestampTZ: 1185, T(Uuid): 2951, TypeBPChar: 1014} {
		at := ArrayOf(et)
		if at.OID() != oid {
			t.Errorf("%v[]: OID %d, want %d", et, at.OID(), oid)
		}
		back, ok := FromOID(oid)
		if !ok || back.ElemType().OID() != et.OID() {
			t.Errorf("FromOID(%d) = %v", oid, back)
		}
	}
	if got := ArrayOf(Type{Family: Utf8, Width: 3}).PGName(); got != "character varying(3)[]" {
		t.Errorf("PGName %s", got)
	}
	if ArrayOf(ArrayOf(TypeInt32)) != ArrayOf(TypeInt32) {
		t.Error("an array of arrays is not the array type")
	}
}

// TestArrayCompareAndCast checks PostgreSQL's array ordering (elements,
// then length, NULL elements last), group keys agreeing with Equal, and
// element-wise casts.
func TestArrayCompareAndCast(t *testing.T) {
	arr := func(s string) Value {
		v, err := ParseText(ArrayOf(TypeInt64), s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	order := []string{"{}", "{1}", "{1,2}", "{1,2,3}", "{{1,2},{3,4}}", "{1,3}", "{1,NULL}", "{2}", "{NULL}"}
	for i := range order {
		for j := range order {
			a, b := arr(order[i]), arr(order[j])
			got := Compare(a, b)
			want := 0
			switch {
			case i < j:
				want = -1
			case i > j:
				want = 1
			}
			if got != want {
				t.Errorf("Compare(%s, %s) = %d, want %d", order[i], order[j], got, want)
			}
			if (string(AppendGroupKey(nil, a)) == string(AppendGroupKey(nil, b))) != (i == j) {
				t.Errorf("group keys of %s and %s disagree with Equal", order[i], order[j])
			}
		}
	}
	v, err := Cast(arr("{1,NULL,3}"), ArrayOf(T(Int16)))
	if err != nil || v.Text() != "{1,NULL,3}" || v.ArrayElems()[0].Family() != Int16 {
		t.Errorf("int8[] as int2[]: %v %v", v, err)
	}
	if _, err := Cast(arr("{70000}"), ArrayOf(T(Int16))); sqlerr.Code(err) != sqlerr.NumericValueOutOfRange {
		t.Errorf("out of range element: %v", err)
	}
	if v, err := Cast(arr("{{1,2},{3,4}}"), TypeUtf8); err != nil || v.Str() != "{{1,2},{3,4}}" {
		t.Errorf("array as text: %v %v", v, err)
	}
	if _, err := Cast(NewInt64(1), ArrayOf(TypeInt64)); sqlerr.Code(err) != sqlerr.DatatypeMismatch {
		t.Errorf("integer as array: %v", err)
	}
}

// TestArrayTextRandom round-trips random text arrays through their text
// form: every byte the element syntax gives a meaning must be quoted.
func TestArrayTextRandom(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	alphabet := []string{"a", "b", " ", ",", "{", "}", "\"", "\\", "NULL", "null", "\t", "é", "[", "]", ":", "="}
	for n := 0; n < 500; n++ {
		elems := make([]Value, r.Intn(5))
		for i := range elems {
			if r.Intn(6) == 0 {
				continue // NULL
			}
			var sb strings.Builder
			for k := r.Intn(4); k > 0; k-- {
				sb.WriteString(alphabet[r.Intn(len(alphabet))])
			}
			elems[i] = NewUtf8(sb.String())
		}
		v := NewArray(TypeUtf8, elems)
		back, err := ParseText(ArrayOf(TypeUtf8), v.Text())
		if err != nil || Compare(back, v) != 0 {
			t.Fatalf("%q read back as %q: %v", v.Text(), back.Text(), err)
		}
	}
}

// TestVectorText: int2vector-style arrays print blank-separated ("" when
// empty) and keep their elements for subscripts and comparisons.
func TestVectorText(t *testing.T) {
	v := NewVector(T(Int16), []Value{NewInt(Int16, 2), NewInt(Int16, 5)})
	if got := v.Text(); got != "2 5" {
		t.Fatalf("vector text %q", got)
	}
	if got := NewVector(T(Int16), nil).Text(); got != "" {
		t.Fatalf("empty vector text %q", got)
	}
	if len(v.ArrayElems()) != 2 || v.ArrayDims()[0] != 2 {
		t.Fatalf("vector elems %v dims %v", v.ArrayElems(), v.ArrayDims())
	}
	// Its subscripts start at 0, as PostgreSQL's: it equals the array
	// [0:1]={2,5}, not {2,5} (array_eq compares the lower bounds).
	if v.ArrayLower()[0] != 0 {
		t.Fatalf("vector lower bound %v", v.ArrayLower())
	}
	plain := NewArray(T(Int16), []Value{NewInt(Int16, 2), NewInt(Int16, 5)})
	if Compare(v, plain) == 0 {
		t.Fatal("a vector with lower bound 0 equals a 1-based array")
	}
	zero, err := NewArrayDims(T(Int16), []int{2}, []int{0}, []Value{NewInt(Int16, 2), NewInt(Int16, 5)})
	if err != nil || Compare(v, zero) != 0 {
		t.Fatalf("a vector equals the 0-based array of its elements (%v)", err)
	}
}
