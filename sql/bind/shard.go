package bind

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// planReshard binds ALTER TABLE t RESHARD AT (...) / INTO n [UNIFORM | BY
// SIZE]; the new pivots are computed when it runs (sql/partitions.go).
func (a *binder) planReshard(r *parser.Reshard) (Statement, error) {
	switch r.Mode {
	case parser.ReshardAtKeys, parser.ReshardUniform, parser.ReshardBySize:
		return &Reshard{Reshard: r}, nil
	}
	return nil, sqlerr.New(sqlerr.InternalError, "sql: unknown reshard mode %d", r.Mode)
}

// planSplitTable is TiDB's SPLIT TABLE t BY (v, ...), ...: add pivots.
func (a *binder) planSplitTable(n *ast.SplitRegionStmt) (Statement, error) {
	switch {
	case n.IndexName.O != "":
		return nil, sqlerr.NotSupported("SPLIT TABLE ... INDEX")
	case len(n.PartitionNames) > 0:
		return nil, sqlerr.NotSupported("SPLIT TABLE ... PARTITION")
	case n.SplitOpt == nil || len(n.SplitOpt.ValueLists) == 0:
		return nil, sqlerr.NotSupported("SPLIT TABLE ... BETWEEN ... REGIONS (use ALTER TABLE t RESHARD INTO n UNIFORM)")
	}
	t, err := a.lookupTable(n.Table)
	if err != nil {
		return nil, err
	}
	if err := a.requireOwner(t); err != nil {
		return nil, err
	}
	if t.HiddenKeyColumn() >= 0 {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "table %q has no primary key to split at", t.Name)
	}
	var keys [][]types.Value
	for _, list := range n.SplitOpt.ValueLists {
		if len(list) > len(t.PrimaryKey) {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue,
				"Partition at keys has %d key values while there are only %d key columns", len(list), len(t.PrimaryKey))
		}
		var key []types.Value
		for i, item := range list {
			e, err := a.build(nil, item, nil)
			if err != nil {
				return nil, err
			}
			v, err := e.Eval(a.evalContext(), nil)
			if err != nil {
				return nil, err
			}
			cv, err := types.Cast(v, t.Columns[t.PrimaryKey[i]].Type)
			if err != nil {
				return nil, err
			}
			key = append(key, cv)
		}
		keys = append(keys, key)
	}
	return &Split{Table: n.Table, Bound: t, Keys: keys}, nil
}
