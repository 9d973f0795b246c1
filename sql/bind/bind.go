package bind

import (
	"context"
	"fmt"
	"github.com/pivotdb/pivotdb/activity"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/memory"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/pgcatalog"
	"github.com/pivotdb/pivotdb/sql/sessionvars"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Env is what binding reads besides the statement: the session's
// database, user and settings, the clock, one catalog snapshot, and the
// rows of sys.partitions. A session fills it; tests can fill it by hand.
type Env struct {
	Snapshot *catalog.Snapshot
	// Current is the newest committed catalog when Snapshot is an older
	// one (AS OF SYSTEM TIME): the role must hold its privileges there
	// too (privileges.go); nil otherwise.
	Current  *catalog.Snapshot
	Database *catalog.Database
	User     string
	// Settings are the session's settings, read when a statement's rows
	// are computed (current_setting, pg_settings).
	Settings *sessionvars.Vars
	// Now is the clock that evaluates constant expressions while binding
	// (a DEFAULT checked at CREATE TABLE, SPLIT TABLE's keys).
	Now func() time.Time
	// TempPrefix is the catalog-name prefix of the session's temporary
	// tables (temp.go); "": the session has none.
	TempPrefix string
	// JobRows computes the rows of sys.jobs (JobColumns) when the
	// statement runs.
	JobRows func() ([][]types.Value, error)
	// NodeRows computes the rows of sys.nodes (NodeColumns) when the
	// statement runs.
	NodeRows func() ([][]types.Value, error)
	// PartitionRows computes the rows of sys.partitions; it is called when
	// a statement that reads the view runs, not while it is bound.
	PartitionRows func() ([][]types.Value, error)
	// Mem is the statement's memory account: expression builders reserve
	// its IN lists and long constants there (53200 over the budget). nil:
	// no budget.
	Mem *memory.Account
	// Backend is the session's entry in the registry of live sessions
	// (pg_stat_activity, pg_backend_pid); nil without a server.
	Backend *activity.Backend
	// TableStats reads a table's activity counters and live rows for
	// pg_stat_user_tables when a statement that reads it runs.
	TableStats func(tableID uint64) (pgcatalog.TableStats, error)
	// RelationSize is the data size of a table's or index's shards
	// (pg_relation_size and its kind).
	RelationSize func(id uint64) (int64, error)
	// TableOptions lists a table's settings, current shard boundaries
	// included, for pg_class.reloptions.
	TableOptions func(t *catalog.Table) ([]string, error)
	// Notice sends a NOTICE to the client (set_config).
	Notice func(msg string)
	// SequenceRow computes the one row a sequence reads as in FROM
	// (last_value, log_cnt, is_called) when the statement runs, checking
	// the session's right to read it.
	SequenceRow func(q *catalog.Sequence) ([]types.Value, error)
	// UseTable, when set, is told of every table the statement reads or
	// writes (views expanded), for the table locks it takes when it runs.
	UseTable func(t *catalog.Table, u TableUse)
	// Locks lists the row locks for pg_locks.
	Locks func() ([]pgcatalog.LockRow, error)
	// Cursor returns the result columns of the session's open cursor
	// name (FETCH returns its rows); ok is false when there is none.
	Cursor func(name string) (cols []planner.Column, ok bool)
	// OpenCursors lists the session's open cursors for pg_cursors; it is
	// called when a statement that reads the view runs.
	OpenCursors func() []pgcatalog.Cursor
}

// pg reports whether the session's sql_dialect is postgresql: division by
// zero raises 22012 and NULLs sort as the largest values.
func (a *binder) pg() bool {
	return a.env.Settings != nil && a.env.Settings.PostgreSQLDialect()
}

// Bind turns one parsed statement into a Statement against env. declared
// are the parameter types the client gave ($n; missing or unknown entries
// are inferred); params are all of them, as inferred, a parameter nothing
// constrains typed text as in PostgreSQL.
func Bind(st *parser.Statement, declared []types.Type, env *Env) (stmt Statement, params []types.Type, err error) {
	n := max(st.NumParams, len(declared))
	for _, w := range st.WithDML {
		n = max(n, w.Stmt.NumParams)
	}
	params = make([]types.Type, n)
	for i := range params {
		params[i] = types.TypeUnknown
	}
	copy(params, declared)
	a := &binder{env: env, snap: env.Snapshot, stmt: st, params: params}
	stmt, err = a.plan()
	if err != nil {
		return nil, nil, sqlerr.WithPosition(err, 0)
	}
	for i, t := range a.params {
		if t.Family == types.Unknown || t.Family == types.Null {
			a.params[i] = types.TypeUtf8
		}
	}
	return stmt, a.params, nil
}

// binder turns one parsed statement into a Statement against one
// catalog snapshot, inferring parameter types on the way.
type binder struct {
	env    *Env
	snap   *catalog.Snapshot
	stmt   *parser.Statement
	params []types.Type
	// viewDepth counts the views being expanded around this binder.
	viewDepth int
	// funcDepth counts the SQL functions being inlined (function.go).
	funcDepth int
	// fnArgs, while a set-returning function's body is planned, are its
	// arguments (setfunc.go).
	fnArgs *setFuncArgs

	// outer holds the queries enclosing the subquery being planned
	// (subquery.go); hiddenBase and hiddenN number the parameters that
	// carry their values.
	outer      []*outerLevel
	hiddenBase int
	hiddenN    int
	// setOpArm is set while the SELECT of a set operation's arm is
	// planned: its select list stays untyped (setop.go).
	setOpArm bool
	// ctes are the WITH queries in scope, innermost last (cte.go).
	ctes []*cteDef
	// checkAs is the role privileges are checked for inside a view (its
	// owner); "" outside views: the session's user. acc caches its Access.
	checkAs string
	acc     *catalog.Access
	// onRelation, when set, hears of every table and view the query
	// reads, with the role it is read for (lockview.go).
	onRelation func(LockRelation)
}

func (a *binder) plan() (Statement, error) {
	st := a.stmt
	_, explain := st.AST.(*ast.ExplainStmt)
	if (len(st.Locking) > 0 || st.AsOf != nil) && (len(st.WithDML) > 0 || st.Cursor != nil || explain) {
		return a.planQueryClausesElsewhere()
	}
	switch {
	case len(st.WithDML) > 0:
		return a.planWithDML()
	case st.Txn != nil:
		asOf, err := a.bindAsOf(st.Txn.AsOf)
		if err != nil {
			return nil, err
		}
		return &Txn{TxnStmt: st.Txn, AsOf: asOf}, nil
	case st.Set != nil:
		return &Set{SetVar: st.Set}, nil
	case st.Show != nil:
		return a.planShowVar(st.Show)
	case st.Reset != nil:
		return &Reset{ResetVar: st.Reset}, nil
	case st.Deallocate != nil:
		return &Deallocate{Deallocate: st.Deallocate}, nil
	case st.Discard != nil:
		return &Discard{Target: st.Discard.Target}, nil
	case st.Settings != nil:
		return &AlterSettings{AlterSettings: st.Settings}, nil
	case st.Reshard != nil:
		return a.planReshard(st.Reshard)
	case st.DropIndex != nil:
		return &DropIndex{DropIndex: st.DropIndex}, nil
	case st.Reindex != nil:
		return &Reindex{Reindex: st.Reindex}, nil
	case st.Unsupported != nil:
		return nil, &sqlerr.Error{Code: sqlerr.FeatureNotSupported,
			Message: st.Unsupported.What + " is not supported",
			Hint:    "PivotDB has no triggers; run the trigger's statements from the application."}
	case st.User != nil:
		return &User{UserStmt: st.User}, nil
	case st.Truncate != nil:
		return &Truncate{Truncate: st.Truncate}, nil
	case st.Vacuum != nil:
		return &Vacuum{Vacuum: st.Vacuum}, nil
	case st.Lock != nil:
		return &Lock{Lock: st.Lock}, nil
	case st.Sequence != nil:
		return a.planSequence(st.Sequence)
	case st.Type != nil:
		return &TypeDDL{TypeStmt: st.Type}, nil
	case st.Function != nil:
		return a.planFunction(st.Function)
	case st.RoleSetting != nil:
		return &RoleSetting{RoleSetting: st.RoleSetting}, nil
	case st.Copy != nil:
		return a.planCopy(st.Copy)
	case st.Cursor != nil:
		return a.planCursor(st.Cursor)
	case st.Job != nil:
		return &JobStatement{JobStmt: st.Job}, nil
	case st.Cluster != nil:
		return &ClusterStatement{ClusterStmt: st.Cluster}, nil
	case st.Grant != nil:
		return &Grant{Grant: st.Grant}, nil
	case st.AlterOwner != nil:
		return &AlterOwner{AlterOwner: st.AlterOwner}, nil
	case st.Comment != nil:
		return &Comment{Comment: st.Comment}, nil
	case st.AST == nil:
		return nil, sqlerr.New(sqlerr.InternalError, "sql: parsed statement without content")
	}
	switch n := st.AST.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		node, _, err := a.buildQueryStmt(n)
		if err != nil {
			return nil, err
		}
		sel := &Select{Node: node}
		if sel.Locking, err = a.bindLocking(n, st.Locking); err != nil {
			return nil, err
		}
		if sel.AsOf, err = a.bindAsOf(st.AsOf); err != nil {
			return nil, err
		}
		return sel, nil
	case *ast.InsertStmt:
		return a.planInsert(n)
	case *ast.UpdateStmt:
		return a.planUpdate(n)
	case *ast.DeleteStmt:
		return a.planDelete(n)
	case *ast.CreateTableStmt:
		return a.planCreateTable(n)
	case *ast.CreateIndexStmt:
		return a.planCreateIndex(n)
	case *ast.AlterTableStmt:
		return a.planAlterTable(n)
	case *ast.DropTableStmt:
		if n.IsView {
			return &DropViews{Views: n.Tables, IfExists: n.IfExists}, nil
		}
		return &DropTables{Tables: n.Tables, IfExists: n.IfExists}, nil
	case *ast.CreateViewStmt:
		return a.planCreateView(n)
	case *ast.CreateDatabaseStmt:
		return &CreateDatabase{Name: n.Name.O, IfNotExists: n.IfNotExists, HasOptions: len(n.Options) > 0}, nil
	case *ast.DropDatabaseStmt:
		return &DropDatabase{Name: n.Name.O, IfExists: n.IfExists}, nil
	case *ast.ShowStmt:
		return a.planShow(n)
	case *ast.SplitRegionStmt:
		return a.planSplitTable(n)
	case *ast.ExplainStmt:
		return a.planExplain(n)
	}
	return nil, sqlerr.NotSupported("statement %s", statementName(st.AST))
}

