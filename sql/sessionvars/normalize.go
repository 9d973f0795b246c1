package sessionvars

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/txnmode"
	"github.com/pivotdb/pivotdb/sql/types"
)

// oneOf accepts only the listed values (PivotDB supports one).
func oneOf(allowed ...string) func(string) (string, error) {
	return func(v string) (string, error) {
		for _, a := range allowed {
			if strings.EqualFold(strings.TrimSpace(v), a) {
				return a, nil
			}
		}
		return "", sqlerr.New(sqlerr.InvalidParameterValue, "invalid value %q: only %s is supported", v, strings.Join(allowed, ", "))
	}
}

func normalizeEncoding(v string) (string, error) {
	switch strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(v), "-", "")) {
	case "UTF8", "UNICODE":
		return "UTF8", nil
	}
	return "", sqlerr.New(sqlerr.FeatureNotSupported, "client encoding %q is not supported yet: PivotDB speaks UTF8", v)
}

func normalizeDateStyle(v string) (string, error) { return MergeDateStyle("ISO, MDY", v) }

// MergeDateStyle applies a DateStyle value to the current one as
// PostgreSQL's check_datestyle does: a comma-separated list of an output
// style (ISO, SQL, Postgres, German) and a field order (YMD; DMY, Euro,
// European; MDY, US, NonEuro, NonEuropean), either of which may be left
// out to keep the current one; German alone also sets DMY; Default is
// ISO, MDY. The result is canonical ("SQL, DMY").
func MergeDateStyle(cur, v string) (string, error) {
	style, order := "ISO", "MDY"
	if c1, c2, ok := strings.Cut(cur, ", "); ok {
		style, order = c1, c2
	}
	bad := func(detail string) error {
		e := sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"DateStyle\": %q", v)
		e.Detail = detail
		return e
	}
	haveStyle, haveOrder := false, false
	setStyle := func(s string) bool {
		if haveStyle && style != s {
			return false
		}
		style, haveStyle = s, true
		return true
	}
	setOrder := func(o string) bool {
		if haveOrder && order != o {
			return false
		}
		order, haveOrder = o, true
		return true
	}
	parts := strings.Split(v, ",")
	for _, part := range parts {
		tok := strings.TrimSpace(part)
		if tok == "" || strings.ContainsAny(tok, " \t") {
			return "", bad("List syntax is invalid.")
		}
		ok := true
		switch strings.ToUpper(tok) {
		case "ISO":
			ok = setStyle("ISO")
		case "SQL":
			ok = setStyle("SQL")
		case "POSTGRES":
			ok = setStyle("Postgres")
		case "GERMAN":
			ok = setStyle("German")
			if !haveOrder {
				order = "DMY"
			}
		case "YMD":
			ok = setOrder("YMD")
		case "DMY", "EURO", "EUROPEAN":
			ok = setOrder("DMY")
		case "MDY", "US", "NONEURO", "NONEUROPEAN":
			ok = setOrder("MDY")
		case "DEFAULT":
			ok = setStyle("ISO") && setOrder("MDY")
		default:
			return "", bad(fmt.Sprintf("Unrecognized key word: %q.", tok))
		}
		if !ok {
			return "", bad("Conflicting \"datestyle\" specifications.")
		}
	}
	return style + ", " + order, nil
}

// normalizeIntervalStyle accepts PostgreSQL's four IntervalStyle values.
func normalizeIntervalStyle(v string) (string, error) {
	switch s := strings.ToLower(strings.TrimSpace(v)); s {
	case "postgres", "postgres_verbose", "sql_standard", "iso_8601":
		return s, nil
	}
	e := sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"IntervalStyle\": %q", v)
	e.Hint = "Available values: postgres, postgres_verbose, sql_standard, iso_8601."
	return "", e
}

// Style is how this session prints dates, times and intervals and reads
// ambiguous numeric dates (DateStyle and IntervalStyle).
func (v *Vars) Style() types.Style {
	// Read directly: neither is a transaction setting, and every
	// statement asks.
	return StyleOf(v.values["datestyle"], v.values["intervalstyle"])
}

