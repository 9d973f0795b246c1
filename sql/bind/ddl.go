package bind

import (
	"fmt"
	"strings"
	"sync"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/tablesettings"
	"github.com/pivotdb/pivotdb/sql/types"
)

// hiddenKeyName is the generated key column of a table created without
// PRIMARY KEY (design.md §3.2). It is never shown by SELECT *.
const hiddenKeyName = "__pivot_rowid"

// parseExpr parses the SQL text of one expression (a stored DEFAULT).
func parseExpr(text string) (ast.ExprNode, error) {
	stmts, err := parser.Parse("SELECT " + text)
	if err != nil {
		return nil, err
	}
	if len(stmts) != 1 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "invalid expression %q", text)
	}
	sel, ok := stmts[0].AST.(*ast.SelectStmt)
	if !ok || len(sel.Fields.Fields) != 1 || sel.Fields.Fields[0].Expr == nil {
		return nil, sqlerr.New(sqlerr.SyntaxError, "invalid expression %q", text)
	}
	return sel.Fields.Fields[0].Expr, nil
}

// planCreateTable binds CREATE TABLE into a validated descriptor: columns,
// constraints, primary key (a hidden generated one when none is declared),
// computed columns, settings, indexes and the initial shard boundaries.
func (a *binder) planCreateTable(n *ast.CreateTableStmt) (Statement, error) {
	if schema := n.Table.Schema.O; schema != "" && !strings.EqualFold(schema, a.env.Database.Name) && !strings.EqualFold(schema, "public") {
		return nil, sqlerr.NotSupported("creating a table in another database (%s)", schema)
	}
	if n.Select != nil && n.ReferTable == nil && n.TemporaryKeyword == ast.TemporaryNone && len(n.Options) == 0 && n.Partition == nil {
		return a.planCreateTableAs(n)
	}
	if err := createTableForm(n); err != nil {
		return nil, err
	}
	d := &tableDef{t: &catalog.Table{DatabaseID: a.env.Database.ID, Name: n.Table.Name.O}, computed: map[int]ast.ExprNode{}}
	for _, cd := range n.Cols {
		if err := a.addColumn(d, cd); err != nil {
			return nil, err
		}
	}
	for _, c := range n.Constraints {
		if err := d.addConstraint(c); err != nil {
			return nil, err
		}
	}
	ct, err := a.finishCreateTable(n, d)
	if err != nil {
		return nil, err
	}
	return ct, nil
}

// finishCreateTable checks a table definition's columns, primary key
// (adding the hidden key when none is declared), settings and indexes.
func (a *binder) finishCreateTable(n *ast.CreateTableStmt, d *tableDef) (*CreateTable, error) {
	t := d.t
	if err := a.tempCreate(t); err != nil {
		return nil, err
	}
	if len(t.Columns) == 0 {
		return nil, sqlerr.New(sqlerr.InvalidTableDefinition, "table %q must have at least one column", t.Name)
	}
	seqs, err := a.identityColumns(t, a.stmt.Identities)
	if err != nil {
		return nil, err
	}
	if err := d.resolvePrimaryKey(); err != nil {
		return nil, err
	}
	if a.pg() {
		// PostgreSQL's PRIMARY KEY implies NOT NULL on its columns; YQL's
		// leaves a key column nullable unless it is declared NOT NULL
		// (design §3.2).
		for _, i := range t.PrimaryKey {
			t.Columns[i].NotNull = true
		}
	}
	if err := a.checkComputed(t, d.computed); err != nil {
		return nil, err
	}
	for _, c := range d.checks {
		if _, err := a.addCheck(t, c.name, c.expr, c.column, false); err != nil {
			return nil, err
		}
	}
	if !d.pkDeclared {
		t.NextColumnID++
		t.Columns = append(t.Columns, catalog.Column{ID: t.NextColumnID, Name: hiddenKeyName, Type: types.TypeUint64, NotNull: true, Hidden: true})
		t.PrimaryKey = []int{len(t.Columns) - 1}
	}
	// A foreign key to the table itself gets the table's id when it is
	// created (RefTable 0 until then).
	for _, fk := range d.fks {
		if err := a.addForeignKey(t, fk); err != nil {
			return nil, err
		}
	}
	settings, notices, err := tablesettings.ForCreate(a.stmt.With, t.SettingsInfo())
	if err != nil {
		return nil, err
	}
	t.Settings = settings
	if err := d.resolveIndexes(); err != nil {
		return nil, err
	}
	pivots, err := settings.InitialPivots(t.SettingsInfo())
	if err != nil {
		return nil, err
	}
	return &CreateTable{Table: t, IfNotExists: n.IfNotExists, Pivots: pivots, Notices: notices, Sequences: seqs,
		Temp: a.stmt.Temp, OnCommit: a.stmt.OnCommit}, nil
}

