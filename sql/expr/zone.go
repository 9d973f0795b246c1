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
	return ff == types.TimestampTZ && (tf.IsTime() || tf == types.Utf8 || tf == types.String) ||
		tf == types.TimestampTZ && (ff.IsTime() || ff == types.Utf8 || ff == types.String || ff == types.Unknown)
}

// zoneCast converts v to type to in zone z where the conversion depends on
// it (see zoneDependent); ok is false for every other conversion.
func zoneCast(v types.Value, to types.Type, z *time.Location) (r types.Value, ok bool, err error) {
	ff, tf := v.Family(), to.Family
	if ff == types.Array || tf == types.Array {
		return zoneCastArray(v, to, z)
	}
	switch {
	case ff == types.TimestampTZ && tf.IsTime():
		r, err = types.Cast(types.NewTimestamp(types.WallMicros(v.Micros(), z)), to)
		return r, true, err
	case ff == types.TimestampTZ && (tf == types.Utf8 || tf == types.String):
		r, err = types.Cast(types.NewUtf8(types.FormatTimestampTZ(v.Micros(), z)), to)
		return r, true, err
	case tf == types.TimestampTZ && ff.IsTime():
		return types.NewTimestampTZ(types.InstantMicros(v.Micros(), z)), true, nil
	case tf == types.TimestampTZ && (ff == types.Utf8 || ff == types.String || ff == types.Unknown):
		m, err := types.ParseTimestampIn(v.Str(), z)
		if err != nil {
			return types.Value{}, true, err
		}
		return types.NewTimestampTZ(m), true, nil
	}
	return types.Value{}, false, nil
}

// zoneCastArray is zoneCast for arrays whose elements' conversion depends
// on the zone: text to timestamptz[], timestamptz[] to text, and arrays
// of times to one another, element by element.
func zoneCastArray(v types.Value, to types.Type, z *time.Location) (types.Value, bool, error) {
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
		r, err := types.Cast(v.InZone(z.String()), to)
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
		r, ok, err := zoneCast(e, et, z)
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
		if r, ok, err := zoneCast(v, t, c.zone()); ok {
			return r, err
		}
	}
	return types.Cast(v, t)
}
