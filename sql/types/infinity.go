package types

import (
	"math"
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// PostgreSQL's 'infinity' and '-infinity' for date, timestamp and
// timestamptz: the largest and smallest int64 (as PostgreSQL uses
// INT64_MAX and INT64_MIN, and INT32_MAX/MIN for dates), so they sort
// after and before every finite time in comparisons and in keys with no
// special case. A Date's i is then ±infinity in days, and micros() maps
// it to the timestamp infinities. Adding an interval or days to an
// infinite time leaves it as it is; subtracting two times where one is
// infinite is an error (22008), as in PostgreSQL 15. YQL's Datetime and
// PostgreSQL 15's interval have no infinity.
const (
	// InfinityMicros and NegInfinityMicros are the infinite times.
	InfinityMicros    int64 = math.MaxInt64
	NegInfinityMicros int64 = math.MinInt64
)

// IsInfinite reports whether i (a Date's days or a Timestamp's micros) is
// one of the infinities.
func IsInfinite(i int64) bool { return i == math.MaxInt64 || i == math.MinInt64 }

// IsInfiniteTime reports whether v is an infinite date or timestamp.
func (v Value) IsInfiniteTime() bool {
	switch v.fam {
	case Date, Timestamp, TimestampTZ:
		return IsInfinite(v.i)
	}
	return false
}

func infinityText(i int64) (string, bool) {
	switch i {
	case math.MaxInt64:
		return "infinity", true
	case math.MinInt64:
		return "-infinity", true
	}
	return "", false
}

// parseInfinity reads the special inputs 'infinity', '+infinity' and
// '-infinity' (any case, blanks around).
func parseInfinity(s string) (int64, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "infinity", "+infinity":
		return math.MaxInt64, true
	case "-infinity":
		return math.MinInt64, true
	}
	return 0, false
}

// InfiniteSubtractError is PostgreSQL 15's error for date − date and
// timestamp − timestamp when one is infinite.
func InfiniteSubtractError(what string) error {
	return sqlerr.New(sqlerr.DatetimeValueOutOfRange, "cannot subtract infinite %s", what)
}