// createTableForm refuses the forms of CREATE TABLE PivotDB does not have.
func createTableForm(n *ast.CreateTableStmt) error {
	switch {
	case n.ReferTable != nil:
		return sqlerr.NotSupported("CREATE TABLE ... LIKE")
	case n.Select != nil:
		return sqlerr.NotSupported("CREATE TABLE ... AS SELECT")
	case n.TemporaryKeyword != ast.TemporaryNone:
		return sqlerr.NotSupported("temporary tables")
	case len(n.Options) > 0:
		return sqlerr.NotSupported("MySQL table option %s", restore(n.Options[0]))
	case n.Partition != nil:
		return sqlerr.NotSupported("PARTITION BY (use WITH (UNIFORM_PARTITIONS = N) or PARTITION_AT_KEYS)")
	}
	return nil
}

// tableDef collects a CREATE TABLE's definition as its columns and
// constraints are read.
type tableDef struct {
	t          *catalog.Table
	pk         []string // primary key column names, as declared
	pkDeclared bool
	indexes    []IndexSpec
	computed   map[int]ast.ExprNode // column index → AS (expr)
	checks     []checkDef
	fks        []fkDef
}

// checkDef is a CHECK constraint as declared, added once every column is
// known.
type checkDef struct {
	name, column string // column: the column it is declared on, if any
	expr         ast.ExprNode
}

// addColumn adds a column definition with its options.
func (a *binder) addColumn(d *tableDef, cd *ast.ColumnDef) error {
	t := d.t
	typ, err := parser.ColumnType(cd)
	if err != nil {
		return err
	}
	if typ, err = a.resolveType(typ); err != nil {
		return err
	}
	if t.ColumnIndex(cd.Name.Name.O) >= 0 {
		return sqlerr.New(sqlerr.DuplicateColumn, "column %q specified more than once", cd.Name.Name.O)
	}
	if strings.EqualFold(cd.Name.Name.O, hiddenKeyName) {
		return sqlerr.New(sqlerr.InvalidColumnDefinition, "column name %q is reserved", cd.Name.Name.O)
	}
	t.NextColumnID++
	col := catalog.Column{ID: t.NextColumnID, Name: cd.Name.Name.O, Type: typ}
	for _, opt := range cd.Options {
		switch opt.Tp {
		case ast.ColumnOptionNotNull:
			col.NotNull = true
		case ast.ColumnOptionNull:
			col.NotNull = false
		case ast.ColumnOptionPrimaryKey:
			if d.pkDeclared {
				return multiplePK(t.Name)
			}
			d.pkDeclared = true
			d.pk = []string{col.Name}
		case ast.ColumnOptionDefaultValue:
			if col.Default, err = a.checkDefault(opt.Expr, typ); err != nil {
				return err
			}
		case ast.ColumnOptionGenerated:
			d.computed[len(t.Columns)] = opt.Expr
		case ast.ColumnOptionCheck:
			d.checks = append(d.checks, checkDef{name: opt.ConstraintName, column: col.Name, expr: opt.Expr})
		case ast.ColumnOptionReference:
			d.fks = append(d.fks, fkDef{cols: []string{col.Name}, refer: opt.Refer})
		case ast.ColumnOptionUniqKey:
			// A column's UNIQUE is a unique index, named as
			// PostgreSQL names the constraint (t_col_key).
			spec, err := IndexSpecOf(t.Name+"_"+col.Name+"_key", true,
				[]*ast.IndexPartSpecification{{Column: cd.Name}}, nil)
			if err != nil {
				return err
			}
			d.indexes = append(d.indexes, spec)
		default:
			return sqlerr.NotSupported("column option %s", restore(cd))
		}
	}
	t.Columns = append(t.Columns, col)
	return nil
}

