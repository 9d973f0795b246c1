package sql

import (
	"context"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/pgcatalog"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Shard-level SQL: the sys.partitions view, SHOW CREATE TABLE with the
// current boundaries, ALTER TABLE ... SET/RESET of table settings, and
// manual resharding:
//
//	ALTER TABLE t RESHARD AT ((10), (20, 'x'))  -- replace the pivots (YTsaurus pivot keys)
//	ALTER TABLE t RESHARD INTO 8 [BY SIZE]      -- 8 shards of about equal data size (tablet_count)
//	ALTER TABLE t RESHARD INTO 8 UNIFORM        -- 8 equal ranges of the first key column (--uniform)
//	SPLIT TABLE t BY (10), (20, 'x')            -- add pivots, keep the existing ones (TiDB's spelling)

// partitionColumns are the columns of sys.partitions (design.md §5).
var partitionColumns = []planner.Column{
	{Name: "table_name", Type: types.TypeUtf8},
	{Name: "partition_index", Type: types.TypeInt64},
	{Name: "shard_id", Type: types.TypeInt64},
	{Name: "start_key", Type: types.TypeUtf8},
	{Name: "end_key", Type: types.TypeUtf8},
	{Name: "data_size_bytes", Type: types.TypeInt64},
	{Name: "row_count", Type: types.TypeInt64},
	{Name: "reads", Type: types.TypeInt64},
	{Name: "writes", Type: types.TypeInt64},
	{Name: "ttl_last_run", Type: types.TypeTimestamp},
	{Name: "ttl_rows_erased", Type: types.TypeInt64},
	// splits and merges are the table's persisted reshape counters
	// (partition.TableCounters), the same on every row of a table: shards
	// added by splits and shards removed by merges since the table was
	// created, automatic or by statement.
	{Name: "splits", Type: types.TypeInt64},
	{Name: "merges", Type: types.TypeInt64},
	// key_bloom_filter is the table's KEY_BLOOM_FILTER setting (false for
	// the rows of a secondary index, which has no filter) and
	// key_bloom_filter_bytes the size of the bloom filters its data has in
	// the live sstables (storage.Engine.KeyFilterBytes), per table like
	// splits and merges: Pebble's filters are per sstable, not per shard.
	// The bytes follow the setting as data is flushed and compacted, so
	// they lag an ALTER until the table's compaction has run.
	{Name: "key_bloom_filter", Type: types.TypeBool},
	{Name: "key_bloom_filter_bytes", Type: types.TypeInt64},
}

// isPartitionsView reports whether a table name is sys.partitions or YDB's
// `.sys/partition_stats`.
func isPartitionsView(tn *ast.TableName) bool {
	switch {
	case strings.EqualFold(tn.Schema.O, "sys") && strings.EqualFold(tn.Name.O, "partitions"):
		return true
	case tn.Schema.O == "" && strings.EqualFold(tn.Name.O, ".sys/partition_stats"):
		return true
	}
	return false
}

// systemTable resolves names of system views. ok is false for ordinary
// tables.
func (a *analyser) systemTable(tn *ast.TableName, alias string) (planner.Node, *scope, bool, error) {
	if vt := pgcatalog.Lookup(tn.Schema.O, tn.Name.O); vt != nil {
		return vt.Node(a.catalogView()), columnScope(vt.Cols, vt.Name, alias), true, nil
	}
	if !isPartitionsView(tn) {
		return nil, nil, false, nil
	}
	sc := columnScope(partitionColumns, tn.Name.O, alias)
	s := a.s
	node := &planner.Generate{Name: "sys.partitions", Cols: partitionColumns, Rows: func() ([][]types.Value, error) {
		return s.partitionRows()
	}}
	return node, sc, true, nil
}

// columnScope is the scope of a generated relation's columns, named by
// alias or, without one, by name.
func columnScope(cols []planner.Column, name, alias string) *scope {
	if alias == "" {
		alias = name
	}
	sc := &scope{}
	for _, c := range cols {
		sc.cols = append(sc.cols, scopeColumn{table: strings.ToLower(alias), name: c.Name, typ: c.Type})
	}
	return sc
}

func (a *analyser) planReshard(r *parser.Reshard) (bind.Statement, error) {
	switch r.Mode {
	case parser.ReshardAtKeys, parser.ReshardUniform, parser.ReshardBySize:
		return &bind.Reshard{Reshard: r}, nil
	}
	return nil, sqlerr.New(sqlerr.InternalError, "sql: unknown reshard mode %d", r.Mode)
}

// planSplitTable is TiDB's SPLIT TABLE t BY (v, ...), ...: add pivots.
func (a *analyser) planSplitTable(n *ast.SplitRegionStmt) (bind.Statement, error) {
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
			v, err := e.Eval(a.s.evalContext(context.Background(), nil), nil)
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
	return &bind.Split{Table: n.Table, Bound: t, Keys: keys}, nil
}