// buildQueryStmt binds a query statement, a SELECT or a set operation; ok
// is false for any other statement.
func (a *binder) buildQueryStmt(n ast.Node) (node planner.Node, ok bool, err error) {
	switch q := n.(type) {
	case *ast.SelectStmt:
		node, err = a.buildSelect(q)
	case *ast.SetOprStmt:
		node, err = a.buildSetOpr(q)
	default:
		return nil, false, nil
	}
	return node, true, err
}

// statementName names a statement kind for "not supported" errors.
func statementName(n ast.StmtNode) string {
	name := fmt.Sprintf("%T", n)
	name = strings.TrimPrefix(name, "*ast.")
	name = strings.TrimSuffix(name, "Stmt")
	return name
}

// restore renders an AST node back to SQL text.
func restore(n ast.Node) string {
	var sb strings.Builder
	if err := n.Restore(format.NewRestoreCtx(format.DefaultRestoreFlags, &sb)); err != nil {
		return fmt.Sprintf("%T", n)
	}
	return sb.String()
}

// build translates an expression in a scope; replace may substitute nodes
// (aggregates, GROUP BY expressions).
func (a *binder) build(sc expr.Scope, n ast.ExprNode, replace func(ast.ExprNode) (expr.Expr, bool, error)) (expr.Expr, error) {
	return a.buildMode(sc, n, replace, false)
}