// StyleOf packs canonical DateStyle and IntervalStyle values.
func StyleOf(dateStyle, intervalStyle string) types.Style {
	style, order, _ := strings.Cut(dateStyle, ", ")
	var d, o, i uint8
	switch style {
	case "SQL":
		d = types.DateSQL
	case "Postgres":
		d = types.DatePostgres
	case "German":
		d = types.DateGerman
	}
	switch order {
	case "DMY":
		o = types.OrderDMY
	case "YMD":
		o = types.OrderYMD
	}
	switch intervalStyle {
	case "postgres_verbose":
		i = types.IntervalPostgresVerbose
	case "sql_standard":
		i = types.IntervalSQLStandard
	case "iso_8601":
		i = types.IntervalISO8601
	}
	return types.MakeStyle(d, o, i)
}

// normalizeTimeZone accepts what types.LoadZone resolves: UTC, a tz
// database name, hours east ("3"), a POSIX offset ("+03:00").
func normalizeTimeZone(v string) (string, error) {
	tz := strings.TrimSpace(v)
	switch strings.ToUpper(tz) {
	case "UTC", "GMT", "Z", "ZULU", "ETC/UTC", "UCT", "+00", "+00:00", "0":
		return "UTC", nil
	}
	if _, err := types.LoadZone(tz); err != nil {
		return "", err
	}
	return tz, nil
}

func normalizeExtraFloatDigits(v string) (string, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < -15 || n > 3 {
		return "", sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"extra_float_digits\": %q", v)
	}
	if n < 1 {
		// Shortest round-trip output is what n >= 1 means in PostgreSQL
		// 12+; rounding to fewer digits is not implemented.
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "extra_float_digits below 1 is not supported yet")
	}
	return strconv.Itoa(n), nil
}

// isolationOf validates an isolation level for setting name: PostgreSQL's
// four names (22023 otherwise), of which the transaction core must run the
// level (txnmode.Implemented, 0A000 otherwise). READ UNCOMMITTED is READ
// COMMITTED, as in PostgreSQL.
func isolationOf(name string) func(string) (string, error) {
	return func(v string) (string, error) {
		l, ok := txnmode.ParseIsolation(v)
		if !ok {
			return "", txnmode.InvalidIsolation(name, v)
		}
		if err := txnmode.Implemented(l); err != nil {
			return "", err
		}
		return l.String(), nil
	}
}

// normalizeDuration parses a time setting: a number of milliseconds or a
// number with a unit ("5s", "100ms", "1min").
func normalizeDuration(v string) (string, error) {
	s := strings.TrimSpace(strings.ToLower(v))
	bad := sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for a time setting: %q", v)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	n, err := strconv.ParseFloat(s[:i], 64)
	if err != nil || n < 0 {
		return "", bad
	}
	unit := strings.TrimSpace(s[i:])
	mul := map[string]float64{"": 1, "ms": 1, "s": 1000, "sec": 1000, "min": 60000, "h": 3600000, "d": 86400000}
	m, ok := mul[unit]
	if !ok {
		return "", bad
	}
	return strconv.FormatInt(int64(n*m), 10), nil
}

func normalizeNonNegativeInt(v string) (string, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err != nil || n < 0 {
		return "", sqlerr.New(sqlerr.InvalidParameterValue, "invalid value %q: a non-negative integer is expected", v)
	}
	return strconv.FormatInt(n, 10), nil
}

// The values of sql_dialect.
const (
	DialectYQL        = "yql"
	DialectPostgreSQL = "postgresql"
)

func normalizeDialect(v string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case DialectYQL:
		return DialectYQL, nil
	case DialectPostgreSQL, "postgres", "pg":
		return DialectPostgreSQL, nil
	}
	return "", &sqlerr.Error{Code: sqlerr.InvalidParameterValue,
		Message: fmt.Sprintf("invalid value for parameter \"sql_dialect\": %q", v),
		Hint:    "Available values: yql, postgresql."}
}
