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

func normalizeDateStyle(v string) (string, error) {
	style, order := "ISO", "MDY"
	for _, part := range strings.Split(v, ",") {
		switch p := strings.ToUpper(strings.TrimSpace(part)); p {
		case "ISO":
			style = "ISO"
		case "MDY":
			order = p
		case "DMY", "YMD", "EURO", "EUROPEAN":
			// Numeric dates ('1/8/1999') are read month first: the
			// order is not yet passed down to where text becomes a date.
			return "", sqlerr.New(sqlerr.FeatureNotSupported,
				"DateStyle order %s is not supported yet: numeric dates are read month first (MDY)", p)
		case "US", "NONEURO", "NONEUROPEAN":
			order = "MDY"
		default:
			return "", sqlerr.New(sqlerr.FeatureNotSupported, "DateStyle %q is not supported yet: dates are printed in ISO style", strings.TrimSpace(part))
		}
	}
	return style + ", " + order, nil
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
