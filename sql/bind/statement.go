package bind

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/tablesettings"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Statement is a bound statement: plain data that the sql root runs
// (Session.run, one switch over these types). Nothing here executes.
type Statement interface {
	// Columns describes the result rows, hidden columns last (nil: the
	// statement returns no rows).
	Columns() []planner.Column
}

// noRows is embedded by statements that return no rows.
type noRows struct{}

func (noRows) Columns() []planner.Column { return nil }

// utf8Columns are result columns of text, named.
func utf8Columns(names ...string) []planner.Column {
	cols := make([]planner.Column, len(names))
	for i, n := range names {
		cols[i] = planner.Column{Name: n, Type: types.TypeUtf8}
	}
	return cols
}

// Select is a query: SELECT, a set operation, VALUES.
type Select struct {
	Node planner.Node
	// Locking are the row locks of its FOR UPDATE / FOR NO KEY UPDATE /
	// FOR SHARE / FOR KEY SHARE clauses, one per locked table (nil: none).
	Locking []RowLock
	// AsOf is its AS OF SYSTEM TIME clause (nil: read the present).
	AsOf *AsOf
}

func (s *Select) Columns() []planner.Column { return s.Node.Columns() }

// InsertMode is the write semantics of design.md §3.3.
type InsertMode int

const (
	ModeInsert  InsertMode = iota // fail on an existing key (23505)
	ModeUpsert                    // update only the listed columns of an existing row
	ModeReplace                   // overwrite the whole row
)

// Verb is the statement's name, as its command tag spells it.
func (m InsertMode) Verb() string {
	return [...]string{"INSERT", "UPSERT", "REPLACE"}[m]
}

// Insert writes rows produced by a VALUES list or a query.
type Insert struct {
	Table  *catalog.Table
	Mode   InsertMode
	Target []int // table column of each source column
	Source planner.Node
	// Defaults[i] computes column i when it is not a target (nil: NULL).
	Defaults []expr.Expr
	// Computed[i] is the expression of computed column i (nil otherwise).
	Computed []expr.Expr
	// Checks are the table's CHECK constraints over the written row.
	Checks []Check
	// FK is the table's foreign keys, both ways (nil: none).
	FK *FKGraph
	// Conflict is ON CONFLICT (nil: none).
	Conflict *Conflict
	// Returning is the RETURNING list (nil: none).
	Returning *Returning
}

func (p *Insert) Columns() []planner.Column { return p.Returning.Columns() }

// Modify is UPDATE or DELETE: the rows Scan finds are locked, re-read and
// re-checked against Scan.Filter before they change, so that a row changed
// by a concurrent transaction since the scan is judged as it is now.
type Modify struct {
	Scan     *planner.Scan
	Update   bool        // UPDATE (else DELETE)
	Assign   []int       // UPDATE: column indexes
	Values   []expr.Expr // UPDATE: new values, evaluated on the old row
	Computed []expr.Expr // UPDATE: computed columns, recomputed on the new row
	Checks   []Check     // UPDATE: CHECK constraints over the new row
	FK       *FKGraph    // the table's foreign keys, both ways (nil: none)
	// Returning is the RETURNING list (nil: none).
	Returning *Returning
}

func (p *Modify) Columns() []planner.Column { return p.Returning.Columns() }

// Truncate is TRUNCATE t, ...: it empties the tables and their indexes
// in one schema change.
type Truncate struct {
	noRows
	*parser.Truncate
}

// Lock is LOCK TABLE: the tables are resolved when it runs.
type Lock struct {
	noRows
	*parser.Lock
}

// Vacuum is VACUUM (compact the tables' spans) and ANALYZE (recount their
// shard statistics).
type Vacuum struct {
	noRows
	*parser.Vacuum
}

// CreateTable creates a table from a validated descriptor (IDs unset).
type CreateTable struct {
	noRows
	Table       *catalog.Table
	IfNotExists bool
	// Pivots are the initial shard boundaries (without the empty pivot 0).
	Pivots  [][]types.Value
	Notices []tablesettings.Notice
	// Temp is set for CREATE TEMP TABLE (Table.Name is then the
	// session-private name); OnCommit is its ON COMMIT action ("",
	// "preserve rows", "delete rows", "drop").
	Temp     bool
	OnCommit string
	// Sequences are the sequences of the table's serial and identity
	// columns (OwnerColumn set, IDs and OwnerTable unset), created with it.
	Sequences []*catalog.Sequence
}

// DropTables is DROP TABLE [IF EXISTS] t, ...
type DropTables struct {
	noRows
	Tables   []*ast.TableName
	IfExists bool
}

// CreateDatabase is CREATE DATABASE [IF NOT EXISTS] name.
type CreateDatabase struct {
	noRows
	Name        string
	IfNotExists bool
	// HasOptions is set when options were given; they are refused when
	// the statement runs.
	HasOptions bool
}

// DropDatabase is DROP DATABASE [IF EXISTS] name.
type DropDatabase struct {
	noRows
	Name     string
	IfExists bool
}

// CreateView is CREATE VIEW: the query was bound once so that a view that
// could not be used is refused; the catalog keeps the statement's text.
type CreateView struct {
	noRows
	Name, Text string
	// Dialect is the sql_dialect Text is written in ("" for yql).
	Dialect string
}

