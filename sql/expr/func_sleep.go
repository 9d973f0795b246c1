package expr

import (
	"math"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

func init() {
	register(&funcDef{1, 1, buildSleep}, "pg_sleep")
}

// buildSleep: pg_sleep(seconds) waits, honouring the statement's context
// (cancel, statement_timeout), and returns NULL as PostgreSQL's void does.
// Clients and tests use it to hold a statement open.
func buildSleep(b *Builder, name string, args []Expr) (Expr, error) {
	arg, err := b.resolve(args[0], types.TypeDouble)
	if err != nil {
		return nil, err
	}
	if f := arg.Type().Family; !f.IsNumeric() && f != types.Null {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function pg_sleep(%s) does not exist", arg.Type().PGName())
	}
	args[0] = arg
	fn := newFunc(name, types.TypeUtf8, args, true, func(c *Context, a []types.Value) (types.Value, error) {
		secs := a[0].AsFloat()
		if math.IsNaN(secs) || secs <= 0 {
			return types.NullValue, nil
		}
		d := time.Duration(math.Min(secs, 1e6) * float64(time.Second))
		t := time.NewTimer(d)
		defer t.Stop()
		if c == nil || c.Ctx == nil {
			// No statement context to honour: just wait.
			<-t.C
			return types.NullValue, nil
		}
		select {
		case <-t.C:
			return types.NullValue, nil
		case <-c.Ctx.Done():
			return types.Value{}, c.Ctx.Err()
		}
	})
	fn.Deterministic = false
	return fn, nil
}
