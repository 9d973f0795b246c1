package expr

import (
	"math"
	"strconv"
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
	case lf == types.TimeTZ && rf == types.Interval:
		return types.TypeTimeTZ, op == Add || op == Sub, true
	case lf == types.Interval && rf == types.TimeTZ:
		return types.TypeTimeTZ, op == Add, true
	case lf == types.TimeTZ || rf == types.TimeTZ:
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
	case lf == types.TimeTZ && rf == types.Interval:
		return types.AddTimeTZInterval(l, r, sign), true, nil
	case lf == types.Interval && rf == types.TimeTZ:
		return types.AddTimeTZInterval(r, l, 1), true, nil
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

// timeTZPart is date_part on a timetz (PostgreSQL's timetz_part): the
// clock's fields of its local time, the zone's displacement east in
// seconds (timezone) and its hours and minutes, and epoch, the UTC time
// of day in seconds.
func timeTZPart(field string, v types.Value) (types.Value, error) {
	us, zone := v.TimeTZParts()
	east := -int64(zone)
	switch types.UnitAlias(field) {
	case "timezone":
		return types.NewDouble(float64(east)), nil
	case "timezone_hour":
		return types.NewDouble(float64(east / 3600)), nil
	case "timezone_minute":
		return types.NewDouble(float64(east / 60 % 60)), nil
	case "epoch":
		return types.NewDouble(float64(us+int64(zone)*1e6) / 1e6), nil
	case "day", "week", "month", "quarter", "year", "decade", "century", "millennium", "dow", "isodow", "doy",
		"isoyear", "julian":
		return types.Value{}, sqlerr.New(sqlerr.FeatureNotSupported, "unit %q not supported for type time with time zone", field)
	case "microseconds", "milliseconds", "second", "minute", "hour":
		return timeOfDayPart(field, types.NewTime(us))
	}
	return types.Value{}, unitNotRecognized(field, "time with time zone")
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
	case ff == types.TimestampTZ && tf == types.TimeTZ:
		if v.IsInfiniteTime() {
			return types.NullValue, true, nil
		}
		return types.AdjustTimeTZ(types.TimeTZAt(v.Micros(), z), to.Qual), true, nil
	case ff == types.Time && tf == types.TimeTZ:
		return types.AdjustTimeTZ(types.TimeToTimeTZ(v.Int(), z), to.Qual), true, nil
	case tf == types.TimeTZ && (ff == types.Utf8 || ff == types.String || ff == types.Unknown):
		r, err := types.ParseTimeTZ(v.Str(), z)
		if err != nil {
			return types.Value{}, true, err
		}
		return types.AdjustTimeTZ(r, to.Qual), true, nil
	}
	return types.Value{}, false, nil
}

func init() {
	register(&funcDef{3, 3, buildMakeTime}, "make_time")
	register(&funcDef{0, 1, buildLocalTime}, "localtime")
	register(&funcDef{0, 1, buildCurrentTime}, "current_time")
}

// buildMakeTime: make_time(hour, min, sec double precision), PostgreSQL's
// checks included (22008 past 24:00:00).
func buildMakeTime(b *Builder, name string, args []Expr) (Expr, error) {
	for i := range args {
		var err error
		if i == 2 {
			err = b.numArg(args, i, types.TypeDouble)
		} else {
			err = b.intArg(args, i)
		}
		if err != nil {
			return nil, err
		}
	}
	return newFunc(name, types.TypeTime, args, true, func(_ *Context, a []types.Value) (types.Value, error) {
		h, m, sec := a[0].Int(), a[1].Int(), a[2].AsFloat()
		us := h*3600e6 + m*60e6 + int64(math.Round(sec*1e6))
		if h < 0 || m < 0 || m > 59 || sec < 0 || sec > 60 || math.IsNaN(sec) || us > 86400e6 {
			// PostgreSQL's "%d:%02d:%02g".
			secText := strconv.FormatFloat(sec, 'g', -1, 64)
			if len(secText) < 2 {
				secText = "0" + secText
			}
			return types.Value{}, sqlerr.New(sqlerr.DatetimeFieldOverflow, "time field value out of range: %d:%02d:%s", h, m, secText)
		}
		return types.NewTime(us), nil
	}), nil
}

// buildCurrentTime: current_time and current_time(p), a timetz: the
// statement's start on the session zone's clock, with that zone's offset.
func buildCurrentTime(b *Builder, name string, args []Expr) (Expr, error) {
	q, err := clockPrecision(name, args)
	if err != nil {
		return nil, err
	}
	f := newFunc(name, types.Type{Family: types.TimeTZ, Qual: q}, nil, true, func(c *Context, _ []types.Value) (types.Value, error) {
		now := time.Time{}
		if c != nil {
			now = c.Now
		}
		if now.IsZero() {
			now = time.Now()
		}
		return types.AdjustTimeTZ(types.TimeTZAt(now.UnixMicro(), c.zone()), q), nil
	})
	f.Deterministic = false
	return f, nil
}

// clockPrecision reads the constant precision of localtime(p) and
// current_time(p).
func clockPrecision(name string, args []Expr) (types.Qual, error) {
	q := types.Qual(0)
	if len(args) == 1 {
		k, ok := args[0].(*Const)
		if !ok || !k.Value.Family().IsInteger() {
			return q, sqlerr.New(sqlerr.SyntaxError, "%s takes a constant precision", name)
		}
		if k.Value.Int() < 0 {
			return q, sqlerr.New(sqlerr.InvalidParameterValue, "TIME(%d) precision must not be negative", k.Value.Int())
		}
		q = q.WithPrecision(int(k.Value.Int()))
	}
	return q, nil
}

// buildLocalTime: localtime and localtime(p), the time of day on the
// session zone's wall clock at the statement's start, rounded to p.
func buildLocalTime(b *Builder, name string, args []Expr) (Expr, error) {
	q := types.Qual(0)
	if len(args) == 1 {
		k, ok := args[0].(*Const)
		if !ok || !k.Value.Family().IsInteger() {
			return nil, sqlerr.New(sqlerr.SyntaxError, "localtime takes a constant precision")
		}
		if k.Value.Int() < 0 {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "TIME(%d) precision must not be negative", k.Value.Int())
		}
		q = q.WithPrecision(int(k.Value.Int()))
	}
	f := newFunc(name, types.Type{Family: types.Time, Qual: q}, nil, true, func(c *Context, _ []types.Value) (types.Value, error) {
		now := time.Time{}
		if c != nil {
			now = c.Now
		}
		if now.IsZero() {
			now = time.Now()
		}
		return types.AdjustTime(types.NewTime(types.TimeOfDay(types.WallMicros(now.UnixMicro(), c.zone()))), q), nil
	})
	f.Deterministic = false
	return f, nil
}