// buildMode is build; untyped leaves an untyped literal or NULL untyped
// (the select list of a set operation's arm, whose type the other arms
// decide).
func (a *binder) buildMode(sc expr.Scope, n ast.ExprNode, replace func(ast.ExprNode) (expr.Expr, bool, error), untyped bool) (expr.Expr, error) {
	b := a.builder(sc, replace)
	var e expr.Expr
	var err error
	if untyped {
		e, err = b.BuildUntyped(n)
	} else {
		e, err = b.Build(n)
	}
	a.params = b.ParamTypes
	return e, err
}

// builder returns the expression builder for scope sc (nil: none). The
// caller copies b.ParamTypes back to a.params after building.
func (a *binder) builder(sc expr.Scope, replace func(ast.ExprNode) (expr.Expr, bool, error)) *expr.Builder {
	if sc == nil {
		sc = &scope{}
	}
	b := &expr.Builder{Scope: sc, ParamTypes: a.params, ParamIndex: a.stmt.ParamIndex,
		Replace: a.outerReplace(sc, replace), Position: a.stmt.Position, Mem: a.env.Mem,
		StrictDivision: a.pg(), IntegerDateDiff: a.pg(), NumericLiterals: a.pg(), CaretPower: a.pg(), Types: a.resolveType}
	if a.fnArgs != nil {
		b.Replace = a.fnArgs.replace(a, sc, b.Replace)
	}
	b.Subquery = func(n ast.ExprNode) (expr.Expr, error) { return a.subquery(b, sc, replace, n) }
	b.Funcs = func(name string, args []expr.Expr) (expr.Expr, bool, error) {
		if e, ok, err := a.userFunction(b, name, args); ok || err != nil {
			return e, ok, err
		}
		return pgcatalog.Function(b, a.catalogView(), name, args)
	}
	return b
}

