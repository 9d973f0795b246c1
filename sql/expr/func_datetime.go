package expr

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// PostgreSQL's functions on intervals and times: justify_days,
// justify_hours, justify_interval, age, date_part (EXTRACT's function
// form) and isfinite. Times with a zone (timestamptz) are taken in the
// session's TimeZone where PostgreSQL does (age, date_part), so those
// calls are not folded while binding.

func init() {
	register(&funcDef{1, 1, buildJustify(types.JustifyDays)}, "justify_days")
	register(&funcDef{1, 1, buildJustify(types.JustifyHours)}, "justify_hours")
	register(&funcDef{1, 1, buildJustify(types.JustifyInterval)}, "justify_interval")
	register(&funcDef{1, 2, buildAge}, "age")
	register(&funcDef{2, 2, buildDatePart}, "date_part")
	register(&funcDef{2, 2, buildExtract}, "pivot_extract")
	register(&funcDef{1, 1, buildIsFinite}, "isfinite")
	register(&funcDef{0, 7, buildMakeInterval}, "make_interval")
}

func buildJustify(fn func(types.Value) (types.Value, error)) func(*Builder, string, []Expr) (Expr, error) {
	return func(b *Builder, name string, args []Expr) (Expr, error) {
		if err := b.typedArg(args, 0, types.TypeInterval, func(f types.Family) bool { return f == types.Interval }); err != nil {
			return nil, err
		}
		return newFunc(name, types.TypeInterval, args, true, func(_ *Context, a []types.Value) (types.Value, error) {
			return fn(a[0])
		}), nil
	}
}

// typedArg resolves an untyped argument to t and checks the family.
func (b *Builder) typedArg(args []Expr, i int, t types.Type, ok func(types.Family) bool) error {
	e, err := b.resolve(args[i], t)
	if err != nil {
		return err
	}
	args[i] = e
	if f := e.Type().Family; ok(f) || f == types.Null {
		return nil
	}
	return errSignature
}

func isTimeFamily(f types.Family) bool { return f.IsTime() }

// wallMicros is a time as the wall clock PostgreSQL computes fields of:
// a timestamptz in the session's zone, the others as they are.
func wallMicros(c *Context, v types.Value) int64 {
	if v.Family() == types.TimestampTZ && !v.IsInfiniteTime() {
		return types.WallMicros(v.Micros(), c.zone())
	}
	return v.Micros()
}

// buildAge: age(a, b) is the symbolic difference in years, months and
// days; age(a) is age(current_date, a) (midnight of today in the
// session's zone).
func buildAge(b *Builder, name string, args []Expr) (Expr, error) {
	for i := range args {
		if err := b.typedArg(args, i, types.TypeTimestamp, isTimeFamily); err != nil {
			return nil, err
		}
	}
	f := newFunc(name, types.TypeInterval, args, true, func(c *Context, a []types.Value) (types.Value, error) {
		var x, y int64
		if len(a) == 1 {
			now := time.Time{}
			if c != nil {
				now = c.Now
			}
			if now.IsZero() {
				now = time.Now()
			}
			today := types.WallMicros(now.UnixMicro(), c.zone())
			x = today - today%int64(microsPerDay)
			if today < 0 && today%int64(microsPerDay) != 0 {
				x -= int64(microsPerDay)
			}
			y = wallMicros(c, a[0])
			if a[0].IsInfiniteTime() {
				return types.Value{}, types.InfiniteSubtractError("timestamps")
			}
		} else {
			if a[0].IsInfiniteTime() || a[1].IsInfiniteTime() {
				return types.Value{}, sqlerr.New(sqlerr.DatetimeValueOutOfRange, "timestamp out of range")
			}
			x, y = wallMicros(c, a[0]), wallMicros(c, a[1])
		}
		return types.AgeMicros(x, y)
	})
	f.Deterministic = len(args) == 2 && args[0].Type().Family != types.TimestampTZ && args[1].Type().Family != types.TimestampTZ
	return f, nil
}

// buildMakeInterval: make_interval(years, months, weeks, days, hours,
// mins, secs), each defaulting to 0 (by position; PostgreSQL's named
// arguments are not supported yet), secs a double precision.
func buildMakeInterval(b *Builder, name string, args []Expr) (Expr, error) {
	for i := range args {
		var err error
		if i == 6 {
			err = b.numArg(args, i, types.TypeDouble)
		} else {
			err = b.intArg(args, i)
		}
		if err != nil {
			return nil, err
		}
	}
	return newFunc(name, types.TypeInterval, args, true, func(_ *Context, a []types.Value) (types.Value, error) {
		var f [7]int64
		secs := 0.0
		for i, v := range a {
			if i == 6 {
				secs = v.AsFloat()
				continue
			}
			f[i] = v.Int()
		}
		overflow := sqlerr.New(sqlerr.DatetimeFieldOverflow, "interval out of range")
		months := f[0]*12 + f[1]
		days := f[2]*7 + f[3]
		us := secs*1e6 + float64(f[4])*3600e6 + float64(f[5])*60e6
		if math.IsNaN(us) || math.Abs(us) >= 9.2e18 || f[0] > math.MaxInt32 || f[0] < math.MinInt32 || f[2] > math.MaxInt32 || f[2] < math.MinInt32 {
			return types.Value{}, overflow
		}
		v, err := types.MakeInterval(months, days, int64(math.RoundToEven(us)))
		if err != nil {
			return types.Value{}, overflow
		}
		return v, nil
	}), nil
}

