package logictest

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseRecords(t *testing.T) {
	src := strings.Join([]string{
		"hash-threshold 8", // 1
		"",
		"# a comment",            // 3
		"statement ok",           // 4
		"CREATE TABLE t1(a INT,", // 5
		"  b INT)",               // 6
		"",
		"",
		"skipif mysql # not supported", // 9
		"onlyif pivotdb",               // 10
		"statement error",              // 11
		"SELECT nope",                  // 12
		"   ",                          // 13: whitespace-only is blank
		"query ITR rowsort label-7",    // 14
		"SELECT a,",                    // 15
		"# comment inside",             // 16
		"b, c FROM t1",                 // 17
		"----",                         // 18
		"1",                            // 19
		"(empty)",                      // 20
		"with space",                   // 21
		"",
		"query I",  // 23
		"SELECT 1", // 24
		"",
		"query T valuesort", // 26
		"SELECT 1",
		"----",
		"30 values hashing to 0123456789ABCDEF0123456789abcdef",
		"",
		"onlyif sqlite",
		"halt", // 32
		"",
		"halt", // 34
		"",
		"loop i 0 10", // 36
		"",
		"query X nosort", // 38
		"SELECT 1",
		"",
		"query I sideways", // 41
		"SELECT 1",
		"",
		"statement maybe", // 44
		"SELECT 1",
		"",
		"skipif x", // 47 guards only
	}, "\n")
	recs := Parse(src)
	type short struct {
		Line, First int
		Kind        RecordKind
		SQL         string
		Err         string
	}
	var got []short
	for _, r := range recs {
		got = append(got, short{r.Line, r.FirstLine, r.Kind, r.SQL, r.Err})
	}
	want := []short{
		{1, 1, KindHashThreshold, "", ""},
		{4, 4, KindStatement, "CREATE TABLE t1(a INT,\n  b INT)", ""},
		{11, 9, KindStatement, "SELECT nope", ""},
		{14, 14, KindQuery, "SELECT a,\nb, c FROM t1", ""},
		{23, 23, KindQuery, "SELECT 1", ""},
		{26, 26, KindQuery, "SELECT 1", ""},
		{32, 31, KindHalt, "", ""},
		{34, 34, KindHalt, "", ""},
		{36, 36, KindInvalid, "", "unknown record type: 'loop'"},
		{38, 38, KindInvalid, "", "unknown type character 'X' in type string"},
		{41, 41, KindInvalid, "", "unknown sort method: 'sideways'"},
		{44, 44, KindInvalid, "", "statement argument should be 'ok' or 'error'"},
		{47, 47, KindInvalid, "", "record has guard lines only"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("records:\n got %+v\nwant %+v", got, want)
	}

	if recs[0].Threshold != 8 {
		t.Errorf("threshold = %d", recs[0].Threshold)
	}
	st := recs[2]
	if !st.ExpectError || !reflect.DeepEqual(st.Guards, []Guard{{true, "mysql"}, {false, "pivotdb"}}) {
		t.Errorf("statement error record: %+v", st)
	}
	q := recs[3]
	if q.Types != "ITR" || q.SortMode != RowSort || q.Label != "label-7" || !q.HasSeparator {
		t.Errorf("query header: %+v", q)
	}
	if !reflect.DeepEqual(q.Expected, []string{"1", "(empty)", "with space"}) {
		t.Errorf("expected = %q", q.Expected)
	}
	q = recs[4]
	if q.SortMode != NoSort || q.HasSeparator || q.Expected != nil {
		t.Errorf("query without results: %+v", q)
	}
	h, ok := recs[5].ExpectedHash()
	if !ok || h != "0123456789abcdef0123456789abcdef" {
		t.Errorf("ExpectedHash = %q, %v", h, ok)
	}
	h, ok = recs[3].ExpectedHash()
	if !ok || h != HashValues([]string{"1", "(empty)", "with space"}) {
		t.Errorf("ExpectedHash of values = %q, %v", h, ok)
	}
	if _, ok := recs[4].ExpectedHash(); ok {
		t.Error("ExpectedHash of a query without results")
	}
}

func TestParseCRLFAndEOF(t *testing.T) {
	src := "statement ok\r\nCREATE TABLE t(a INT)\r\n\r\nquery I nosort\r\nSELECT 1\r\n----\r\n1"
	recs := Parse(src)
	if len(recs) != 2 {
		t.Fatalf("got %d records", len(recs))
	}
	if recs[0].SQL != "CREATE TABLE t(a INT)" {
		t.Errorf("SQL = %q", recs[0].SQL)
	}
	if recs[1].Line != 4 || !reflect.DeepEqual(recs[1].Expected, []string{"1"}) {
		t.Errorf("query = %+v", recs[1])
	}
	if len(Parse("")) != 0 || len(Parse("\n\n# only comments\n\n")) != 0 {
		t.Error("empty input gave records")
	}
}

// A comment line does not end a record: the reference runner drops it, so
// the record goes on until a blank line.
func TestParseCommentDoesNotSeparate(t *testing.T) {
	recs := Parse("statement ok\nSELECT 1\n# note\nstatement ok\nSELECT 2\n")
	if len(recs) != 1 || recs[0].SQL != "SELECT 1\nstatement ok\nSELECT 2" {
		t.Fatalf("got %+v", recs)
	}
}

func TestGuards(t *testing.T) {
	cases := []struct {
		guards []Guard
		engine string
		skip   bool
	}{
		{nil, "pivotdb", false},
		{[]Guard{{false, "sqlite"}}, "pivotdb", true},
		{[]Guard{{true, "mysql"}}, "pivotdb", false},
		{[]Guard{{true, "pivotdb"}}, "pivotdb", true},
		{[]Guard{{false, "PivotDB"}}, "pivotdb", false},
		{[]Guard{{true, "mysql"}, {false, "pivotdb"}}, "pivotdb", false},
		{[]Guard{{true, "mysql"}, {false, "oracle"}}, "pivotdb", true},
		{[]Guard{{false, "postgresql"}}, "PostgreSQL", false},
	}
	for _, c := range cases {
		r := Record{Guards: c.guards}
		if got := r.Skipped(c.engine); got != c.skip {
			t.Errorf("%+v as %s: skipped = %v", c.guards, c.engine, got)
		}
	}
}

func TestParseHashLine(t *testing.T) {
	n, h, ok := ParseHashLine("768 values hashing to 5d3fe674077ba48f8afa1c6f4e61ced4")
	if !ok || n != 768 || h != "5d3fe674077ba48f8afa1c6f4e61ced4" {
		t.Errorf("got %d %q %v", n, h, ok)
	}
	for _, s := range []string{"", "1", "x values hashing to y", "3 values hashing", "values hashing to 3"} {
		if _, _, ok := ParseHashLine(s); ok {
			t.Errorf("%q parsed as a hash line", s)
		}
	}
}

// The corpus parses without invalid records and with the record counts the
// reference format implies.
func TestParseCorpus(t *testing.T) {
	files := []string{
		"../../../shared/sqllogictest/select1.test",
		"/work/shared/sqllogictest/select1.test",
	}
	for _, f := range files {
		data, err := readFileIfExists(f)
		if err != nil || data == "" {
			continue
		}
		recs := Parse(data)
		counts := map[RecordKind]int{}
		for _, r := range recs {
			counts[r.Kind]++
			if r.Kind == KindInvalid {
				t.Errorf("%s:%d: %s", f, r.Line, r.Err)
			}
			if r.Kind == KindQuery && len(r.Expected)%len(r.Types) != 0 {
				if _, _, ok := ParseHashLine(r.Expected[0]); !ok {
					t.Errorf("%s:%d: %d values for %d columns", f, r.Line, len(r.Expected), len(r.Types))
				}
			}
		}
		if counts[KindQuery] != 1000 || counts[KindStatement] != 31 {
			t.Errorf("select1.test: %v", counts)
		}
		return
	}
	t.Skip("corpus not found")
}
