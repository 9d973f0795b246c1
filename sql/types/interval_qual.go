package types

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// Qual is the type modifier of an interval or a time: PostgreSQL's
// interval field qualifier (INTERVAL DAY TO SECOND) and the precision of
// the seconds (interval(3), INTERVAL SECOND(2), time(0)). The zero Qual
// is none: every field, microseconds.
//
//	bits 0..5   the fields of an interval qualifier (QualYear ...), 0: all
//	bit  6      a precision is set
//	bits 8..10  the precision, 0..6
//
// A qualified interval keeps PostgreSQL's three fields; the qualifier
// decides what a bare number in the input means ('1' DAY is a day) and
// which fields survive (AdjustInterval: DAY TO MINUTE drops the seconds,
// YEAR whole years only), and the precision rounds the seconds.
type Qual uint16

// The fields of an interval qualifier.
const (
	QualYear Qual = 1 << iota
	QualMonth
	QualDay
	QualHour
	QualMinute
	QualSecond
	qualPrecSet
	qualFields = QualYear | QualMonth | QualDay | QualHour | QualMinute | QualSecond
)

// MaxTimePrecision is the largest precision of an interval or a time:
// PivotDB, as PostgreSQL, keeps microseconds.
const MaxTimePrecision = 6

// Fields returns the qualifier's fields, 0 for all.
func (q Qual) Fields() Qual { return q & qualFields }

// Precision returns the precision of the seconds and whether one is set.
func (q Qual) Precision() (int, bool) { return int(q>>8) & 7, q&qualPrecSet != 0 }

// WithPrecision returns q with the seconds rounded to p digits (p is
// clamped to 0..MaxTimePrecision).
func (q Qual) WithPrecision(p int) Qual {
	p = max(0, min(p, MaxTimePrecision))
	return q&^(7<<8) | qualPrecSet | Qual(p)<<8
}

// intervalQualNames are the qualifiers PostgreSQL's grammar takes, as the
// words after INTERVAL.
var intervalQualNames = map[string]Qual{
	"year":             QualYear,
	"month":            QualMonth,
	"day":              QualDay,
	"hour":             QualHour,
	"minute":           QualMinute,
	"second":           QualSecond,
	"year to month":    QualYear | QualMonth,
	"day to hour":      QualDay | QualHour,
	"day to minute":    QualDay | QualHour | QualMinute,
	"day to second":    QualDay | QualHour | QualMinute | QualSecond,
	"hour to minute":   QualHour | QualMinute,
	"hour to second":   QualHour | QualMinute | QualSecond,
	"minute to second": QualMinute | QualSecond,
}

// IntervalQualWords reports whether the lower-case words (after INTERVAL)
// are one of PostgreSQL's interval field qualifiers.
func IntervalQualWords(words string) bool {
	_, ok := intervalQualNames[words]
	return ok
}

// qualText spells q's fields as PostgreSQL's format_type does ("day to
// second"), "" for all fields.
func (q Qual) fieldsText() string {
	f := q.Fields()
	for name, m := range intervalQualNames {
		if m == f {
			return name
		}
	}
	return ""
}

// parseIntervalType reads "interval", "interval(p)", "interval day to
// second" and "interval day to second(p)" (lower-case words after
// "interval", the arguments apart), as PostgreSQL's grammar takes them: a
// precision only with SECOND or without fields.
func parseIntervalType(words string, args []int) (Type, error) {
	t := TypeInterval
	rest := strings.TrimSpace(strings.TrimPrefix(words, "interval"))
	if rest != "" {
		f, ok := intervalQualNames[rest]
		if !ok {
			return Type{}, sqlerr.New(sqlerr.SyntaxError, "invalid interval qualifier %q", rest)
		}
		t.Qual = f
	}
	switch len(args) {
	case 0:
	case 1:
		if rest != "" && t.Qual&QualSecond == 0 {
			return Type{}, sqlerr.New(sqlerr.SyntaxError, "interval precision is only allowed with SECOND")
		}
		if args[0] < 0 {
			return Type{}, sqlerr.New(sqlerr.InvalidParameterValue, "INTERVAL(%d) precision must not be negative", args[0])
		}
		// PostgreSQL warns and takes 6 for a larger precision.
		t.Qual = t.Qual.WithPrecision(args[0])
	default:
		return Type{}, sqlerr.New(sqlerr.SyntaxError, "invalid INTERVAL type modifier")
	}
	return t, nil
}

// intervalTypeText is the PostgreSQL spelling of an interval type with
// its qualifier: "interval", "interval(3)", "interval day to second(2)".
func intervalTypeText(name string, q Qual) string {
	s := name
	if f := q.fieldsText(); f != "" {
		s += " " + f
	}
	if p, ok := q.Precision(); ok {
		s += "(" + string(rune('0'+p)) + ")"
	}
	return s
}

