package storage

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestEncodingGolden pins the exact bytes of the key encoding in
// testdata/encoding. They are the on-disk format: a diff in that file means
// existing data directories no longer read back, so rewrite it (-rewrite)
// only for a deliberate, versioned format change.
//
// Commands:
//
//	encode        one tuple per line; prints each column's bytes, "|" between
//	sort          one tuple per line; prints them in encoded order, "=" marking
//	              a tuple whose encoding equals the previous one
//	decode t1,t2  one hex string per line; decodes columns of those types
//
// A tuple is "type literal" columns separated by commas, with types null, max,
// bool, int64, uint64, float64, bytes (a Go-quoted string) and decimal
// (1.50, -2e-3, 15e2147483647, NaN, Infinity, -Infinity).
func TestEncodingGolden(t *testing.T) {
	datadriven.RunTest(t, "testdata/encoding", func(t *testing.T, td *datadriven.TestData) string {
		lines := strings.Split(strings.TrimSpace(td.Input), "\n")
		var out strings.Builder
		switch td.Cmd {
		case "encode":
			for _, line := range lines {
				tuple, err := parseTuple(line)
				if err != nil {
					return err.Error()
				}
				cols := make([]string, len(tuple))
				for i, d := range tuple {
					cols[i] = spacedHex(d.encode(nil))
				}
				fmt.Fprintf(&out, "%s\n  %s\n", line, strings.Join(cols, " | "))
			}
		case "sort":
			type row struct {
				line string
				enc  []byte
			}
			var rows []row
			for _, line := range lines {
				tuple, err := parseTuple(line)
				if err != nil {
					return err.Error()
				}
				rows = append(rows, row{line, encodeTuple(tuple)})
			}
			slices.SortStableFunc(rows, func(a, b row) int { return bytes.Compare(a.enc, b.enc) })
			for i, r := range rows {
				mark := " "
				if i > 0 && bytes.Equal(r.enc, rows[i-1].enc) {
					mark = "="
				}
				fmt.Fprintf(&out, "%s %s\n", mark, r.line)
			}
		case "decode":
			var kinds []kind
			for _, arg := range td.CmdArgs {
				k, err := parseKind(arg.Key)
				if err != nil {
					return err.Error()
				}
				kinds = append(kinds, k)
			}
			for _, line := range lines {
				b, err := hex.DecodeString(strings.ReplaceAll(line, " ", ""))
				if err != nil {
					return err.Error()
				}
				var vals []string
				for _, k := range kinds {
					var d datum
					d, b, err = decodeDatum(k, b)
					if err != nil {
						vals = append(vals, "error: "+err.Error())
						break
					}
					vals = append(vals, formatDatum(d))
				}
				if err == nil && len(b) > 0 {
					vals = append(vals, "rest "+spacedHex(b))
				}
				fmt.Fprintf(&out, "%s\n  %s\n", line, strings.Join(vals, ", "))
			}
		default:
			return "unknown command " + td.Cmd
		}
		return out.String()
	})
}

func spacedHex(b []byte) string {
	var sb strings.Builder
	for i, c := range b {
		if i > 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "%02x", c)
	}
	return sb.String()
}

// formatDatum prints a datum in the literal syntax parseTuple reads.
func formatDatum(d datum) string {
	switch {
	case d.null:
		return "null"
	case d.max:
		return "max"
	}
	v := d.String()
	switch d.kind {
	case kindFloat64:
		v = strconv.FormatFloat(d.f, 'g', -1, 64)
	case kindBytes:
		v = strconv.Quote(string(d.s))
	}
	return d.kind.String() + " " + v
}

func parseKind(s string) (kind, error) {
	for k := range numKinds {
		if strings.EqualFold(k.String(), s) {
			return k, nil
		}
	}
	return 0, fmt.Errorf("unknown type %q", s)
}

// parseTuple parses "type literal, type literal, ...", splitting on commas
// outside quoted strings.
func parseTuple(line string) ([]datum, error) {
	var parts []string
	start, quoted := 0, false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\\' && quoted:
			i++
		case c == '"':
			quoted = !quoted
		case c == ',' && !quoted:
			parts = append(parts, line[start:i])
			start = i + 1
		}
	}
	parts = append(parts, line[start:])

	tuple := make([]datum, len(parts))
	for i, p := range parts {
		typ, lit, _ := strings.Cut(strings.TrimSpace(p), " ")
		switch typ {
		case "null":
			tuple[i] = datum{null: true}
			continue
		case "max":
			tuple[i] = datum{max: true}
			continue
		}
		k, err := parseKind(typ)
		if err != nil {
			return nil, err
		}
		d := datum{kind: k}
		switch k {
		case kindBool:
			d.b, err = strconv.ParseBool(lit)
		case kindInt64:
			d.i, err = strconv.ParseInt(lit, 10, 64)
		case kindUint64:
			d.u, err = strconv.ParseUint(lit, 10, 64)
		case kindFloat64:
			if lit == "-0" {
				d.f = math.Copysign(0, -1)
			} else {
				d.f, err = strconv.ParseFloat(lit, 64)
			}
		case kindBytes:
			var s string
			s, err = strconv.Unquote(lit)
			d.s = []byte(s)
		default:
			d.d, err = parseDecimal(lit)
		}
		if err != nil {
			return nil, fmt.Errorf("column %d (%s): %v", i+1, p, err)
		}
		tuple[i] = d
	}
	return tuple, nil
}

func parseDecimal(s string) (Decimal, error) {
	var d Decimal
	if rest, ok := strings.CutPrefix(s, "-"); ok {
		d.Neg, s = true, rest
	}
	switch s {
	case "NaN":
		return Decimal{Form: DecimalNaN}, nil
	case "Infinity":
		d.Form = DecimalInfinite
		return d, nil
	}
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	e := int64(0)
	if hasExp {
		var err error
		if e, err = strconv.ParseInt(exp, 10, 32); err != nil {
			return d, err
		}
	}
	whole, frac, _ := strings.Cut(mant, ".")
	d.Coeff = whole + frac
	e -= int64(len(frac))
	if e < math.MinInt32 || e > math.MaxInt32 || strings.Trim(d.Coeff, "0123456789") != "" {
		return d, fmt.Errorf("bad decimal %q", s)
	}
	d.Exponent = int32(e)
	return d, nil
}
