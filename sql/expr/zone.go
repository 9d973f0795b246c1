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