// IntervalTypmod is the atttypmod PostgreSQL records for an interval with
// qualifier q (INTERVAL_TYPMOD: the field mask in the high 16 bits, the
// precision in the low, 0xFFFF for either when unset), -1 for none.
func IntervalTypmod(q Qual) int32 {
	if q == 0 {
		return -1
	}
	const (
		pgMonth  = 1 << 1
		pgYear   = 1 << 2
		pgDay    = 1 << 3
		pgHour   = 1 << 10
		pgMinute = 1 << 11
		pgSecond = 1 << 12
	)
	rng := int32(0x7FFF)
	if f := q.Fields(); f != 0 {
		rng = 0
		for _, b := range []struct {
			q  Qual
			pg int32
		}{{QualYear, pgYear}, {QualMonth, pgMonth}, {QualDay, pgDay}, {QualHour, pgHour}, {QualMinute, pgMinute}, {QualSecond, pgSecond}} {
			if f&b.q != 0 {
				rng |= b.pg
			}
		}
	}
	prec := int32(0xFFFF)
	if p, ok := q.Precision(); ok {
		prec = int32(p)
	}
	return rng<<16 | prec
}

// IntervalFieldsText is information_schema's interval_type: "DAY TO
// SECOND(2)", "" for all fields.
func IntervalFieldsText(q Qual) string {
	if q.Fields() == 0 {
		return ""
	}
	return strings.ToUpper(intervalTypeText("", q)[1:])
}

// bareUnit is the unit of a number without one when it is the last field
// of the input: the qualifier's last field (seconds without one), as
// PostgreSQL's DecodeInterval takes it.
func (q Qual) bareUnit() string {
	f := q.Fields()
	switch {
	case f == 0 || f&QualSecond != 0:
		return "second"
	case f&QualMinute != 0:
		return "minute"
	case f&QualHour != 0:
		return "hour"
	case f&QualDay != 0:
		return "day"
	case f&QualMonth != 0:
		return "month"
	}
	return "year"
}

// intervalScales are 10^(6-p): the microseconds in the last digit kept
// by precision p.
var intervalScales = [MaxTimePrecision + 1]int64{1e6, 1e5, 1e4, 1e3, 100, 10, 1}

// roundMicros rounds us to precision p, halves away from zero.
func roundMicros(us int64, p int) int64 {
	sc := intervalScales[p]
	if sc == 1 {
		return us
	}
	if us >= 0 {
		return (us + sc/2) / sc * sc
	}
	return -((-us + sc/2) / sc * sc)
}

// AdjustInterval applies qualifier q to v as PostgreSQL's
// AdjustIntervalForTypmod does: fields below the qualifier's last are
// dropped (truncated toward zero: '1 day 02:03:04' DAY TO MINUTE is 1 day
// 02:03), YEAR keeps whole years, and the seconds are rounded to the
// precision.
func AdjustInterval(v Value, q Qual) (Value, error) {
	if q == 0 || v.fam != Interval {
		return v, nil
	}
	months, days, us := v.IntervalParts()
	switch q.Fields() {
	case QualYear:
		months, days, us = months/12*12, 0, 0
	case QualMonth, QualYear | QualMonth:
		days, us = 0, 0
	case QualDay:
		us = 0
	case QualHour, QualDay | QualHour:
		us = us / microsPerHour * microsPerHour
	case QualMinute, QualDay | QualHour | QualMinute, QualHour | QualMinute:
		us = us / 60e6 * 60e6
	}
	if p, ok := q.Precision(); ok {
		us = roundMicros(us, p)
	}
	return NewIntervalParts(months, days, us), nil
}

// ParseIntervalTyped parses interval text for type t (its qualifier
// decides what a bare number means, then AdjustInterval) in IntervalStyle
// style.
func ParseIntervalTyped(t Type, s string, style uint8) (Value, error) {
	v, err := parseIntervalQual(s, style, t.Qual)
	if err != nil {
		return Value{}, err
	}
	return AdjustInterval(v, t.Qual)
}

// IntervalTypmodText is format_type's spelling of an interval with
// PostgreSQL typmod mod: "interval", "interval(3)", "interval day to
// second(2)".
func IntervalTypmodText(mod int64) string {
	return intervalTypeText("interval", QualFromIntervalTypmod(mod))
}

// QualFromIntervalTypmod is the qualifier of PostgreSQL's interval typmod
// mod (IntervalTypmod's inverse); 0 for -1 or a typmod it does not know.
func QualFromIntervalTypmod(mod int64) Qual {
	if mod < 0 {
		return 0
	}
	for q := range intervalQualNames {
		for p := -1; p <= MaxTimePrecision; p++ {
			qq := intervalQualNames[q]
			if p >= 0 {
				qq = qq.WithPrecision(p)
			}
			if int64(IntervalTypmod(qq)) == mod {
				return qq
			}
		}
	}
	for p := 0; p <= MaxTimePrecision; p++ {
		if q := Qual(0).WithPrecision(p); int64(IntervalTypmod(q)) == mod {
			return q
		}
	}
	return 0
}
