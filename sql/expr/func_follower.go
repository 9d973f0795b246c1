package expr

import (
	"time"

	"github.com/pivotdb/pivotdb/sql/types"
)

func init() {
	register(&funcDef{0, 0, buildFollowerReadTimestamp}, "follower_read_timestamp", "experimental_follower_read_timestamp")
}

// defaultFollowerReadOffset is follower_read_timestamp()'s distance back
// when the context does not say (CockroachDB's 4.8 s for a 3 s closed
// target; sql/follower.go).
const defaultFollowerReadOffset = 4800 * time.Millisecond

// buildFollowerReadTimestamp: CockroachDB's follower_read_timestamp(), the
// statement time less Context.FollowerReadOffset: a time old enough that
// every replica holds every commit at or before it (sql/follower.go). AS
// OF SYSTEM TIME follower_read_timestamp() is the binder's (bind/asof.go),
// which resolves it the same way.
func buildFollowerReadTimestamp(_ *Builder, name string, args []Expr) (Expr, error) {
	f := newFunc(name, types.TypeTimestampTZ, args, true, func(c *Context, _ []types.Value) (types.Value, error) {
		now, off := time.Now(), defaultFollowerReadOffset
		if c != nil {
			if !c.Now.IsZero() {
				now = c.Now
			}
			if c.FollowerReadOffset > 0 {
				off = c.FollowerReadOffset
			}
		}
		return types.NewTimestampTZ(now.Add(-off).UnixMicro()), nil
	})
	f.Deterministic = false
	return f, nil
}
