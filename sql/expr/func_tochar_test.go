package expr

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// pgCorpus reads a tab-separated file of cases and PostgreSQL's answers
// (pgcorpus/to_*_pg15.tsv, produced by running each case on PostgreSQL
// 15.18 through a PL/pgSQL wrapper that returned '[' || result || ']' or
// 'ERR:' || SQLSTATE). psql's COPY doubled backslashes.
func pgCorpus(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if strings.HasPrefix(l, "#") {
			continue
		}
		p := strings.Split(strings.ReplaceAll(l, `\\`, `\`), "\t")
		rows = append(rows, p)
	}
	return rows
}

func resultText(s string, err error) string {
	if err != nil {
		var se *sqlerr.Error
		if errors.As(err, &se) {
			return "ERR:" + se.Code
		}
		return "ERR:" + err.Error()
	}
	return "[" + s + "]"
}

// TestToCharPostgres compares to_char of numeric, real, double
// precision, integer and bigint values under 68 pictures (every keyword,
// FM, signs, overflow, NaN and infinities) with PostgreSQL's output.
func TestToCharPostgres(t *testing.T) {
	rows := pgCorpus(t, "pgcorpus/to_char_pg15.tsv")
	bad := 0
	for _, r := range rows {
		typ, vs, f, want := r[0], r[1], r[2], r[3]
		var v types.Value
		var kind toCharKind
		switch typ {
		case "numeric":
			d, _, err := apd.NewFromString(vs)
			if err != nil {
				t.Fatal(err)
			}
			v, kind = types.NewDecimal(d), toCharNumeric
		case "float8", "float4":
			x, _ := strconv.ParseFloat(vs, 64)
			v, kind = types.NewDouble(x), toCharFloat8
			if typ == "float4" {
				v, kind = types.NewFloat(float64(float32(x))), toCharFloat4
			}
		case "int4", "int8":
			x, _ := strconv.ParseInt(vs, 10, 64)
			v, kind = types.NewInt64(x), toCharInt8
			if typ == "int4" {
				v, kind = types.NewInt(types.Int32, x), toCharInt4
			}
		default:
			t.Fatalf("type %q", typ)
		}
		if got := resultText(toChar(kind, v, f)); got != want {
			if bad++; bad <= 20 {
				t.Errorf("to_char(%s::%s, %q) = %q, PostgreSQL gives %q", vs, typ, f, got, want)
			}
		}
	}
	if bad > 0 || len(rows) < 2000 {
		t.Fatalf("%d of %d cases differ", bad, len(rows))
	}
}

// TestToNumberPostgres compares to_number on 31 inputs under 29
// pictures with PostgreSQL's results.
func TestToNumberPostgres(t *testing.T) {
	rows := pgCorpus(t, "pgcorpus/to_number_pg15.tsv")
	bad := 0
	for _, r := range rows {
		vs, f, want := r[0], r[1], r[2]
		d, err := toNumber(vs, f)
		s := "<NULL>"
		if d != nil {
			s = types.NewDecimal(d).String()
		}
		if got := resultText(s, err); got != want {
			if bad++; bad <= 20 {
				t.Errorf("to_number(%q, %q) = %q, PostgreSQL gives %q", vs, f, got, want)
			}
		}
	}
	if bad > 0 || len(rows) < 800 {
		t.Fatalf("%d of %d cases differ", bad, len(rows))
	}
}

// TestToCharTimePostgres compares to_char of timestamps, timestamptz
// (TimeZone America/New_York) and dates under 30 pictures with
// PostgreSQL's output.
func TestToCharTimePostgres(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no zone data:", err)
	}
	c := &Context{Zone: ny}
	rows := pgCorpus(t, "pgcorpus/to_char_time_pg15.tsv")
	bad := 0
	for _, r := range rows {
		typ, vs, f, want := r[0], r[1], r[2], r[3]
		var v types.Value
		switch typ {
		case "timestamp":
			v, err = types.ParseText(types.TypeTimestamp, vs)
		case "timestamptz":
			v, err = types.ParseText(types.TypeTimestampTZ, vs)
		case "date":
			v, err = types.ParseText(types.T(types.Date), vs)
		}
		if err != nil {
			t.Fatal(vs, err)
		}
		out, err := toCharTime(c, v, f)
		if got := resultText(out.Str(), err); got != want {
			if bad++; bad <= 30 {
				t.Errorf("to_char(%s::%s, %q) = %q, PostgreSQL gives %q", vs, typ, f, got, want)
			}
		}
	}
	if bad > 0 || len(rows) < 500 {
		t.Fatalf("%d of %d cases differ", bad, len(rows))
	}
}
