package sql

import (
	"context"
	"errors"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/pgcatalog"
	"github.com/pivotdb/pivotdb/sql/rowenc"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/tablesettings"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
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

// partitionRows lists every shard of the session's database.
func (s *Session) partitionRows() ([][]types.Value, error) {
	var rows [][]types.Value
	snap := s.e.catalog.Snapshot()
	filterBytes, err := s.e.storage.KeyFilterBytes()
	if err != nil {
		return nil, err
	}
	// A table's shards are followed by those of its indexes, named
	// "table/index", whose bounds are tuples of the index key (the index
	// columns, then the primary key columns not among them).
	var tables []*catalog.Table
	for _, t := range snap.Tables(s.db.ID) {
		tables = append(tables, t)
		for i := range t.Indexes {
			tables = append(tables, t.IndexTable(&t.Indexes[i]))
		}
	}
	for _, t := range tables {
		// One map, its statistics and counters from one snapshot, so that a
		// split or merge by the balancer cannot fall between them.
		sm, stats, counters, err := s.e.shards.TableStats(t.ID)
		if errors.Is(err, partition.ErrTableNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for k, sh := range sm.Shards() {
			st := stats[k]
			end := "(<Max>)"
			if k+1 < sm.Len() {
				end = formatPivot(t, sm.Shard(k+1).Span.Start)
			}
			size, count := types.NewInt64(st.Bytes), types.NewInt64(st.Rows)
			ttlLastRun := types.NullValue
			if at, ok := sh.TTLLastRun(); ok {
				ttlLastRun = types.NewTimestamp(at.UnixMicro())
			}
			if st.Pending {
				size, count = types.NullValue, types.NullValue
			}
			rows = append(rows, []types.Value{
				types.NewUtf8(t.Name), types.NewInt64(int64(k)), types.NewInt64(int64(sh.ID)),
				types.NewUtf8(formatPivot(t, sh.Span.Start)), types.NewUtf8(end),
				size, count, types.NewInt64(st.Reads), types.NewInt64(st.Writes),
				ttlLastRun, types.NewInt64(sh.TTLRowsErased()),
				types.NewInt64(counters.Splits), types.NewInt64(counters.Merges),
				types.NewBool(s.e.storage.KeyFilterEnabled(t.ID)), types.NewInt64(int64(filterBytes[t.ID])),
			})
		}
	}
	return rows, nil
}

// pivotValues decodes a pivot (a key prefix) into its column values.
func pivotValues(t *catalog.Table, pivot []byte) ([]types.Value, error) {
	b := pivot[len(storage.TablePrefix(t.ID)):]
	var vals []types.Value
	for _, k := range t.PrimaryKey {
		if len(b) == 0 {
			break
		}
		v, rest, err := rowenc.DecodeKeyValue(b, t.Columns[k].Type)
		if err != nil {
			return nil, err
		}
		vals = append(vals, v)
		b = rest
	}
	return vals, nil
}

// formatPivot renders a pivot in the tuple notation of design.md §6.
func formatPivot(t *catalog.Table, pivot []byte) string {
	vals, err := pivotValues(t, pivot)
	if err != nil {
		return storage.FormatKey(pivot)
	}
	return tablesettings.FormatKey(vals)
}

// showCreateTable prints a statement that recreates the table, with its
// settings and its current shard boundaries as PARTITION_AT_KEYS.
func (a *analyser) planShowCreateTable(tn *ast.TableName) (statementPlan, error) {
	t, err := a.lookupTable(tn)
	if err != nil {
		return nil, err
	}
	cols := []ResultColumn{{Name: "table_name", Type: types.TypeUtf8}, {Name: "create_statement", Type: types.TypeUtf8}}
	return &generatedPlan{cols: cols, tag: "SHOW", rows: func(s *Session) ([][]types.Value, error) {
		stmt, err := s.createStatement(t)
		if err != nil {
			return nil, err
		}
		return [][]types.Value{{types.NewUtf8(t.Name), types.NewUtf8(stmt)}}, nil
	}}, nil
}

func (s *Session) createStatement(t *catalog.Table) (string, error) {
	var b strings.Builder
	b.WriteString("CREATE TABLE " + tablesettings.QuoteIdent(t.Name) + " (\n")
	var lines []string
	for _, c := range t.Columns {
		if c.Hidden {
			continue
		}
		line := "    " + tablesettings.QuoteIdent(c.Name) + " " + c.Type.String()
		if c.Computed != "" {
			line += " AS (" + c.Computed + ")"
		}
		if c.NotNull {
			line += " NOT NULL"
		}
		if c.Default != "" {
			line += " DEFAULT " + c.Default
		}
		lines = append(lines, line)
	}
	for _, ix := range t.Indexes {
		cols := make([]string, len(ix.Columns))
		for i, c := range ix.Columns {
			cols[i] = tablesettings.QuoteIdent(t.Columns[c].Name)
			if i < len(ix.Desc) && ix.Desc[i] {
				cols[i] += " DESC"
			}
		}
		kind := "GLOBAL SYNC"
		if ix.Unique {
			kind = "GLOBAL UNIQUE SYNC"
		}
		lines = append(lines, "    INDEX "+tablesettings.QuoteIdent(ix.Name)+" "+kind+" ON ("+strings.Join(cols, ", ")+")")
	}
	if hiddenKeyColumn(t) < 0 {
		keys := make([]string, len(t.PrimaryKey))
		for i, name := range t.KeyColumnNames() {
			keys[i] = tablesettings.QuoteIdent(name)
		}
		lines = append(lines, "    PRIMARY KEY ("+strings.Join(keys, ", ")+")")
	}
	b.WriteString(strings.Join(lines, ",\n"))
	b.WriteString("\n)")
	var pivots [][]types.Value
	if sm := s.e.shards.Map(t.ID); sm != nil && hiddenKeyColumn(t) < 0 {
		for _, p := range sm.Splits() {
			vals, err := pivotValues(t, p)
			if err != nil {
				return "", err
			}
			pivots = append(pivots, vals)
		}
	}
	if with := t.Settings.RenderWithPivots(pivots); with != "" {
		b.WriteString("\n" + with)
	}
	return b.String(), nil
}

// alterSettingsPlan is ALTER TABLE t SET (...) / SET k v / RESET (...).
type alterSettingsPlan struct{ stmt *parser.AlterSettings }

func (p *alterSettingsPlan) columns() []ResultColumn { return nil }

func (p *alterSettingsPlan) execute(ctx context.Context, s *Session, _ []types.Value) (Result, error) {
	var old, cur *catalog.Table
	err := s.ddl(func(ch *catalog.Change, pch *partition.Change, b *storage.Batch) error {
		t, err := tableIn(ch.Snapshot(), s, p.stmt.Table)
		if err != nil {
			return err
		}
		settings, notices, err := tablesettings.ApplyAlter(t.Settings, p.stmt, t.SettingsInfo())
		if err != nil {
			return err
		}
		nt := *t
		nt.Settings = settings
		ch.PutTable(&nt)
		old, cur = t, &nt
		for _, n := range notices {
			s.notice("NOTICE", n.Code, "%s", n.Message)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.e.keyFilterChanged(old, cur)
	return &tagResult{tag: "ALTER TABLE"}, nil
}

func tableIn(snap *catalog.Snapshot, s *Session, tn *ast.TableName) (*catalog.Table, error) {
	if schema := tn.Schema.O; schema != "" && !strings.EqualFold(schema, s.db.Name) && !strings.EqualFold(schema, "public") {
		return nil, sqlerr.NotSupported("cross-database reference %s.%s", schema, tn.Name.O)
	}
	t, ok := snap.Table(s.db.ID, tn.Name.O)
	if !ok {
		return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", tn.Name.O)
	}
	return t, nil
}

// reshardPlan changes a table's shard boundaries. Data never moves: only
// the shard map changes, in one atomic batch.
type reshardPlan struct {
	table *ast.TableName
	// pivots computes the new boundaries; replace says whether they replace
	// the current ones (RESHARD) or are added to them (SPLIT TABLE).
	pivots  func(s *Session, t *catalog.Table) ([][]byte, error)
	replace bool
}

func (p *reshardPlan) columns() []ResultColumn { return nil }

func (p *reshardPlan) execute(ctx context.Context, s *Session, _ []types.Value) (Result, error) {
	t, err := tableIn(s.e.catalog.Snapshot(), s, p.table)
	if err != nil {
		return nil, err
	}
	pivots, err := p.pivots(s, t)
	if err != nil {
		return nil, err
	}
	if p.replace {
		_, err = s.e.shards.Reshard(t.ID, pivots)
	} else {
		_, err = s.e.shards.Split(t.ID, pivots)
	}
	if err != nil {
		return nil, shardError(err)
	}
	return &tagResult{tag: "ALTER TABLE"}, nil
}

// shardError gives shard manager errors a SQLSTATE.
func shardError(err error) error {
	if _, ok := err.(*sqlerr.Error); ok {
		return err
	}
	return sqlerr.New(sqlerr.InvalidParameterValue, "%s", strings.TrimPrefix(err.Error(), "partition: "))
}

func encodePivots(t *catalog.Table, keys [][]types.Value) [][]byte {
	out := make([][]byte, len(keys))
	for i, k := range keys {
		out[i] = rowenc.EncodeKeyPrefix(t, k)
	}
	return out
}

func (a *analyser) planReshard(r *parser.Reshard) (statementPlan, error) {
	p := &reshardPlan{table: r.Table, replace: true}
	switch r.Mode {
	case parser.ReshardAtKeys:
		keys := r.Keys
		p.pivots = func(s *Session, t *catalog.Table) ([][]byte, error) {
			if hiddenKeyColumn(t) >= 0 {
				return nil, sqlerr.New(sqlerr.InvalidParameterValue, "table %q has no primary key to reshard at", t.Name)
			}
			vals, err := tablesettings.KeyBoundaries(keys, t.SettingsInfo())
			if err != nil {
				return nil, err
			}
			return encodePivots(t, vals), nil
		}
	case parser.ReshardUniform:
		n := r.Count
		p.pivots = func(s *Session, t *catalog.Table) ([][]byte, error) {
			vals, err := tablesettings.UniformPivots(t.Columns[t.PrimaryKey[0]].Type, n)
			if err != nil {
				return nil, err
			}
			keys := make([][]types.Value, len(vals))
			for i, v := range vals {
				keys[i] = []types.Value{v}
			}
			return encodePivots(t, keys), nil
		}
	case parser.ReshardBySize:
		n := r.Count
		p.pivots = func(s *Session, t *catalog.Table) ([][]byte, error) {
			pivots, err := s.e.shards.SplitBySize(t.ID, int(n))
			if err != nil {
				return nil, shardError(err)
			}
			if int64(len(pivots)) < n-1 {
				s.notice("NOTICE", sqlerr.Warning, "table %q has too little data for %d shards of equal size; it now has %d", t.Name, n, len(pivots)+1)
			}
			return pivots, nil
		}
	default:
		return nil, sqlerr.New(sqlerr.InternalError, "sql: unknown reshard mode %d", r.Mode)
	}
	return p, nil
}

// planSplitTable is TiDB's SPLIT TABLE t BY (v, ...), ...: add pivots.
func (a *analyser) planSplitTable(n *ast.SplitRegionStmt) (statementPlan, error) {
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
	if hiddenKeyColumn(t) >= 0 {
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
	return &reshardPlan{table: n.Table, pivots: func(*Session, *catalog.Table) ([][]byte, error) {
		return encodePivots(t, keys), nil
	}}, nil
}
