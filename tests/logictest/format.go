package logictest

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
)

// FormatValue renders one value the server sent (as text; nil is NULL) for a
// column of type typ ('I', 'R' or 'T'), as the reference runner prints it.
func FormatValue(typ byte, v []byte, isNull bool) string {
	if isNull {
		return "NULL"
	}
	switch typ {
	case 'I':
		return formatInt(string(v))
	case 'R':
		f := toFloat(string(v))
		if f == 0 {
			f = 0 // no "-0.000"
		}
		return strconv.FormatFloat(f, 'f', 3, 64)
	default:
		if len(v) == 0 {
			return "(empty)"
		}
		b := make([]byte, len(v))
		for i, c := range v {
			if c < ' ' || c > '~' {
				c = '@'
			}
			b[i] = c
		}
		return string(b)
	}
}

// formatInt converts text to an integer the way SQLite's sqlite3_column_int
// does (without the 32-bit wrap): integers as themselves, reals and numerics
// truncated toward zero, other text by its longest numeric prefix, else 0.
// PostgreSQL booleans "t"/"true"/"f"/"false" become 1/0.
func formatInt(s string) string {
	switch s {
	case "t", "true":
		return "1"
	case "f", "false":
		return "0"
	}
	if isIntegerLiteral(s) {
		var z big.Int
		if _, ok := z.SetString(strings.TrimPrefix(s, "+"), 10); ok {
			return z.String()
		}
	}
	num := numericPrefix(s)
	if num == "" {
		return "0"
	}
	if isIntegerLiteral(num) {
		var z big.Int
		if _, ok := z.SetString(strings.TrimPrefix(num, "+"), 10); ok {
			return z.String()
		}
	}
	// A real or numeric: truncate toward zero. Use exact decimal arithmetic
	// for plain decimals so that large numerics do not lose digits.
	if !strings.ContainsAny(num, "eE") {
		intPart := num
		if i := strings.IndexByte(num, '.'); i >= 0 {
			intPart = num[:i]
		}
		switch intPart {
		case "", "+", "-":
			return "0"
		}
		var z big.Int
		if _, ok := z.SetString(strings.TrimPrefix(intPart, "+"), 10); ok {
			return z.String()
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil && !isRangeErr(err) {
		return "0"
	}
	switch {
	case math.IsNaN(f):
		return "0"
	case f >= math.MaxInt64:
		return strconv.FormatInt(math.MaxInt64, 10)
	case f <= math.MinInt64:
		return strconv.FormatInt(math.MinInt64, 10)
	}
	return strconv.FormatInt(int64(f), 10)
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// toFloat converts text to a float64 the way sqlite3_column_double converts
// text: by its longest numeric prefix, else 0. Booleans become 1/0.
func toFloat(s string) float64 {
	switch s {
	case "t", "true":
		return 1
	case "f", "false":
		return 0
	}
	num := numericPrefix(s)
	if num == "" {
		return 0
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil && !isRangeErr(err) {
		return 0
	}
	return f
}

func isIntegerLiteral(s string) bool {
	if s == "" {
		return false
	}
	i := 0
	if s[0] == '+' || s[0] == '-' {
		i++
	}
	if i == len(s) {
		return false
	}
	for ; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// numericPrefix returns the longest prefix of s (after leading whitespace)
// of the form [+-]digits[.digits][e[+-]digits] that contains at least one
// digit, or "".
func numericPrefix(s string) string {
	s = strings.TrimLeft(s, " \t\n\r\f\v")
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return ""
	}
	end := i
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k > j {
			end = k
		}
	}
	return s[:end]
}

// SortValues sorts a flat result (rows of ncols values, row after row) in
// place as the reference runner does: rowsort orders rows by comparing their
// values left to right as byte strings; valuesort orders all values
// independently; nosort leaves them alone.
func SortValues(values []string, ncols int, mode string) {
	switch mode {
	case RowSort:
		if ncols <= 0 || len(values)%ncols != 0 {
			return
		}
		nrows := len(values) / ncols
		rows := make([][]string, nrows)
		for i := range rows {
			rows[i] = values[i*ncols : (i+1)*ncols : (i+1)*ncols]
		}
		sorted := make([][]string, nrows)
		copy(sorted, rows)
		sort.SliceStable(sorted, func(a, b int) bool {
			ra, rb := sorted[a], sorted[b]
			for c := range ra {
				if ra[c] != rb[c] {
					return ra[c] < rb[c]
				}
			}
			return false
		})
		flat := make([]string, 0, len(values))
		for _, r := range sorted {
			flat = append(flat, r...)
		}
		copy(values, flat)
	case ValueSort:
		sort.Strings(values)
	}
}

// HashValues returns the lower-case hex MD5 of the values, each followed by
// "\n" — the hash of the reference runner's "N values hashing to MD5" lines.
func HashValues(values []string) string {
	h := md5.New()
	for _, v := range values {
		h.Write([]byte(v))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// HashLine returns "N values hashing to MD5" for the values.
func HashLine(values []string) string {
	return fmt.Sprintf("%d values hashing to %s", len(values), HashValues(values))
}