// buildIsFinite: isfinite(date | timestamp | timestamptz | interval).
func buildIsFinite(b *Builder, name string, args []Expr) (Expr, error) {
	if err := b.typedArg(args, 0, types.TypeTimestamp, func(f types.Family) bool { return f.IsTime() || f == types.Interval }); err != nil {
		return nil, err
	}
	return newFunc(name, types.TypeBool, args, true, func(_ *Context, a []types.Value) (types.Value, error) {
		return types.NewBool(!a[0].IsInfiniteTime()), nil
	}), nil
}

// buildDatePart: date_part(field, source) as a double precision, for
// timestamps, dates (as timestamps at midnight) and intervals.
func buildDatePart(b *Builder, name string, args []Expr) (Expr, error) {
	if err := b.textArg(args, 0); err != nil {
		return nil, err
	}
	if err := b.typedArg(args, 1, types.TypeTimestamp, func(f types.Family) bool {
		return f.IsTime() || f == types.Interval || f == types.Time || f == types.TimeTZ
	}); err != nil {
		return nil, err
	}
	f := newFunc(name, types.TypeDouble, args, true, func(c *Context, a []types.Value) (types.Value, error) {
		field := strings.ToLower(strings.TrimSpace(a[0].Str()))
		switch a[1].Family() {
		case types.Interval:
			return intervalPart(field, a[1])
		case types.Time:
			return timeOfDayPart(field, a[1])
		case types.TimeTZ:
			return timeTZPart(field, a[1])
		}
		return timePart(c, field, a[1])
	})
	f.Deterministic = args[1].Type().Family != types.TimestampTZ
	return f, nil
}

// buildExtract: EXTRACT(field FROM source), which the dialect front
// writes as pivot_extract('field', source), is date_part as a numeric,
// as PostgreSQL 14+ returns it: seconds and epoch with six decimals
// (epoch of a date with none), milliseconds with three, the other fields
// whole. A date has no time fields (hour, minute, ...: 0A000, as in
// PostgreSQL).
func buildExtract(b *Builder, name string, args []Expr) (Expr, error) {
	f, err := buildDatePart(b, "extract", args)
	if err != nil {
		return nil, err
	}
	fn := f.(*Func)
	isDate := args[1].Type().Family == types.Date
	part := fn.impl.eval
	fn.Typ = types.TypeDecimal
	fn.impl = &funcImpl{strict: true, eval: func(c *Context, a []types.Value) (types.Value, error) {
		u := types.UnitAlias(strings.ToLower(strings.TrimSpace(a[0].Str())))
		if isDate {
			switch u {
			case "microseconds", "milliseconds", "second", "minute", "hour", "timezone", "timezone_hour", "timezone_minute":
				return types.Value{}, sqlerr.New(sqlerr.FeatureNotSupported, "unit %q not supported for type date", a[0].Str())
			}
		}
		v, err := part(c, a)
		if err != nil || v.IsNull() {
			return v, err
		}
		x := v.Float()
		if math.IsInf(x, 0) {
			return types.ParseText(types.TypeDecimal, map[bool]string{true: "Infinity", false: "-Infinity"}[x > 0])
		}
		scale := 0
		switch u {
		case "second", "epoch":
			if !isDate {
				scale = 6
			}
		case "milliseconds":
			scale = 3
		case "julian":
			scale = 6
		}
		return types.ParseText(types.TypeDecimal, strconv.FormatFloat(x, 'f', scale, 64))
	}}
	return fn, nil
}

func unitNotRecognized(u string, t string) error {
	return sqlerr.New(sqlerr.InvalidParameterValue, "unit %q not recognized for type %s", u, t)
}

