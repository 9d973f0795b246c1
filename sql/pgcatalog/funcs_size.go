package pgcatalog

import (
	"fmt"
	"math/big"

	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// The object size functions (pg_relation_size, pg_table_size,
// pg_indexes_size, pg_total_relation_size, pg_database_size) and
// pg_size_pretty.
//
// A relation's size is the sum of its shards' data sizes, the
// data_size_bytes sys.partitions shows: the bytes of the keys and values of
// its rows (View.RelationSize). PivotDB stores a table in primary key order,
// so the table is its primary key index: that index has no storage of its
// own and measures 0 bytes, and the table's size counts its rows once. A
// secondary index's size is that of its entries. There are no TOAST tables,
// free space maps or visibility maps: every fork but main is 0 bytes, as
// in PostgreSQL for a fork that does not exist.

// tRegclass declares an argument that is a relation: an OID, or a name
// (an untyped literal or text) looked up as x::regclass is.
var tRegclass = types.TypeUnknown

// regclassArg makes the first argument an OID, casting a name to regclass.
func regclassArg(v *View, args []expr.Expr) ([]expr.Expr, error) {
	if args[0].Type().Family.IsInteger() || args[0].Type().Family == types.Null {
		return args, nil
	}
	if f := args[0].Type().Family; f != types.Unknown && f != types.Utf8 {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function with argument %s does not exist: a relation is an OID or a name", args[0].Type().PGName())
	}
	e, err := buildRegCast(v, []expr.Expr{args[0], constText("regclass")})
	if err != nil {
		return nil, err
	}
	out := append([]expr.Expr{e}, args[1:]...)
	return out, nil
}

// sizeFuncs are the object size functions.
func sizeFuncs() map[string]*sessionFunc {
	tBigint := types.TypeInt64
	return map[string]*sessionFunc{
		"pg_relation_size": sig(1, 2, tRegclass, tText).as(func(v *View, args []expr.Expr) (expr.Expr, error) {
			args, err := regclassArg(v, args)
			if err != nil {
				return nil, err
			}
			return perRow("pg_relation_size", tBigint, func(a []types.Value) (types.Value, error) {
				if len(a) > 1 {
					switch fork := a[1].Str(); fork {
					case "main":
					case "fsm", "vm", "init":
						return types.NewInt64(0), nil
					default:
						e := sqlerr.New(sqlerr.InvalidParameterValue, "invalid fork name")
						e.Hint = `Valid fork names are "main", "fsm", "vm", and "init".`
						return types.Value{}, e
					}
				}
				return v.relationSize(a[0].Int(), false)
			})(v, args)
		}),
		"pg_table_size": sig(1, 1, tRegclass).as(func(v *View, args []expr.Expr) (expr.Expr, error) {
			args, err := regclassArg(v, args)
			if err != nil {
				return nil, err
			}
			return perRow("pg_table_size", tBigint, func(a []types.Value) (types.Value, error) {
				return v.relationSize(a[0].Int(), false)
			})(v, args)
		}),
		"pg_total_relation_size": sig(1, 1, tRegclass).as(func(v *View, args []expr.Expr) (expr.Expr, error) {
			args, err := regclassArg(v, args)
			if err != nil {
				return nil, err
			}
			return perRow("pg_total_relation_size", tBigint, func(a []types.Value) (types.Value, error) {
				return v.relationSize(a[0].Int(), true)
			})(v, args)
		}),
		"pg_indexes_size": sig(1, 1, tRegclass).as(func(v *View, args []expr.Expr) (expr.Expr, error) {
			args, err := regclassArg(v, args)
			if err != nil {
				return nil, err
			}
			return perRow("pg_indexes_size", tBigint, func(a []types.Value) (types.Value, error) {
				t, ok := v.tableByOID(a[0].Int())
				if !ok {
					if _, exists := v.relationName(a[0].Int()); exists {
						return types.NewInt64(0), nil
					}
					return types.NullValue, nil
				}
				n, err := v.indexesSize(t)
				if err != nil {
					return types.Value{}, err
				}
				return types.NewInt64(n), nil
			})(v, args)
		}),
		// pg_database_size takes a name or an OID; an untyped literal is a
		// name.
		"pg_database_size": sig(1, 1, types.TypeUnknown).as(func(v *View, args []expr.Expr) (expr.Expr, error) {
			byOID := args[0].Type().Family.IsInteger()
			return perRow("pg_database_size", tBigint, func(a []types.Value) (types.Value, error) {
				var db *catalog.Database
				for _, d := range v.Snapshot.Databases() {
					if byOID && int64(d.ID) == a[0].Int() || !byOID && d.Name == a[0].Str() {
						db = d
					}
				}
				if db == nil {
					if byOID {
						return types.NullValue, nil
					}
					return types.Value{}, sqlerr.New(sqlerr.UndefinedDatabase, "database %q does not exist", a[0].Str())
				}
				var total int64
				for _, t := range v.Snapshot.Tables(db.ID) {
					n, err := v.tableSize(t, true)
					if err != nil {
						return types.Value{}, err
					}
					total += n
				}
				return types.NewInt64(total), nil
			})(v, args)
		}),
		// pg_size_pretty takes a bigint or a numeric.
		"pg_size_pretty": sig(1, 1, types.TypeUnknown).as(func(v *View, args []expr.Expr) (expr.Expr, error) {
			switch f := args[0].Type().Family; {
			case f == types.Unknown:
				return nil, sqlerr.New(sqlerr.AmbiguousFunction, "function pg_size_pretty(unknown) is not unique")
			case !f.IsInteger() && f != types.Decimal && f != types.Null:
				return nil, sqlerr.New(sqlerr.UndefinedFunction, "function pg_size_pretty(%s) does not exist", args[0].Type().PGName())
			}
			return perRow("pg_size_pretty", tText, func(a []types.Value) (types.Value, error) {
				n, ok := new(big.Int).SetString(a[0].Text(), 10)
				if !ok {
					// A numeric with a fraction: PostgreSQL rounds it away
					// in the first division; bytes are whole.
					r, _ := new(big.Rat).SetString(a[0].Text())
					if r == nil {
						return types.Value{}, fmt.Errorf("pg_size_pretty: %q is not a number", a[0].Text())
					}
					n = new(big.Int).Quo(r.Num(), r.Denom())
				}
				return types.NewUtf8(sizePretty(n)), nil
			})(v, args)
		}),
	}
}

// sizePretty is PostgreSQL 15's pg_size_pretty: bytes below 10 kB, then
// the largest unit that keeps the number below 20480 (PB at most), rounded
// half away from zero; the divisions truncate as C's do.
func sizePretty(size *big.Int) string {
	type unit struct {
		name  string
		limit int64
		round bool
		bits  uint
	}
	units := []unit{{"bytes", 10 * 1024, false, 0}, {"kB", 20*1024 - 1, true, 10}, {"MB", 20*1024 - 1, true, 20},
		{"GB", 20*1024 - 1, true, 30}, {"TB", 20*1024 - 1, true, 40}, {"PB", 20*1024 - 1, true, 50}}
	s := new(big.Int).Set(size)
	for i, u := range units {
		if i == len(units)-1 || new(big.Int).Abs(s).Cmp(big.NewInt(u.limit)) < 0 {
			if u.round {
				// half_rounded: (x + sign(x)) / 2, truncating.
				if s.Sign() < 0 {
					s.Sub(s, big.NewInt(1))
				} else {
					s.Add(s, big.NewInt(1))
				}
				s.Quo(s, big.NewInt(2))
			}
			return s.String() + " " + u.name
		}
		next := units[i+1]
		bits := next.bits - u.bits
		if next.round {
			bits--
		}
		if u.round {
			bits++
		}
		s.Quo(s, new(big.Int).Lsh(big.NewInt(1), bits))
	}
	return ""
}

// relationSize is the size of the relation oid, with its indexes when
// total; NULL when there is no such relation, as in PostgreSQL. Views,
// sequences and system relations have no storage.
func (v *View) relationSize(oid int64, total bool) (types.Value, error) {
	if v.RelationSize == nil {
		return types.NullValue, nil
	}
	for _, t := range v.tables() {
		if int64(t.ID) == oid {
			n, err := v.tableSize(t, total)
			if err != nil {
				return types.Value{}, err
			}
			return types.NewInt64(n), nil
		}
		for _, ix := range t.Indexes {
			if int64(ix.ID) == oid {
				n, err := v.RelationSize(ix.ID)
				if err != nil {
					return types.Value{}, err
				}
				return types.NewInt64(n), nil
			}
		}
	}
	if _, ok := v.relationName(oid); ok {
		return types.NewInt64(0), nil
	}
	return types.NullValue, nil
}

// tableSize is a table's size, with its secondary indexes when total.
func (v *View) tableSize(t *catalog.Table, total bool) (int64, error) {
	if v.RelationSize == nil {
		return 0, nil
	}
	n, err := v.RelationSize(t.ID)
	if err != nil || !total {
		return n, err
	}
	ix, err := v.indexesSize(t)
	return n + ix, err
}

// indexesSize sums the sizes of a table's secondary indexes.
func (v *View) indexesSize(t *catalog.Table) (int64, error) {
	if v.RelationSize == nil {
		return 0, nil
	}
	var total int64
	for _, ix := range t.Indexes {
		n, err := v.RelationSize(ix.ID)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}
