package expr

import (
	"time"

	"github.com/pivotdb/pivotdb/sql/types"
)

// The session's TimeZone enters expressions in three places, all through
// Context.Zone (UTC when unset): casts between timestamptz and timestamp,
// date or text (zoneCast), the clock functions that return a local time
// (current_date, localtimestamp), and nowhere else — a timestamptz is an
// instant, and the server prints it in the zone at output. Zone-dependent
// casts are never folded while binding (fold.go), since a prepared
// statement may run after SET TIME ZONE.

// zone is the session's time zone.
func (c *Context) zone() *time.Location {
	if c == nil || c.Zone == nil {
		return time.UTC
	}
	return c.Zone
}

// zoneDependent reports whether a cast from one type to another reads the
// session's time zone.
func zoneDependent(from, to types.Type) bool {
	if from.Family == types.Array || to.Family == types.Array {
		// Element by element (text to timestamptz[] parses each one).
		return zoneDependent(from.ElemType(), to.ElemType())
	}
	ff, tf := from.Family, to.Family
	if ff == tf {
		return false
	}
	text := func(f types.Family) bool { return f == types.Utf8 || f == types.String || f == types.Unknown }
	return ff == types.TimestampTZ && (tf.IsTime() || tf == types.Utf8 || tf == types.String) ||
		tf == types.TimestampTZ && (ff.IsTime() || text(ff)) ||
		// DateStyle: times and intervals print in it, dates are read in
		// its field order.
		types.StyleDependent(ff) && (tf == types.Utf8 || tf == types.String) ||
		(tf.IsTime() || tf == types.Interval) && text(ff) ||
		tf == types.Time && (ff == types.TimestampTZ || text(ff)) ||
		tf == types.TimeTZ && (ff == types.TimestampTZ || ff == types.Time || text(ff))
}

// style is the session's DateStyle and IntervalStyle.
func (c *Context) style() types.Style {
	if c == nil {
		return 0
	}
	return c.Style
}

// zoneCast converts v to type to in zone z where the conversion depends on
// it (see zoneDependent); ok is false for every other conversion.
func zoneCast(v types.Value, to types.Type, z *time.Location, st types.Style) (r types.Value, ok bool, err error) {
	ff, tf := v.Family(), to.Family
	if ff == types.Array || tf == types.Array {
		return zoneCastArray(v, to, z, st)
	}
	if ff == tf {
		// No conversion (a timestamptz stays the instant it is).
		return types.Value{}, false, nil
	}
	text := ff == types.Utf8 || ff == types.String || ff == types.Unknown
	if r, ok, err := timeOfDayZoneCast(v, to, z); ok {
		return r, true, err
	}
	switch {
	case ff == types.TimestampTZ && (tf == types.Utf8 || tf == types.String):
		r, err = types.Cast(types.NewUtf8(types.FormatTimestampTZStyle(v.Micros(), z, st)), to)
		return r, true, err
	case st != 0 && types.StyleDependent(ff) && ff != tf && (tf == types.Utf8 || tf == types.String):
		r, err = types.Cast(v.WithStyle(st), to)
		return r, true, err
	case tf == types.TimestampTZ && text:
		m, err := types.ParseTimestampInOrder(v.Str(), z, st.Order())
		if err != nil {
			return types.Value{}, true, err
		}
		return types.AdjustTimestamp(types.NewTimestampTZ(m), to.Qual), true, nil
	case st.IntervalStyle() == types.IntervalSQLStandard && text && tf == types.Interval:
		r, err = types.ParseIntervalTyped(to, v.Str(), types.IntervalSQLStandard)
		return r, true, err
	case st.Order() != types.OrderMDY && text && (tf == types.Date || tf == types.Datetime || tf == types.Timestamp):
		r, err = types.ParseTextOrder(to, v.Str(), st.Order())
		return r, true, err
	case ff == types.TimestampTZ && tf.IsTime():
		if v.IsInfiniteTime() {
			r, err = types.Cast(types.NewTimestamp(v.Micros()), to)
			return r, true, err
		}
		r, err = types.Cast(types.NewTimestamp(types.WallMicros(v.Micros(), z)), to)
		return r, true, err
	case tf == types.TimestampTZ && ff.IsTime():
		if v.IsInfiniteTime() {
			return types.NewTimestampTZ(v.Micros()), true, nil
		}
		return types.AdjustTimestamp(types.NewTimestampTZ(types.InstantMicros(v.Micros(), z)), to.Qual), true, nil
	}
	return types.Value{}, false, nil
}

// zoneCastArray is zoneCast for arrays whose elements' conversion depends
// on the zone: text to timestamptz[], timestamptz[] to text, and arrays
// of times to one another, element by element.
func zoneCastArray(v types.Value, to types.Type, z *time.Location, st types.Style) (types.Value, bool, error) {
	ff := v.Family()
	var from types.Type
	switch {
	case ff == types.Array:
		from = v.ArrayElemType()
	case ff == types.Utf8 || ff == types.String || ff == types.Unknown:
		from = types.TypeUtf8
	default:
		return types.Value{}, false, nil
	}
	if !zoneDependent(from, to.ElemType()) {
		return types.Value{}, false, nil
	}
	if to.Family != types.Array {
		// timestamptz[] as text: each element printed in the zone.
		r, err := types.Cast(v.InZone(z.String()).WithStyle(st), to)
		return r, true, err
	}
	var dims, lower []int
	var elems []types.Value
	if ff == types.Array {
		dims, lower, elems = v.ArrayDims(), v.ArrayLower(), v.ArrayElems()
	} else {
		d, l, texts, err := types.ParseArrayLiteral(v.Str())
		if err != nil {
			return types.Value{}, true, err
		}
		dims, lower = d, l
		elems = make([]types.Value, len(texts))
		for i, t := range texts {
			if t != nil {
				elems[i] = types.NewUtf8(*t)
			}
		}
	}
	et := to.ElemType()
	out := make([]types.Value, len(elems))
	for i, e := range elems {
		if e.IsNull() {
			continue
		}
		r, ok, err := zoneCast(e, et, z, st)
		if !ok {
			r, err = types.Cast(e, et)
		}
		if err != nil {
			return types.Value{}, true, err
		}
		out[i] = r
	}
	r, err := types.NewArrayDims(et, dims, lower, out)
	return r, true, err
}

// CastInZone is types.Cast for a statement run in c (the session's zone
// for the conversions that need one): the row writer converts values to
// their columns' types with it.
func CastInZone(c *Context, v types.Value, t types.Type) (types.Value, error) {
	if !v.IsNull() {
		if r, ok, err := zoneCast(v, t, c.zone(), c.style()); ok {
			return r, err
		}
	}
	return types.Cast(v, t)
}