// addConstraint adds a table constraint: PRIMARY KEY, or an index.
func (d *tableDef) addConstraint(c *ast.Constraint) error {
	switch c.Tp {
	case ast.ConstraintPrimaryKey:
		if d.pkDeclared {
			return multiplePK(d.t.Name)
		}
		d.pkDeclared = true
		for _, k := range c.Keys {
			if k.Expr != nil || k.Length > 0 {
				return sqlerr.NotSupported("expressions and prefix lengths in PRIMARY KEY")
			}
			d.pk = append(d.pk, k.Column.Name.O)
		}
		return nil
	case ast.ConstraintCheck:
		d.checks = append(d.checks, checkDef{name: c.Name, expr: c.Expr})
		return nil
	case ast.ConstraintForeignKey:
		def, err := fkDefOf(c)
		if err != nil {
			return err
		}
		d.fks = append(d.fks, def)
		return nil
	case ast.ConstraintIndex, ast.ConstraintKey, ast.ConstraintUniq, ast.ConstraintUniqKey, ast.ConstraintUniqIndex:
		unique := c.Tp == ast.ConstraintUniq || c.Tp == ast.ConstraintUniqKey || c.Tp == ast.ConstraintUniqIndex
		name := c.Name
		if name == "" && unique {
			name = uniqueConstraintName(d.t.Name, c.Keys)
		}
		spec, err := IndexSpecOf(name, unique, c.Keys, c.Option)
		if err != nil {
			return err
		}
		d.indexes = append(d.indexes, spec)
		return nil
	}
	return sqlerr.NotSupported("table constraint %s", restore(c))
}

// resolvePrimaryKey turns the declared key column names into the table's
// primary key.
func (d *tableDef) resolvePrimaryKey() error {
	t := d.t
	if err := tooManyKeys(len(d.pk)); err != nil {
		return err
	}
	for _, name := range d.pk {
		i := t.ColumnIndex(name)
		if i < 0 {
			return sqlerr.New(sqlerr.UndefinedColumn, "column %q named in key does not exist", name)
		}
		if t.IsKeyColumn(i) {
			return sqlerr.New(sqlerr.DuplicateColumn, "column %q appears twice in primary key constraint", name)
		}
		if err := keyColumnErr(name, t.Columns[i].Type); err != nil {
			return err
		}
		t.PrimaryKey = append(t.PrimaryKey, i)
	}
	return nil
}

// resolveIndexes adds the declared indexes to the table.
func (d *tableDef) resolveIndexes() error {
	t := d.t
	for _, spec := range d.indexes {
		if strings.EqualFold(spec.Name, t.Name) || t.Index(spec.Name) != nil {
			return sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", spec.Name)
		}
		ix, err := spec.Resolve(t)
		if err != nil {
			return err
		}
		t.Indexes = append(t.Indexes, ix)
	}
	return nil
}

// keyColumnErr is the error for a column of type t in a primary key, nil
// when t may be part of one. Arrays have no key encoding yet (0A000).
func keyColumnErr(name string, t types.Type) error {
	if t.Family == types.Array {
		return sqlerr.NotSupported("column %q of type %s in a primary key", name, t.PGName())
	}
	if !keyable(t) {
		return sqlerr.New(sqlerr.InvalidTableDefinition, "column %q of type %s cannot be part of the primary key", name, t)
	}
	return nil
}

// indexColumnErr is the error for a column of type t in a secondary
// index, nil when it may be in one.
func indexColumnErr(name string, t types.Type) error {
	switch t.Family {
	case types.Array:
		return sqlerr.NotSupported("column %q of type %s in an index", name, t.PGName())
	case types.Json:
		return sqlerr.New(sqlerr.InvalidTableDefinition, "column %q of type %s cannot be indexed", name, t)
	}
	return nil
}

// keyable reports whether a type may be part of a primary key (design §3.1).
func keyable(t types.Type) bool {
	switch t.Family {
	case types.Float, types.Double, types.Json, types.Interval:
		return false
	}
	return true
}

func multiplePK(table string) error {
	return sqlerr.New(sqlerr.InvalidTableDefinition, "multiple primary keys for table %q are not allowed", table)
}

// checkDefault validates a DEFAULT expression: it must not reference
// columns, and a constant must convert to the column type. It returns the
// SQL text stored in the catalog.
func (a *binder) checkDefault(n ast.ExprNode, typ types.Type) (string, error) {
	e, err := a.build(nil, n, nil)
	if err != nil {
		return "", err
	}
	if expr.HasParams(e) {
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "parameters in DEFAULT are not supported")
	}
	if expr.IsRowIndependent(e) && expr.IsDeterministic(e) {
		v, err := e.Eval(a.evalContext(), nil)
		if err != nil {
			return "", err
		}
		if _, err := types.Cast(v, typ); err != nil {
			return "", err
		}
	}
	return restore(n), nil
}

