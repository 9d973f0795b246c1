package sql

import (
	"context"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sessionvars"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// txnPlan is BEGIN / COMMIT / ROLLBACK and their spellings.
type txnPlan struct{ stmt *parser.TxnStmt }

func (p *txnPlan) columns() []ResultColumn { return nil }

func (p *txnPlan) execute(ctx context.Context, s *Session, _ []types.Value) (Result, error) {
	st := p.stmt
	if iso := st.Isolation; iso != "" {
		if _, err := sessionvars.NormalizeIsolation(iso); err != nil {
			return nil, err
		}
	}
	switch {
	case st.Access == parser.AccessReadOnly:
		return nil, sqlerr.NotSupported("READ ONLY transactions")
	case st.Deferrable:
		return nil, sqlerr.NotSupported("DEFERRABLE transactions")
	case st.Chain:
		return nil, sqlerr.NotSupported("COMMIT/ROLLBACK AND CHAIN")
	}
	switch st.Kind {
	case parser.TxnSavepoint, parser.TxnRelease, parser.TxnRollbackTo:
		return nil, sqlerr.NotSupported("savepoints")
	case parser.TxnSetCharacteristics:
		if st.Session && st.Isolation != "" {
			if err := s.vars.Set("default_transaction_isolation", st.Isolation); err != nil {
				return nil, err
			}
		}
		return &tagResult{tag: "SET"}, nil
	case parser.TxnBegin:
		if s.inBlock() {
			s.notice("WARNING", sqlerr.ActiveSQLTransaction, "there is already a transaction in progress")
			return &tagResult{tag: "BEGIN"}, nil
		}
		// BEGIN inside an implicit transaction turns it into a block that
		// keeps the cycle's earlier writes, as in PostgreSQL.
		if s.txn == nil {
			s.txn = s.e.txns.Begin()
		}
		s.implicit = false
		return &tagResult{tag: "BEGIN"}, nil
	case parser.TxnCommit:
		if !s.inBlock() {
			s.notice("WARNING", sqlerr.NoActiveSQLTransaction, "there is no transaction in progress")
			return &tagResult{tag: "COMMIT"}, nil
		}
		t, failed := s.txn, s.failed
		s.txn, s.failed = nil, false
		if failed {
			// COMMIT of a failed block rolls back, as in PostgreSQL.
			t.Rollback()
			return &tagResult{tag: "ROLLBACK"}, nil
		}
		if err := t.Commit(); err != nil {
			return nil, err
		}
		return &tagResult{tag: "COMMIT"}, nil
	case parser.TxnRollback:
		if !s.inBlock() {
			s.notice("WARNING", sqlerr.NoActiveSQLTransaction, "there is no transaction in progress")
			return &tagResult{tag: "ROLLBACK"}, nil
		}
		s.txn.Rollback()
		s.txn, s.failed = nil, false
		return &tagResult{tag: "ROLLBACK"}, nil
	}
	return nil, sqlerr.New(sqlerr.InternalError, "sql: unknown transaction statement %v", p.stmt.Kind)
}

// setPlan is SET name = value.
type setPlan struct{ stmt *parser.SetVar }

func (p *setPlan) columns() []ResultColumn { return nil }

func (p *setPlan) execute(ctx context.Context, s *Session, _ []types.Value) (Result, error) {
	if p.stmt.Local {
		return nil, sqlerr.NotSupported("SET LOCAL")
	}
	value := strings.Join(p.stmt.Values, ", ")
	if p.stmt.Default {
		if err := s.vars.Reset(p.stmt.Name); err != nil {
			return nil, err
		}
		return &tagResult{tag: "SET"}, nil
	}
	if err := s.vars.Set(p.stmt.Name, value); err != nil {
		return nil, err
	}
	return &tagResult{tag: "SET"}, nil
}

// resetPlan is RESET name / RESET ALL.
type resetPlan struct{ stmt *parser.ResetVar }

func (p *resetPlan) columns() []ResultColumn { return nil }

func (p *resetPlan) execute(ctx context.Context, s *Session, _ []types.Value) (Result, error) {
	if p.stmt.All {
		s.vars.ResetAll()
	} else if err := s.vars.Reset(p.stmt.Name); err != nil {
		return nil, err
	}
	return &tagResult{tag: "RESET"}, nil
}

// planShowVar is SHOW name / SHOW ALL.
func (a *analyser) planShowVar(st *parser.ShowVar) (statementPlan, error) {
	if st.All {
		cols := []ResultColumn{{Name: "name", Type: types.TypeUtf8}, {Name: "setting", Type: types.TypeUtf8}}
		return &generatedPlan{cols: cols, tag: "SHOW", rows: func(s *Session) ([][]types.Value, error) {
			names := sessionvars.Names()
			rows := make([][]types.Value, len(names))
			for i, n := range names {
				val, _ := s.vars.Get(n)
				rows[i] = []types.Value{types.NewUtf8(sessionvars.DisplayName(n)), types.NewUtf8(val)}
			}
			return rows, nil
		}}, nil
	}
	name := strings.ToLower(st.Name)
	if !sessionvars.Known(name) {
		return nil, sessionvars.Unknown(st.Name)
	}
	cols := []ResultColumn{{Name: name, Type: types.TypeUtf8}}
	return &generatedPlan{cols: cols, tag: "SHOW", rows: func(s *Session) ([][]types.Value, error) {
		v, err := s.vars.Get(name)
		if err != nil {
			return nil, err
		}
		return [][]types.Value{{types.NewUtf8(v)}}, nil
	}}, nil
}

// generatedPlan returns rows computed at execution time.
type generatedPlan struct {
	cols []ResultColumn
	tag  string
	rows func(s *Session) ([][]types.Value, error)
}

func (p *generatedPlan) columns() []ResultColumn { return p.cols }

func (p *generatedPlan) execute(ctx context.Context, s *Session, _ []types.Value) (Result, error) {
	rows, err := p.rows(s)
	if err != nil {
		return nil, err
	}
	return staticRows(p.cols, rows, p.tag), nil
}

// deallocatePlan is SQL-level DEALLOCATE. PivotDB has no SQL-level PREPARE
// (drivers prepare through the protocol), so only DEALLOCATE ALL succeeds.
type deallocatePlan struct{ stmt *parser.Deallocate }

func (p *deallocatePlan) columns() []ResultColumn { return nil }

func (p *deallocatePlan) execute(ctx context.Context, s *Session, _ []types.Value) (Result, error) {
	if p.stmt.All {
		return &tagResult{tag: "DEALLOCATE ALL"}, nil
	}
	return nil, sqlerr.New(sqlerr.InvalidSQLStatementName, "prepared statement %q does not exist", p.stmt.Name)
}

// discardPlan is DISCARD ALL: reset the session's settings.
type discardPlan struct{ target string }

func (p *discardPlan) columns() []ResultColumn { return nil }

func (p *discardPlan) execute(ctx context.Context, s *Session, _ []types.Value) (Result, error) {
	if p.target != "all" {
		return nil, sqlerr.NotSupported("DISCARD %s", strings.ToUpper(p.target))
	}
	if s.inBlock() {
		return nil, sqlerr.New(sqlerr.ActiveSQLTransaction, "DISCARD ALL cannot run inside a transaction block")
	}
	s.vars.ResetAll()
	return &tagResult{tag: "DISCARD ALL"}, nil
}

// planShow handles the MySQL-style SHOW statements TiDB parses.
func (a *analyser) planShow(n *ast.ShowStmt) (statementPlan, error) {
	switch n.Tp {
	case ast.ShowCreateTable:
		return a.planShowCreateTable(n.Table)
	case ast.ShowTables:
		cols := []ResultColumn{{Name: "table_name", Type: types.TypeUtf8}}
		return &generatedPlan{cols: cols, tag: "SHOW", rows: func(s *Session) ([][]types.Value, error) {
			var rows [][]types.Value
			for _, t := range s.e.catalog.Snapshot().Tables(s.db.ID) {
				rows = append(rows, []types.Value{types.NewUtf8(t.Name)})
			}
			return rows, nil
		}}, nil
	case ast.ShowDatabases:
		cols := []ResultColumn{{Name: "database_name", Type: types.TypeUtf8}}
		return &generatedPlan{cols: cols, tag: "SHOW", rows: func(s *Session) ([][]types.Value, error) {
			var rows [][]types.Value
			for _, d := range s.e.catalog.Snapshot().Databases() {
				rows = append(rows, []types.Value{types.NewUtf8(d.Name)})
			}
			return rows, nil
		}}, nil
	}
	return nil, sqlerr.NotSupported("this SHOW statement")
}

// planExplain renders the plan of a query.
func (a *analyser) planExplain(n *ast.ExplainStmt) (statementPlan, error) {
	if n.Analyze {
		return nil, sqlerr.NotSupported("EXPLAIN ANALYZE")
	}
	var node planner.Node
	var err error
	switch stmt := n.Stmt.(type) {
	case *ast.SelectStmt:
		node, err = a.buildSelect(stmt)
	case *ast.SetOprStmt:
		node, err = a.buildSetOpr(stmt)
	default:
		return nil, sqlerr.NotSupported("EXPLAIN of this statement")
	}
	if err != nil {
		return nil, err
	}
	s := a.s
	lines := planner.Explain(node, func(scan *planner.Scan) []string { return s.explainScan(scan) })
	cols := []ResultColumn{{Name: "QUERY PLAN", Type: types.TypeUtf8}}
	return &generatedPlan{cols: cols, tag: "EXPLAIN", rows: func(*Session) ([][]types.Value, error) {
		rows := make([][]types.Value, len(lines))
		for i, l := range lines {
			rows[i] = []types.Value{types.NewUtf8(l)}
		}
		return rows, nil
	}}, nil
}

// explainScan describes a table read for EXPLAIN (design.md §6): the access
// path, `ranges=N partitions=K/T`, the ranges one per line, and the filter
// still applied to the rows read. Parameters are unknown at EXPLAIN time,
// so ranges that depend on them print unnarrowed.
func (s *Session) explainScan(scan *planner.Scan) []string {
	var rs planner.Ranges
	filter := scan.Filter
	read, prog := scan.Table, scan.Ranges
	if scan.Index != nil {
		// The ranges are over the index's entries; the rows are then
		// fetched by primary key and the whole condition applies to them.
		read, prog = scan.IndexEntries, scan.IndexRanges
	}
	if prog == nil {
		rs = planner.Ranges{{Upper: planner.Bound{Max: true}}}
	} else {
		res := prog.Evaluate(nil, s.vars.RangeExpansionLimit())
		rs, filter = res.Ranges, res.Filter
	}
	if scan.Index != nil {
		filter = scan.Filter
	}
	spans := rs.ToSpans(read)
	total, touched := 1, 1
	if sm := s.e.shards.Map(read.ID); sm != nil {
		total = sm.Len()
		starts := make([][]byte, sm.Len())
		for i := range starts {
			starts[i] = sm.Shard(i).Span.Start
		}
		touched = len(planner.Prune(spans, starts))
	}
	if len(rs) == 0 {
		touched = 0
	}
	access := accessPath(read, rs)
	if scan.Index != nil {
		access = "index " + scan.Index.Name + " " + access + ", rows by primary key"
	}
	out := []string{"access: " + access, planner.ExplainReadHeader(len(rs), touched, total)}
	out = append(out, planner.ExplainRanges(rs, 0)...)
	if filter != nil {
		out = append(out, "filter: "+filter.String())
	}
	return out
}

// accessPath names how a scan reads: every range a full-key point is a
// point lookup, one range over the whole table a full scan.
func accessPath(t *catalog.Table, rs planner.Ranges) string {
	switch {
	case len(rs) == 0:
		return "none (the condition is never true)"
	case len(rs) == 1 && len(rs[0].Lower.Values) == 0 && rs[0].Upper.Max && len(rs[0].Upper.Values) == 0:
		return "full scan"
	}
	for _, r := range rs {
		n := len(t.PrimaryKey)
		if len(r.Lower.Values) != n || r.Lower.Max || len(r.Upper.Values) != n || !r.Upper.Max ||
			types.CompareRows(r.Lower.Values, r.Upper.Values) != 0 {
			return "range scan"
		}
	}
	return "point lookup"
}