// intervalPart is interval_part (PostgreSQL 15's date_part on intervals).
func intervalPart(field string, v types.Value) (types.Value, error) {
	months, days, us := v.IntervalParts()
	year, mon := int64(months)/12, int64(months)%12
	hour := us / 3600e6
	rest := us - hour*3600e6
	min := rest / 60e6
	secUS := rest - min*60e6 // seconds and their fraction, in microseconds
	var x float64
	switch u := types.UnitAlias(field); u {
	case "microseconds":
		x = float64(secUS)
	case "milliseconds":
		x = float64(secUS) / 1e3
	case "second":
		x = float64(secUS) / 1e6
	case "minute":
		x = float64(min)
	case "hour":
		x = float64(hour)
	case "day":
		x = float64(days)
	case "month":
		x = float64(mon)
	case "quarter":
		x = float64(mon/3 + 1)
	case "year":
		x = float64(year)
	case "decade":
		x = float64(year / 10)
	case "century":
		x = float64(year / 100)
	case "millennium":
		x = float64(year / 1000)
	case "epoch":
		// Years count 365.25 days, months 30 (PostgreSQL 14+).
		secs := (int64(4*365.25)*year + 4*30*mon + 4*int64(days)) * (86400 / 4)
		x = float64(secs) + float64(us)/1e6
	case "week", "dow", "doy", "isodow", "isoyear", "julian", "timezone", "timezone_hour", "timezone_minute":
		return types.Value{}, sqlerr.New(sqlerr.FeatureNotSupported, "unit %q not supported for type interval", field)
	default:
		return types.Value{}, unitNotRecognized(field, "interval")
	}
	return types.NewDouble(x), nil
}

// timePart is date_part on a timestamp, timestamptz (in the session's
// zone) or date. Infinite times give ±Infinity for the fields that grow
// without bound and NULL for the others, as PostgreSQL 14+ does.
func timePart(c *Context, field string, v types.Value) (types.Value, error) {
	typ := "timestamp without time zone"
	if v.Family() == types.TimestampTZ {
		typ = "timestamp with time zone"
	}
	u := types.UnitAlias(field)
	if v.IsInfiniteTime() {
		switch u {
		case "epoch", "year", "decade", "century", "millennium", "julian", "isoyear":
			return types.NewDouble(math.Inf(int(v.Micros()>>63 | 1))), nil
		case "microseconds", "milliseconds", "second", "minute", "hour", "day", "week", "month", "quarter",
			"dow", "isodow", "doy", "timezone", "timezone_hour", "timezone_minute":
			return types.NullValue, nil
		}
		return types.Value{}, unitNotRecognized(field, typ)
	}
	if u == "epoch" {
		return types.NewDouble(float64(v.Micros()) / 1e6), nil
	}
	m := wallMicros(c, v)
	secs := floorDiv64(m, 1e6)
	t := time.Unix(secs, 0).UTC()
	frac := m - secs*1e6
	year := int64(t.Year())
	var x float64
	switch u {
	case "microseconds":
		x = float64(int64(t.Second())*1e6 + frac)
	case "milliseconds":
		x = float64(int64(t.Second())*1e6+frac) / 1e3
	case "second":
		x = float64(int64(t.Second())*1e6+frac) / 1e6
	case "minute":
		x = float64(t.Minute())
	case "hour":
		x = float64(t.Hour())
	case "day":
		x = float64(t.Day())
	case "month":
		x = float64(t.Month())
	case "quarter":
		x = float64((int(t.Month())-1)/3 + 1)
	case "year":
		if year <= 0 {
			year-- // there is no year 0: 1 BC is year -1
		}
		x = float64(year)
	case "decade":
		if year <= 0 {
			x = float64(-((8 - (year - 1)) / 10))
		} else {
			x = float64(year / 10)
		}
	case "century":
		if year > 0 {
			x = float64((year + 99) / 100)
		} else {
			x = float64(-((99 - (year - 1)) / 100))
		}
	case "millennium":
		if year > 0 {
			x = float64((year + 999) / 1000)
		} else {
			x = float64(-((999 - (year - 1)) / 1000))
		}
	case "dow":
		x = float64(t.Weekday())
	case "isodow":
		d := int(t.Weekday())
		if d == 0 {
			d = 7
		}
		x = float64(d)
	case "doy":
		x = float64(t.YearDay())
	case "week":
		_, w := t.ISOWeek()
		x = float64(w)
	case "isoyear":
		y, _ := t.ISOWeek()
		if y <= 0 {
			y--
		}
		x = float64(y)
	case "julian":
		x = float64(floorDiv64(m, int64(microsPerDay))+2440588) + float64(m-floorDiv64(m, int64(microsPerDay))*int64(microsPerDay))/float64(microsPerDay)
	case "timezone", "timezone_hour", "timezone_minute":
		if v.Family() != types.TimestampTZ {
			return types.Value{}, sqlerr.New(sqlerr.FeatureNotSupported, "unit %q not supported for type %s", field, typ)
		}
		off := (m - v.Micros()) / 1e6
		switch u {
		case "timezone":
			x = float64(off)
		case "timezone_hour":
			x = float64(off / 3600)
		default:
			x = float64(off / 60 % 60)
		}
	default:
		return types.Value{}, unitNotRecognized(field, typ)
	}
	return types.NewDouble(x), nil
}