// checkComputed validates computed columns (YTsaurus rules, design.md
// §3.2) and stores their expressions: an expression may use only columns
// that are not computed themselves (so there are no cycles), a computed key
// column only non-computed key columns; it must be deterministic and of a
// type that converts to the column's.
func (a *binder) checkComputed(t *catalog.Table, exprs map[int]ast.ExprNode) error {
	sc := tableScope(t, "")
	for i, n := range exprs {
		col := &t.Columns[i]
		if col.Default != "" {
			return sqlerr.New(sqlerr.SyntaxError, "both default and generation expression specified for column %q of table %q", col.Name, t.Name)
		}
		e, err := a.build(sc, n, nil)
		if err != nil {
			return err
		}
		var bad error
		expr.Walk(e, func(x expr.Expr) bool {
			ref, ok := x.(*expr.ColumnRef)
			if !ok || bad != nil {
				return bad == nil
			}
			dep := t.Columns[ref.Index]
			switch {
			case exprs[ref.Index] != nil:
				bad = &sqlerr.Error{Code: sqlerr.InvalidObjectDefinition,
					Message: fmt.Sprintf("computed column %q cannot use computed column %q", col.Name, dep.Name),
					Detail:  "A computed column is computed from columns that writers supply."}
			case t.IsKeyColumn(i) && !t.IsKeyColumn(ref.Index):
				bad = &sqlerr.Error{Code: sqlerr.InvalidObjectDefinition,
					Message: fmt.Sprintf("computed key column %q cannot use column %q, which is not a key column", col.Name, dep.Name)}
			}
			return bad == nil
		})
		if bad != nil {
			return bad
		}
		if !expr.IsDeterministic(e) {
			return sqlerr.New(sqlerr.InvalidObjectDefinition, "the expression of computed column %q is not deterministic", col.Name)
		}
		if !assignable(e.Type(), col.Type) {
			return sqlerr.New(sqlerr.DatatypeMismatch, "computed column %q is of type %s but its expression is of type %s",
				col.Name, col.Type, e.Type())
		}
		col.Computed = restore(n)
	}
	return nil
}

// assignable reports whether values of type from may be stored in a column
// of type to without an explicit cast: the same kind of value (numbers,
// strings, times) or NULL.
func assignable(from, to types.Type) bool {
	f, t := from.Family, to.Family
	switch {
	case f == t, f == types.Null, f == types.Unknown:
		return true
	case (f.IsNumeric() || f == types.Bool) && t.IsNumeric():
		return true
	case (f == types.Utf8 || f == types.String) && (t == types.Utf8 || t == types.String):
		return true
	case f.IsTime() && t.IsTime():
		return true
	}
	return false
}

// storedExprs caches the parsed form of expression texts the catalog
// stores (computed columns, column defaults), which every write binds
// again: a simple-protocol UPSERT into a table keyed by farm_hash(k)
// spent about 14% of its CPU re-parsing it (issue 23). The text is the
// key, so a descriptor that changes an expression finds the new text and
// nothing needs invalidating. A cached node is shared by every session
// and must stay read-only: only buildStored reads it (expr.Builder does
// not write to the tree). An ast Visitor (Accept) writes children back,
// so code that walks an expression parses its own copy (checkExpr does).
var storedExprs = struct {
	sync.Mutex
	byText map[string]ast.ExprNode
}{byText: map[string]ast.ExprNode{}}

// maxStoredExprs bounds the cache; past it the cache starts again (DDL
// churn only: a database holds far fewer distinct expressions).
const maxStoredExprs = 4096

// parseStoredExpr returns the parse of a stored expression text, from the
// cache when it was parsed before. The node is read-only (storedExprs).
func parseStoredExpr(text string) (ast.ExprNode, error) {
	storedExprs.Lock()
	n, ok := storedExprs.byText[text]
	storedExprs.Unlock()
	if ok {
		return n, nil
	}
	n, err := parseExpr(text)
	if err != nil {
		return nil, err // not cached: the error carries no state to share
	}
	storedExprs.Lock()
	if len(storedExprs.byText) >= maxStoredExprs {
		clear(storedExprs.byText)
	}
	storedExprs.byText[text] = n
	storedExprs.Unlock()
	return n, nil
}

// computedExprs builds the expressions of a table's computed columns over
// the table's row (nil for ordinary columns).
func (a *binder) computedExprs(t *catalog.Table) ([]expr.Expr, error) {
	var out []expr.Expr
	for i, c := range t.Columns {
		if c.Computed == "" {
			continue
		}
		if out == nil {
			out = make([]expr.Expr, len(t.Columns))
		}
		n, err := parseStoredExpr(c.Computed)
		if err != nil {
			return nil, err
		}
		e, err := a.buildStored(tableScope(t, ""), n)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}
