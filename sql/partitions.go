package sql

import (
	"context"
	"errors"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/jobs"
	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/rowenc"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/tablesettings"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// Shard-level SQL: the sys.partitions view, SHOW CREATE TABLE with the
// current boundaries, ALTER TABLE ... SET/RESET of table settings, and
// manual resharding:
//
//	ALTER TABLE t RESHARD AT ((10), (20, 'x'))  -- replace the pivots (YTsaurus pivot keys)
//	ALTER TABLE t RESHARD INTO 8 [BY SIZE]      -- 8 shards of about equal data size (tablet_count)
//	ALTER TABLE t RESHARD INTO 8 UNIFORM        -- 8 equal ranges of the first key column (--uniform)
//	SPLIT TABLE t BY (10), (20, 'x')            -- add pivots, keep the existing ones (TiDB's spelling)

// partitionRows lists every shard of the session's database.
func (s *Session) partitionRows() ([][]types.Value, error) {
	var rows [][]types.Value
	snap := s.catalogSnap()
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
	groups, err := s.shardGroupColumns(context.Background())
	if err != nil {
		return nil, err
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
			vs, err := s.e.storage.VersionBytes(context.Background(), sh.Span)
			if err != nil {
				return nil, err
			}
			gcThreshold := types.NullValue
			if !vs.Threshold.IsEmpty() {
				gcThreshold = types.NewTimestamp(vs.Threshold.WallTime / 1000)
			}
			locks := int64(0)
			if err := mvcc.ScanLocks(s.e.storage.LocalReader(), sh.Span, func(mvcc.LockRecord) error {
				locks++
				return nil
			}); err != nil {
				return nil, err
			}
			rows = append(rows, append([]types.Value{
				types.NewUtf8(t.Name), types.NewInt64(int64(k)), types.NewInt64(int64(sh.ID)),
				types.NewUtf8(formatPivot(t, sh.Span.Start)), types.NewUtf8(end),
				size, count, types.NewInt64(st.Reads), types.NewInt64(st.Writes),
				ttlLastRun, types.NewInt64(sh.TTLRowsErased()),
				types.NewInt64(counters.Splits), types.NewInt64(counters.Merges),
				types.NewBool(s.e.storage.KeyFilterEnabled(t.ID)), types.NewInt64(int64(filterBytes[t.ID])),
				types.NewInt64(vs.OldBytes), types.NewInt64(vs.OldCount), gcThreshold, types.NewInt64(locks),
			}, groups.values(sh.Span.Start)...))
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
func (s *Session) showCreateTable(st *bind.ShowCreateTable) (Result, error) {
	stmt, err := s.createStatement(st.Table)
	if err != nil {
		return nil, err
	}
	return showRows(st, [][]types.Value{{types.NewUtf8(st.Table.Name), types.NewUtf8(stmt)}}), nil
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
	if t.HiddenKeyColumn() < 0 {
		keys := make([]string, len(t.PrimaryKey))
		for i, name := range t.KeyColumnNames() {
			keys[i] = tablesettings.QuoteIdent(name)
		}
		lines = append(lines, "    PRIMARY KEY ("+strings.Join(keys, ", ")+")")
	}
	for _, c := range t.Checks {
		line := "    CONSTRAINT " + tablesettings.QuoteIdent(c.Name) + " CHECK (" + c.Expr + ")"
		if c.NotValid {
			line += " NOT VALID"
		}
		lines = append(lines, line)
	}
	actions := map[byte]string{'r': "RESTRICT", 'c': "CASCADE", 'n': "SET NULL", 'd': "SET DEFAULT"}
	for _, fk := range t.ForeignKeys {
		parent, ok := s.catalogSnap().TableByID(fk.RefTable)
		if !ok {
			continue
		}
		cols := make([]string, len(fk.Columns))
		for i, c := range fk.Columns {
			cols[i] = tablesettings.QuoteIdent(t.Columns[c].Name)
		}
		refs := make([]string, len(parent.PrimaryKey))
		for i, name := range parent.KeyColumnNames() {
			refs[i] = tablesettings.QuoteIdent(name)
		}
		line := "    CONSTRAINT " + tablesettings.QuoteIdent(fk.Name) + " FOREIGN KEY (" + strings.Join(cols, ", ") +
			") REFERENCES " + tablesettings.QuoteIdent(parent.Name) + " (" + strings.Join(refs, ", ") + ")"
		if a := actions[fk.OnDelete]; a != "" {
			line += " ON DELETE " + a
		}
		if a := actions[fk.OnUpdate]; a != "" {
			line += " ON UPDATE " + a
		}
		lines = append(lines, line)
	}
	b.WriteString(strings.Join(lines, ",\n"))
	b.WriteString("\n)")
	pivots, err := s.tablePivots(t)
	if err != nil {
		return "", err
	}
	if with := t.Settings.RenderWithPivots(pivots); with != "" {
		b.WriteString("\n" + with)
	}
	return b.String(), nil
}

func (s *Session) alterSettings(ctx context.Context, p *bind.AlterSettings) (Result, error) {
	var old, cur *catalog.Table
	err := s.ddl(func(ch *catalog.Change, pch *partition.Change, b *storage.Batch) error {
		t, err := tableIn(ch.Snapshot(), s, p.Table)
		if err != nil {
			return err
		}
		settings, notices, err := tablesettings.ApplyAlter(t.Settings, p.AlterSettings, t.SettingsInfo())
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
	if s.tddl != nil && s.tddl.pending != nil {
		// In a transaction block, after its commit (finishTxnDDL).
		s.tddl.settingsOf = append(s.tddl.settingsOf, old)
	} else if old != nil {
		s.e.keyFilterChanged(old, cur)
	}
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
	// Every caller changes the table (its settings or its shards).
	if err := ownTable(s.access(snap), t); err != nil {
		return nil, err
	}
	return t, nil
}

// reshard runs as a job (sys.jobs). It changes metadata only (no row
// moves), so it reports no row progress and cannot be cancelled.
func (s *Session) reshard(ctx context.Context, p *bind.Reshard) (Result, error) {
	err := s.runJob(ctx, jobs.KindReshard, false, func(context.Context) error {
		t, err := tableIn(s.catalogSnap(), s, p.Table)
		if err != nil {
			return err
		}
		pivots, err := s.reshardPivots(p, t)
		if err != nil {
			return err
		}
		if _, err = s.e.shards.Reshard(t.ID, pivots); err != nil {
			return shardError(err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &tagResult{tag: "ALTER TABLE"}, nil
}

// reshardPivots computes the new boundaries of RESHARD AT, INTO n UNIFORM
// and INTO n [BY SIZE].
func (s *Session) reshardPivots(p *bind.Reshard, t *catalog.Table) ([][]byte, error) {
	switch p.Mode {
	case parser.ReshardAtKeys:
		if t.HiddenKeyColumn() >= 0 {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "table %q has no primary key to reshard at", t.Name)
		}
		vals, err := tablesettings.KeyBoundaries(p.Keys, t.SettingsInfo())
		if err != nil {
			return nil, err
		}
		return encodePivots(t, vals), nil
	case parser.ReshardUniform:
		vals, err := tablesettings.UniformPivots(t.Columns[t.PrimaryKey[0]].Type, p.Count)
		if err != nil {
			return nil, err
		}
		keys := make([][]types.Value, len(vals))
		for i, v := range vals {
			keys[i] = []types.Value{v}
		}
		return encodePivots(t, keys), nil
	case parser.ReshardBySize:
		n := p.Count
		pivots, err := s.e.shards.SplitBySize(t.ID, int(n))
		if err != nil {
			return nil, shardError(err)
		}
		if int64(len(pivots)) < n-1 {
			s.notice("NOTICE", sqlerr.Warning, "table %q has too little data for %d shards of equal size; it now has %d", t.Name, n, len(pivots)+1)
		}
		return pivots, nil
	}
	return nil, sqlerr.New(sqlerr.InternalError, "sql: unknown reshard mode %d", p.Mode)
}

// split is SPLIT TABLE: it adds the bound keys to the table's pivots.
// It runs as a RESHARD job, like reshard.
func (s *Session) split(ctx context.Context, p *bind.Split) (Result, error) {
	err := s.runJob(ctx, jobs.KindReshard, false, func(context.Context) error {
		t, err := tableIn(s.catalogSnap(), s, p.Table)
		if err != nil {
			return err
		}
		if _, err := s.e.shards.Split(t.ID, encodePivots(p.Bound, p.Keys)); err != nil {
			return shardError(err)
		}
		return nil
	})
	if err != nil {
		return nil, err
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

// tablePivots are the key values at which the table's shards start, after
// the first: what SHOW CREATE TABLE and pg_class.reloptions print as
// PARTITION_AT_KEYS. A table without a primary key has none (its hidden
// key is not something a user can write).
func (s *Session) tablePivots(t *catalog.Table) ([][]types.Value, error) {
	var pivots [][]types.Value
	if sm := s.e.shards.Map(t.ID); sm != nil && t.HiddenKeyColumn() < 0 {
		for _, p := range sm.Splits() {
			vals, err := pivotValues(t, p)
			if err != nil {
				return nil, err
			}
			pivots = append(pivots, vals)
		}
	}
	return pivots, nil
}

// tableOptions is pg_class.reloptions of a table: its settings with the
// current shard boundaries as PARTITION_AT_KEYS (pg_dump writes them back
// as CREATE TABLE ... WITH (...)).
func (s *Session) tableOptions(t *catalog.Table) ([]string, error) {
	pivots, err := s.tablePivots(t)
	if err != nil {
		return nil, err
	}
	opts := t.Settings.OptionsWithPivots(pivots)
	// The key columns that allow NULL, which pg_dump's ADD PRIMARY KEY
	// would otherwise make NOT NULL (tablesettings/nullablekey.go).
	var nullable []string
	for _, k := range t.PrimaryKey {
		if c := t.Columns[k]; !c.NotNull && !c.Hidden {
			nullable = append(nullable, c.Name)
		}
	}
	if o := tablesettings.NullableKeyOption(nullable); o != "" {
		opts = append(opts, o)
	}
	return opts, nil
}
