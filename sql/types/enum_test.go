package types

import (
	"testing"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

func testEnum() *EnumDef {
	return &EnumDef{ID: 7, Name: "mood", Labels: []EnumLabel{{"sad", 1}, {"ok", 2}, {"happy", 3}}}
}

// Enum values compare by sort position, not by label, and cast to and
// from text with 22P02 for a label the type lacks.
func TestEnumValues(t *testing.T) {
	d := testEnum()
	et := EnumType(d)
	sad, err := Cast(NewUnknown("sad"), et)
	if err != nil {
		t.Fatal(err)
	}
	happy, err := Cast(NewUtf8("happy"), et)
	if err != nil {
		t.Fatal(err)
	}
	if Compare(sad, happy) >= 0 || Compare(happy, sad) <= 0 || Compare(sad, sad) != 0 {
		t.Fatalf("declaration order: sad %v happy %v", sad, happy)
	}
	if sad.Text() != "sad" || happy.EnumSort() != 3 {
		t.Fatalf("value: %q %v", sad.Text(), happy.EnumSort())
	}
	txt, err := Cast(happy, TypeUtf8)
	if err != nil || txt.Family() != Utf8 || txt.Str() != "happy" {
		t.Fatalf("to text: %v %v", txt, err)
	}
	if _, err := Cast(NewUnknown("angry"), et); sqlerr.Code(err) != sqlerr.InvalidTextRepresentation ||
		err.Error() != `invalid input value for enum mood: "angry"` {
		t.Fatalf("unknown label: %v", err)
	}
	if _, err := Cast(NewInt64(1), et); sqlerr.Code(err) != sqlerr.DatatypeMismatch {
		t.Fatalf("int to enum: %v", err)
	}
	if string(AppendGroupKey(nil, sad)) == string(AppendGroupKey(nil, happy)) {
		t.Fatal("group keys of different labels are equal")
	}
}

// New labels go between their neighbours without moving existing ones.
func TestNextEnumSort(t *testing.T) {
	d := testEnum()
	for _, c := range []struct {
		neighbour string
		before    bool
		want      float64
	}{{"", false, 4}, {"sad", true, 0}, {"sad", false, 1.5}, {"ok", true, 1.5}, {"happy", false, 4}, {"happy", true, 2.5}} {
		got, err := NextEnumSort(d, c.neighbour, c.before)
		if err != nil || got != c.want {
			t.Errorf("%q before=%v: %v %v, want %v", c.neighbour, c.before, got, err, c.want)
		}
	}
	if _, err := NextEnumSort(d, "nope", false); sqlerr.Code(err) != sqlerr.InvalidParameterValue {
		t.Errorf("missing neighbour: %v", err)
	}
	// Halving runs out after some dozens of insertions at one place.
	d = &EnumDef{ID: 1, Name: "e", Labels: []EnumLabel{{"a", 1}, {"b", 2}}}
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		var p float64
		if p, err = NextEnumSort(d, "b", true); err == nil {
			// Keep only the newest label just before b.
			d.Labels = []EnumLabel{{"a", 1}, {"x", p}, {"b", 2}}
		}
	}
	if sqlerr.Code(err) != sqlerr.ProgramLimitExceeded {
		t.Errorf("exhausted positions: %v", err)
	}
}

// Names the parser does not know are unresolved user-type references,
// also as array elements (the binder resolves them).
func TestUserTypeRef(t *testing.T) {
	for _, name := range []string{"mood", "public.mood", "Mood"} {
		got, err := ParseTypeName(name)
		if err != nil || !got.IsUserTypeRef() || got.Enum.Name != "mood" {
			t.Errorf("%s: %v %v", name, got, err)
		}
	}
	for _, name := range []string{"mood[]", "_mood", "List<mood>", "mood array"} {
		got, err := ParseTypeName(name)
		if err != nil || got.Family != Array || !got.ElemType().IsUserTypeRef() || got.Enum.Name != "mood" {
			t.Errorf("%s: %v %v", name, got, err)
		}
	}
	if _, err := ParseTypeName("no such"); sqlerr.Code(err) != sqlerr.UndefinedObject {
		t.Errorf("two words: %v", err)
	}
}
