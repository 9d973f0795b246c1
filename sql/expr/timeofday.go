package expr

import (
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// PostgreSQL's time of day (types/time.go) in expressions: its
// operators, casts that read the session's zone, and date_part.
//
//	time ± interval   → time       (the interval's time part, wrapping at midnight)
//	interval + time   → time
//	time − time       → interval   (microseconds)
//	date + time, time + date, date − time → timestamp

// timeOfDayArithType is ArithType for operands of which one is a time;
// ok false when neither is.
func timeOfDayArithType(op ArithOp, lf, rf types.Family) (t types.Type, valid, ok bool) {
	switch {
	case lf == types.Time && rf == types.Interval:
		return types.TypeTime, op == Add || op == Sub, true
	case lf == types.Interval && rf == types.Time:
		return types.TypeTime, op == Add, true
	case lf == types.Time && rf == types.Time:
		return types.TypeInterval, op == Sub, true
	case lf == types.Date && rf == types.Time:
		return types.TypeTimestamp, op == Add || op == Sub, true
	case lf == types.Time && rf == types.Date:
		return types.TypeTimestamp, op == Add, true
	case lf == types.Time || rf == types.Time:
		return types.Type{}, false, true
	}
	return types.Type{}, false, false
}

// timeOfDayArith evaluates the operators above; ok false when neither
// operand is a time.
func timeOfDayArith(op ArithOp, l, r types.Value) (v types.Value, ok bool, err error) {
	lf, rf := l.Family(), r.Family()
	sign := int64(1)
	if op == Sub {
		sign = -1
	}
	switch {
	case lf == types.Time && rf == types.Interval:
		return types.NewTime(types.AddTimeInterval(l.Int(), r, sign)), true, nil
	case lf == types.Interval && rf == types.Time:
		return types.NewTime(types.AddTimeInterval(r.Int(), l, 1)), true, nil
	case lf == types.Time && rf == types.Time:
		return types.NewInterval(l.Int() - r.Int()), true, nil
	case lf == types.Date && rf == types.Time, lf == types.Time && rf == types.Date:
		d, t := l, r
		if lf == types.Time {
			d, t = r, l
		}
		if d.IsInfiniteTime() {
			return types.NewTimestamp(d.Micros()), true, nil
		}
		m, fits := checkedMicros(op, d.Micros(), t.Int())
		if !fits || types.IsInfinite(m) {
			return types.Value{}, true, timestampOutOfRange()
		}
		return types.NewTimestamp(m), true, nil
	}
	return types.Value{}, false, nil
}

// timeOfDayPart is date_part and EXTRACT on a time: the clock's fields and
// its seconds since midnight (epoch); the date's fields are 0A000 and
// unknown units 22023, as PostgreSQL's time_part_common.
func timeOfDayPart(field string, v types.Value) (types.Value, error) {
	us := v.Int()
	sec := us % 60e6 // seconds with their fraction, in microseconds
	var x float64
	switch types.UnitAlias(field) {
	case "microseconds":
		x = float64(sec)
	case "milliseconds":
		x = float64(sec) / 1e3
	case "second":
		x = float64(sec) / 1e6
	case "minute":
		x = float64(us / 60e6 % 60)
	case "hour":
		x = float64(us / 3600e6)
	case "epoch":
		x = float64(us) / 1e6
	case "day", "week", "month", "quarter", "year", "decade", "century", "millennium", "dow", "isodow", "doy",
		"isoyear", "julian", "timezone", "timezone_hour", "timezone_minute":
		return types.Value{}, sqlerr.New(sqlerr.FeatureNotSupported, "unit %q not supported for type time without time zone", field)
	default:
		return types.Value{}, unitNotRecognized(field, "time without time zone")
	}
	return types.NewDouble(x), nil
}

// timeOfDayZoneCast converts to and from time where the session matters:
// timestamptz::time is the time of day on the session zone's wall clock,
// and text 'now' is the time of day there. ok is false for other casts.
func timeOfDayZoneCast(v types.Value, to types.Type, z *time.Location) (types.Value, bool, error) {
	ff, tf := v.Family(), to.Family
	switch {
	case ff == types.TimestampTZ && tf == types.Time:
		if v.IsInfiniteTime() {
			return types.NullValue, true, nil
		}
		return types.AdjustTime(types.NewTime(types.TimeOfDay(types.WallMicros(v.Micros(), z))), to.Qual), true, nil
	case tf == types.Time && (ff == types.Utf8 || ff == types.String || ff == types.Unknown):
		us, err := types.ParseTime(v.Str(), z)
		if err != nil {
			return types.Value{}, true, err
		}
		return types.AdjustTime(types.NewTime(us), to.Qual), true, nil
	}
	return types.Value{}, false, nil
}