// DropViews is DROP VIEW [IF EXISTS] v, ...
type DropViews struct {
	noRows
	Views    []*ast.TableName
	IfExists bool
}

// CreateIndex is CREATE [UNIQUE] INDEX [IF NOT EXISTS] name ON t (cols).
type CreateIndex struct {
	noRows
	Table       string
	Spec        IndexSpec
	IfNotExists bool
}

// DropIndex is DROP INDEX [IF EXISTS] name.
type DropIndex struct {
	noRows
	*parser.DropIndex
}

// Reindex is REINDEX [INDEX | TABLE] name.
type Reindex struct {
	noRows
	*parser.Reindex
}

// AlterSettings is ALTER TABLE t SET (...) / SET k v / RESET (...).
type AlterSettings struct {
	noRows
	*parser.AlterSettings
}

// Reshard is ALTER TABLE t RESHARD: it replaces the table's pivots.
type Reshard struct {
	noRows
	*parser.Reshard
}

// Split is SPLIT TABLE t BY (v, ...), ...: it adds pivots, Keys encoded
// against Bound, the table as the statement was bound.
type Split struct {
	noRows
	Table *ast.TableName
	Bound *catalog.Table
	Keys  [][]types.Value
}

// Txn is BEGIN / COMMIT / ROLLBACK and their spellings.
type Txn struct {
	noRows
	*parser.TxnStmt
	// AsOf is the AS OF SYSTEM TIME mode of BEGIN or SET TRANSACTION
	// (nil: none).
	AsOf *AsOf
}

// Set is SET name = value.
type Set struct {
	noRows
	*parser.SetVar
}

// Reset is RESET name / RESET ALL.
type Reset struct {
	noRows
	*parser.ResetVar
}

// Deallocate is SQL-level DEALLOCATE.
type Deallocate struct {
	noRows
	*parser.Deallocate
}

// Discard is DISCARD ALL (other targets are refused when it runs).
type Discard struct {
	noRows
	Target string
}

// User is CREATE / ALTER / DROP USER (ROLE).
type User struct {
	noRows
	*parser.UserStmt
}

// RoleSetting is ALTER DATABASE/ROLE ... SET/RESET.
type RoleSetting struct {
	noRows
	*parser.RoleSetting
}

// Grant is GRANT or REVOKE; its objects and roles are resolved when it
// runs, against the catalog it changes.
type Grant struct {
	noRows
	*parser.Grant
}

// AlterOwner is ALTER TABLE|VIEW|DATABASE name OWNER TO role, resolved
// when it runs.
type AlterOwner struct {
	noRows
	*parser.AlterOwner
}

// Comment is COMMENT ON TABLE|COLUMN|INDEX, resolved when it runs.
type Comment struct {
	noRows
	*parser.Comment
}

// ShowVar is SHOW name / SHOW ALL; Name is lower case and known.
type ShowVar struct {
	Name string
	All  bool
}

func (s *ShowVar) Columns() []planner.Column {
	if s.All {
		return utf8Columns("name", "setting")
	}
	return utf8Columns(s.Name)
}

// ShowTables is SHOW TABLES of the session's database.
type ShowTables struct{}

func (*ShowTables) Columns() []planner.Column { return utf8Columns("table_name") }

// ShowDatabases is SHOW DATABASES.
type ShowDatabases struct{}

func (*ShowDatabases) Columns() []planner.Column { return utf8Columns("database_name") }

// ShowCreateTable prints a statement that recreates Table, with its
// settings and its current shard boundaries.
type ShowCreateTable struct{ Table *catalog.Table }

func (*ShowCreateTable) Columns() []planner.Column {
	return utf8Columns("table_name", "create_statement")
}

// Explain renders the plan of a query or a write; the lines are built when
// it runs, against the shard maps of that moment.
type Explain struct {
	// Node is the query's plan, or the plan that finds a write's rows (an
	// INSERT's source, an UPDATE's or DELETE's scan).
	Node planner.Node
	// Write is the INSERT (*Insert) or UPDATE/DELETE (*Modify) explained;
	// nil for a query. Its operator is shown above Node.
	Write Statement
	// Analyze runs the statement and shows what each operator did;
	// Timing measures each operator's time, Summary adds the planning and
	// execution time (both on by default with Analyze).
	Analyze, Timing, Summary bool
	// Verbose adds each operator's output columns and each table read's
	// shards; Costs each table read's estimated rows (from shard
	// statistics: PivotDB has no cost model, so EXPLAIN shows no costs
	// unless asked); JSON prints the tree as one JSON document.
	Verbose, Costs, JSON bool
}

func (*Explain) Columns() []planner.Column { return utf8Columns("QUERY PLAN") }

// JobStatement is SHOW JOBS, SHOW JOB id, CANCEL JOB id, PAUSE JOB id or
// RESUME JOB id.
type JobStatement struct{ *parser.JobStmt }

func (j *JobStatement) Columns() []planner.Column {
	if j.Kind == parser.JobShowAll || j.Kind == parser.JobShow {
		return JobColumns
	}
	return nil
}
