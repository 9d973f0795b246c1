package expr

import "github.com/pivotdb/pivotdb/sql/types"

func init() {
	// gen_random_uuid() is a version 4 (random) UUID: a key that spreads
	// inserts over every shard (README: the sequence hot spot).
	register(&funcDef{0, 0, func(b *Builder, name string, args []Expr) (Expr, error) {
		f := newFunc(name, types.T(types.Uuid), args, false, func(*Context, []types.Value) (types.Value, error) {
			return types.RandomUuid(), nil
		})
		f.Deterministic = false
		return f, nil
	}}, "gen_random_uuid")
}
