package ttl

import (
	"math"
	"math/big"
	"time"

	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/tablesettings"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Expiry is a table's TTL evaluated at one moment. It is immutable and may
// be shared by concurrent readers of one statement.
type Expiry struct {
	col int // the TTL column's index in the table's columns
	// kind says how to read the column: a time, a signed or an unsigned
	// count of units.
	kind kind
	// none: no value of the column is at or before the cutoff (the cutoff
	// lies before the column type's smallest value).
	none bool
	// cutoff is the latest expired value: microseconds for time columns, a
	// count of units for signed columns (ucutoff for unsigned ones).
	cutoff  int64
	ucutoff uint64
}

type kind uint8

const (
	kindTime kind = iota
	kindSigned
	kindUnsigned
)

// unitNanos are the nanoseconds of one unit of an integral TTL column.
var unitNanos = map[string]int64{
	tablesettings.UnitSeconds:      1e9,
	tablesettings.UnitMilliseconds: 1e6,
	tablesettings.UnitMicroseconds: 1e3,
	tablesettings.UnitNanoseconds:  1,
}

// At returns the table's TTL at the moment now, or nil when the table has
// no TTL. A TTL whose column or unit does not fit (which validation
// prevents) also gives nil rather than hiding rows by mistake.
func At(t *catalog.Table, now time.Time) *Expiry {
	s := t.Settings.TTL
	if s == nil {
		return nil
	}
	col := t.ColumnIndex(s.Column)
	if col < 0 {
		return nil
	}
	return at(col, t.Columns[col].Type.Family, *s, now)
}

func at(col int, fam types.Family, s tablesettings.TTL, now time.Time) *Expiry {
	x := &Expiry{col: col}
	switch {
	case fam.IsTime() && s.Unit == tablesettings.UnitNone:
		x.kind = kindTime
		// now.UnixMicro() is far from int64's bounds for any time of this
		// era, but Interval may be as large as int64 allows: guard the
		// subtraction.
		n := now.UnixMicro()
		if s.Interval > 0 && n < math.MinInt64+s.Interval {
			x.none = true
			return x
		}
		x.cutoff = n - s.Interval
		return x
	case fam == types.Int64 || fam == types.Uint64 || fam == types.Uint32:
	default:
		return nil
	}
	unit, ok := unitNanos[s.Unit]
	if !ok {
		return nil
	}
	// cutoff = floor((now - interval) / unit), in nanoseconds, exactly.
	c := new(big.Int).Mul(big.NewInt(now.Unix()), big.NewInt(1e9))
	c.Add(c, big.NewInt(int64(now.Nanosecond())))
	c.Sub(c, new(big.Int).Mul(big.NewInt(s.Interval), big.NewInt(1e3)))
	c.Div(c, big.NewInt(unit)) // Euclidean division: the floor for a positive divisor
	if fam == types.Int64 {
		x.kind = kindSigned
		switch {
		case !c.IsInt64():
			if c.Sign() < 0 {
				x.none = true
			} else {
				x.cutoff = math.MaxInt64
			}
		default:
			x.cutoff = c.Int64()
		}
		return x
	}
	x.kind = kindUnsigned
	switch {
	case c.Sign() < 0:
		x.none = true
	case !c.IsUint64():
		x.ucutoff = math.MaxUint64
	default:
		x.ucutoff = c.Uint64()
	}
	return x
}

// Expired reports whether a decoded row (all of the table's columns, in
// order) has expired.
func (x *Expiry) Expired(row []types.Value) bool {
	v := row[x.col]
	if v.IsNull() || x.none {
		return false
	}
	switch x.kind {
	case kindTime:
		return v.Micros() <= x.cutoff
	case kindSigned:
		return v.Int() <= x.cutoff
	default:
		return v.Uint() <= x.ucutoff
	}
}

// Column returns the index of the TTL column in the table's columns.
func (x *Expiry) Column() int { return x.col }
