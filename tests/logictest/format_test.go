package logictest

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"reflect"
	"strings"
	"testing"
)

func readFileIfExists(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	return string(b), err
}

func TestFormatValue(t *testing.T) {
	cases := []struct {
		typ  byte
		in   string
		null bool
		want string
	}{
		{'I', "", true, "NULL"},
		{'R', "", true, "NULL"},
		{'T', "", true, "NULL"},
		{'T', "", false, "(empty)"},
		{'T', "NULL", false, "NULL"},
		{'T', "a\tb\nc", false, "a@b@c"},
		{'T', "h\u00e9llo", false, "h@@llo"},
		{'T', "~ \x7f", false, "~ @"},
		{'T', "table tn1 row 1", false, "table tn1 row 1"},
		{'I', "42", false, "42"},
		{'I', "-7", false, "-7"},
		{'I', "+7", false, "7"},
		{'I', "007", false, "7"},
		{'I', "18446744073709551615", false, "18446744073709551615"},
		{'I', "2.9", false, "2"},
		{'I', "-2.9", false, "-2"},
		{'I', "-0.5", false, "0"},
		{'I', "123.000", false, "123"},
		{'I', "1e3", false, "1000"},
		{'I', "1.5e2", false, "150"},
		{'I', "1e300", false, "9223372036854775807"},
		{'I', "12abc", false, "12"},
		{'I', "  34", false, "34"},
		{'I', "abc", false, "0"},
		{'I', "", false, "0"},
		{'I', "NaN", false, "0"},
		{'I', "t", false, "1"},
		{'I', "f", false, "0"},
		{'I', "123456789012345678901234567890.7", false, "123456789012345678901234567890"},
		{'R', "1", false, "1.000"},
		{'R', "1.0005", false, "1.000"}, // exactly 1.000499999..., as glibc prints it
		{'R', "2.0005", false, "2.001"}, // exactly 2.000500000...1669
		{'R', "0.6666666666666666", false, "0.667"},
		{'R', "-1.23456", false, "-1.235"},
		{'R', "-0", false, "0.000"},
		{'R', "-0.0001", false, "-0.000"},
		{'R', "1e3", false, "1000.000"},
		{'R', "abc", false, "0.000"},
		{'R', "3x", false, "3.000"},
		{'R', "t", false, "1.000"},
	}
	for _, c := range cases {
		if got := FormatValue(c.typ, []byte(c.in), c.null); got != c.want {
			t.Errorf("FormatValue(%c, %q, %v) = %q, want %q", c.typ, c.in, c.null, got, c.want)
		}
	}
}

func TestSortValues(t *testing.T) {
	v := []string{"2", "b", "10", "a", "2", "a", "NULL", "z"}
	SortValues(v, 2, RowSort)
	if want := []string{"10", "a", "2", "a", "2", "b", "NULL", "z"}; !reflect.DeepEqual(v, want) {
		t.Errorf("rowsort = %q, want %q", v, want)
	}
	v = []string{"2", "b", "10", "a"}
	SortValues(v, 2, ValueSort)
	if want := []string{"10", "2", "a", "b"}; !reflect.DeepEqual(v, want) {
		t.Errorf("valuesort = %q, want %q", v, want)
	}
	v = []string{"2", "b", "10", "a"}
	SortValues(v, 2, NoSort)
	if want := []string{"2", "b", "10", "a"}; !reflect.DeepEqual(v, want) {
		t.Errorf("nosort = %q", v)
	}
}

func TestHashValues(t *testing.T) {
	vals := []string{"1", "10", "2", "3", "4", "5", "6", "7", "8", "9"}
	sum := md5.Sum([]byte(strings.Join(vals, "\n") + "\n"))
	want := hex.EncodeToString(sum[:])
	if want != "ff2650590d3f27ea6644b5573ccc37ba" {
		t.Fatalf("test vector: %s", want)
	}
	if got := HashValues(vals); got != want {
		t.Errorf("HashValues = %s, want %s", got, want)
	}
	if got := HashLine(vals); got != "10 values hashing to "+want {
		t.Errorf("HashLine = %q", got)
	}
	if got := HashValues(nil); got != "d41d8cd98f00b204e9800998ecf8427e" {
		t.Errorf("HashValues(nil) = %s", got)
	}
}

// A hash from the corpus: select1.test's "SELECT * FROM t1" style queries
// are hashed over the sorted values; check the hashing agrees with a
// record whose values are known.
func TestCompareResult(t *testing.T) {
	vals := []string{"1", "10", "2", "3", "4", "5", "6", "7", "8", "9"}
	rec := &Record{Types: "I", Expected: []string{"10 values hashing to ff2650590d3f27ea6644b5573ccc37ba"}}
	if f := compareResult(rec, vals, 8); f != nil {
		t.Errorf("hash: %+v", f)
	}
	rec.Expected = []string{"11 values hashing to ff2650590d3f27ea6644b5573ccc37ba"}
	if f := compareResult(rec, vals, 8); f == nil {
		t.Error("wrong count passed")
	}
	rec.Expected = vals
	if f := compareResult(rec, vals, 0); f != nil {
		t.Errorf("values: %+v", f)
	}
	rec.Expected = vals[:9]
	if f := compareResult(rec, vals, 0); f == nil || !strings.Contains(f.Message, "expected 9 values, got 10") {
		t.Errorf("short: %+v", f)
	}
	rec.Expected = nil
	if f := compareResult(rec, nil, 8); f != nil {
		t.Errorf("empty: %+v", f)
	}
	// Rows written one per line, values separated by spaces.
	rec = &Record{Types: "II", Expected: []string{"1 2", "3  4"}}
	if f := compareResult(rec, []string{"1", "2", "3", "4"}, 8); f != nil {
		t.Errorf("row per line: %+v", f)
	}
	if f := compareResult(rec, []string{"1", "2", "3", "5"}, 8); f == nil {
		t.Error("row per line: wrong value passed")
	}
	// Text with spaces, one value per line.
	rec = &Record{Types: "IT", Expected: []string{"1", "table tn1 row 1"}}
	if f := compareResult(rec, []string{"1", "table tn1 row 1"}, 8); f != nil {
		t.Errorf("text with spaces: %+v", f)
	}
}