// buildStored translates an expression stored in the catalog (a DEFAULT, a
// computed column): it has no parameters and no place in the statement
// text, so its errors carry no position. It sees the session functions, as
// the DDL that stored it did (DEFAULT nextval('s'::regclass), as pg_dump
// writes serial columns; computed columns refuse them as not
// deterministic).
func (a *binder) buildStored(sc expr.Scope, n ast.ExprNode) (expr.Expr, error) {
	if sc == nil {
		sc = &scope{}
	}
	b := &expr.Builder{Scope: sc, Types: a.resolveType}
	b.Funcs = func(name string, args []expr.Expr) (expr.Expr, bool, error) {
		return pgcatalog.Function(b, a.catalogView(), name, args)
	}
	return b.Build(n)
}

// paramNumber returns the $n of a parameter marker node, or 0.
func (a *binder) paramNumber(n ast.ExprNode) int {
	pm, ok := n.(*test_driver.ParamMarkerExpr)
	if !ok {
		return 0
	}
	if pm.Order < len(a.stmt.ParamIndex) {
		return a.stmt.ParamIndex[pm.Order]
	}
	return pm.Order + 1
}

// hintParam sets the type of a bare parameter used where a value of type t
// is expected (an INSERT value, a SET assignment, LIMIT), unless the client
// declared one.
func (a *binder) hintParam(n ast.ExprNode, t types.Type) {
	k := a.paramNumber(n)
	if k == 0 || a.fnArgs != nil {
		// (In a function's body $n is an argument, not the statement's.)
		return
	}
	for len(a.params) < k {
		a.params = append(a.params, types.TypeUnknown)
	}
	if f := a.params[k-1].Family; f == types.Unknown || f == types.Null {
		a.params[k-1] = t
	}
}

// lookupTable resolves a table name of the session's database.
func (a *binder) lookupTable(tn *ast.TableName) (*catalog.Table, error) {
	if schema := tn.Schema.O; schema != "" && !strings.EqualFold(schema, a.env.Database.Name) && !strings.EqualFold(schema, "public") {
		return nil, sqlerr.NotSupported("cross-database reference %s.%s", schema, tn.Name.O)
	}
	if t, ok := a.tempTable(tn.Schema.O, tn.Name.O); ok {
		return t, nil
	}
	if IsTempName(tn.Name.O) {
		return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", tn.Name.O)
	}
	t, ok := a.snap.Table(a.env.Database.ID, tn.Name.O)
	if !ok && pgcatalog.Lookup(tn.Schema.O, tn.Name.O) != nil {
		return nil, sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for table %s: system catalog relations are read-only", tn.Name.O)
	}
	if !ok {
		if _, isView := a.snap.View(a.env.Database.ID, tn.Name.O); isView {
			return nil, sqlerr.New(sqlerr.WrongObjectType, "%q is a view, not a table", tn.Name.O)
		}
		if _, isSeq := a.snap.Sequence(a.env.Database.ID, tn.Name.O); isSeq {
			// A sequence reads as a relation in FROM only (system.go).
			return nil, sqlerr.New(sqlerr.WrongObjectType, "%q is not a table", tn.Name.O)
		}
		return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", tn.Name.O)
	}
	return t, nil
}

// evalContext evaluates an expression while binding: no parameters, the
// environment's clock.
func (a *binder) evalContext() *expr.Context {
	c := &expr.Context{Ctx: context.Background(), Now: a.env.Now()}
	if a.env.Settings != nil {
		c.Zone = a.env.Settings.Zone()
		c.Style = a.env.Settings.Style()
	}
	return c
}

// catalogView is what pg_catalog's relations and the session functions
// read.
func (a *binder) catalogView() *pgcatalog.View {
	return &pgcatalog.View{Snapshot: a.snap, Database: a.env.Database, User: a.env.User, Settings: a.env.Settings,
		Backend: a.env.Backend, TableStats: a.env.TableStats, RelationSize: a.env.RelationSize, Locks: a.env.Locks,
		Cursors: a.env.OpenCursors, TempPrefix: a.env.TempPrefix, ViewColumns: a.viewColumns,
		Notice: a.env.Notice, TableOptions: a.env.TableOptions}
}
