package bind

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/tablesettings"
	"github.com/pivotdb/pivotdb/sql/types"
)

// AlterTable is ALTER TABLE's column and constraint actions, bound into
// the table's new descriptor plus the work that makes the stored rows
// agree with it. The sql root runs it as one schema change, refusing it
// (40001) when the table changed since it was bound. Old is nil for ALTER
// TABLE IF EXISTS of a missing table, which only sends its notice.
type AlterTable struct {
	noRows
	Old, New *catalog.Table
	// Missing maps the id of a column added with a DEFAULT to the value
	// rows written before it read (encoded into Column.Missing when run).
	Missing map[int]types.Value
	// NotNull lists the ids of columns that stored rows must not have
	// NULL in (SET NOT NULL, ADD COLUMN ... NOT NULL without DEFAULT).
	NotNull []int
	// Validate are the CHECK constraints stored rows must pass (added
	// without NOT VALID), over New's columns.
	Validate []Check
	// Rewrite is set when every row must be written again: under a new
	// table id, with its indexes rebuilt (ALTER COLUMN TYPE, ADD PRIMARY
	// KEY). New.ID is then allocated when it runs.
	Rewrite *Rewrite
	// ValidateFKs names the foreign keys of New the stored rows must
	// satisfy (added without NOT VALID).
	ValidateFKs []string
	// Checks are New's CHECK constraints, for a rewrite to enforce.
	Checks []Check
	// Notices are sent when the statement runs ("... skipping").
	Notices []string
}

// Rewrite computes the rows of the new descriptor from the stored rows.
type Rewrite struct {
	// From[i] is the column of Old that column i of New is cast from (-1:
	// none, NULL).
	From []int
	// Using[i] (when not nil) computes column i of New from a row of Old
	// instead (ALTER COLUMN TYPE ... USING).
	Using []expr.Expr
	// Pivots are where the new table's shards start (after the first):
	// the deferred PARTITION_AT_KEYS of a table that gets its primary key
	// (tablesettings.Settings.DeferredPivots); none: one shard.
	Pivots [][]types.Value
}

// Check is a CHECK constraint bound over its table's row.
type Check struct {
	Name string
	Expr expr.Expr
}

// planAlterTable binds ALTER TABLE's column and constraint actions.
func (a *binder) planAlterTable(n *ast.AlterTableStmt) (Statement, error) {
	old, err := a.lookupTable(n.Table)
	if err != nil {
		ifExists := slices.ContainsFunc(a.stmt.Alter, func(x parser.AlterAction) bool { return x.Kind == parser.AlterTableIfExists })
		var se *sqlerr.Error
		if ifExists && errors.As(err, &se) && se.Code == sqlerr.UndefinedTable {
			return &AlterTable{Notices: []string{fmt.Sprintf("relation %q does not exist, skipping", n.Table.Name.O)}}, nil
		}
		return nil, err
	}
	if len(a.stmt.Identities) > 0 {
		// Every stored row would need its own value of the new sequence.
		return nil, sqlerr.NotSupported("ADD COLUMN of a serial or identity column")
	}
	pg := map[int][]parser.AlterAction{}
	for _, act := range a.stmt.Alter {
		pg[act.Spec] = append(pg[act.Spec], act)
	}
	nt := cloneTable(old)
	nt.Version++
	st := &AlterTable{Old: old, New: nt, Missing: map[int]types.Value{}}
	al := &alterer{a: a, st: st, t: nt}
	for i, spec := range n.Specs {
		if err := al.spec(spec, pg[i]); err != nil {
			return nil, err
		}
		if st.Rewrite != nil && len(n.Specs) > 1 {
			return nil, sqlerr.NotSupported("ALTER COLUMN TYPE and ADD PRIMARY KEY together with other actions in one ALTER TABLE")
		}
	}
	if err := a.finishAlter(st, al.validate); err != nil {
		return nil, err
	}
	return st, nil
}

// cloneTable copies a descriptor deeply enough to edit its columns,
// key, indexes and checks.
func cloneTable(t *catalog.Table) *catalog.Table {
	nt := *t
	nt.Columns = slices.Clone(t.Columns)
	nt.PrimaryKey = slices.Clone(t.PrimaryKey)
	nt.Indexes = slices.Clone(t.Indexes)
	for i := range nt.Indexes {
		nt.Indexes[i].Columns = slices.Clone(nt.Indexes[i].Columns)
		nt.Indexes[i].Desc = slices.Clone(nt.Indexes[i].Desc)
	}
	nt.Checks = slices.Clone(t.Checks)
	return &nt
}

// alterer applies ALTER TABLE's specs to the new descriptor in order.
type alterer struct {
	a  *binder
	st *AlterTable
	t  *catalog.Table
	// validate names the checks added without NOT VALID.
	validate []string
}

func (al *alterer) notice(format string, args ...any) {
	al.st.Notices = append(al.st.Notices, fmt.Sprintf(format, args...))
}

func (al *alterer) column(name string) (int, error) {
	i := al.t.ColumnIndex(name)
	if i < 0 || al.t.Columns[i].Hidden {
		return -1, sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", name, al.t.Name)
	}
	return i, nil
}

func (al *alterer) spec(spec *ast.AlterTableSpec, pg []parser.AlterAction) error {
	t := al.t
	has := func(k parser.AlterActionKind) bool {
		return slices.ContainsFunc(pg, func(x parser.AlterAction) bool { return x.Kind == k })
	}
	switch spec.Tp {
	case ast.AlterTableForce:
		if len(pg) != 1 {
			return sqlerr.NotSupported("ALTER TABLE ... FORCE")
		}
		return al.pgAction(pg[0])
	case ast.AlterTableAddColumns:
		for _, cd := range spec.NewColumns {
			if err := al.addColumn(cd, spec.IfNotExists); err != nil {
				return err
			}
		}
		if len(spec.NewConstraints) > 0 {
			return sqlerr.NotSupported("constraints in ALTER TABLE ... ADD (...)")
		}
		return nil
	case ast.AlterTableDropColumn:
		return al.dropColumn(spec.OldColumnName.Name.O, spec.IfExists)
	case ast.AlterTableRenameColumn:
		return al.renameColumn(spec.OldColumnName.Name.O, spec.NewColumnName.Name.O)
	case ast.AlterTableRenameTable:
		name := spec.NewTable.Name.O
		if schema := spec.NewTable.Schema.O; schema != "" && !strings.EqualFold(schema, al.a.env.Database.Name) && !strings.EqualFold(schema, "public") {
			return sqlerr.NotSupported("moving a table to another database (%s)", schema)
		}
		if !strings.EqualFold(name, t.Name) && al.a.snap.RelationExists(t.DatabaseID, name) {
			return sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", name)
		}
		t.Name = name
		return nil
	case ast.AlterTableAlterColumn:
		cd := spec.NewColumns[0]
		i, err := al.column(cd.Name.Name.O)
		if err != nil {
			return err
		}
		col := &t.Columns[i]
		if col.Identity != "" {
			return identityColumnError(t, col)
		}
		if len(cd.Options) == 0 {
			col.Default = ""
			return nil
		}
		if col.Computed != "" {
			return sqlerr.New(sqlerr.SyntaxError, "column %q of relation %q is a generated column", col.Name, t.Name)
		}
		col.Default, err = al.a.checkDefault(cd.Options[0].Expr, col.Type)
		return err
	case ast.AlterTableAddConstraint:
		return al.addConstraint(spec.Constraint, has(parser.AlterNotValid))
	case ast.AlterTableDropCheck:
		return al.dropConstraint(spec.Constraint.Name, has(parser.AlterIfExists))
	}
	return sqlerr.NotSupported("ALTER TABLE action %s", strings.TrimSpace(restore(spec)))
}

// pgAction applies SET/DROP NOT NULL and ALTER COLUMN TYPE.
func (al *alterer) pgAction(act parser.AlterAction) error {
	t := al.t
	i, err := al.column(act.Column)
	if err != nil {
		return err
	}
	col := &t.Columns[i]
	switch act.Kind {
	case parser.AlterSetNotNull:
		if !col.NotNull {
			col.NotNull = true
			al.st.NotNull = append(al.st.NotNull, col.ID)
		}
	case parser.AlterDropNotNull:
		if t.IsKeyColumn(i) {
			return sqlerr.New(sqlerr.InvalidTableDefinition, "column %q is in a primary key", col.Name)
		}
		if col.Identity != "" {
			return identityColumnError(t, col)
		}
		col.NotNull = false
	case parser.AlterSetType:
		if q := al.ownedSequence(col.ID); q != nil {
			return sqlerr.NotSupported("changing the type of column %q, which owns sequence %q", col.Name, q.Name)
		}
		return al.setType(i, act)
	}
	return nil
}

// identityColumnError is PostgreSQL's refusal to change the default or
// drop the NOT NULL of an identity column, which its sequence feeds.
func identityColumnError(t *catalog.Table, col *catalog.Column) error {
	return &sqlerr.Error{Code: sqlerr.ObjectNotInPrerequisiteState,
		Message: fmt.Sprintf("column %q of relation %q is an identity column", col.Name, t.Name)}
}

// ownedSequence returns the sequence that the column of id colID owns
// (serial and identity columns), nil when none. Sequences name their
// column as it was before the statement.
func (al *alterer) ownedSequence(colID int) *catalog.Sequence {
	old := al.st.Old
	for _, q := range al.a.snap.OwnedSequences(old.DatabaseID, old.ID) {
		if i := old.ColumnIndex(q.OwnerColumn); i >= 0 && old.Columns[i].ID == colID {
			return q
		}
	}
	return nil
}

// addColumn is ADD COLUMN [IF NOT EXISTS] name type [options]. A
// constant DEFAULT becomes the value rows already stored read, without
// writing them again.
func (al *alterer) addColumn(cd *ast.ColumnDef, ifNotExists bool) error {
	t := al.t
	if t.ColumnIndex(cd.Name.Name.O) >= 0 {
		if ifNotExists {
			al.notice("column %q of relation %q already exists, skipping", cd.Name.Name.O, t.Name)
			return nil
		}
		return sqlerr.New(sqlerr.DuplicateColumn, "column %q of relation %q already exists", cd.Name.Name.O, t.Name)
	}
	var checks []*ast.ColumnOption
	var refs []*ast.ReferenceDef
	opts := cd.Options[:0:0]
	for _, o := range cd.Options {
		switch o.Tp {
		case ast.ColumnOptionCheck:
			checks = append(checks, o)
			continue
		case ast.ColumnOptionPrimaryKey:
			return sqlerr.NotSupported("ADD COLUMN ... PRIMARY KEY (add the column, then ADD PRIMARY KEY)")
		case ast.ColumnOptionGenerated:
			return sqlerr.NotSupported("adding a computed column")
		case ast.ColumnOptionReference:
			refs = append(refs, o.Refer)
			continue
		}
		opts = append(opts, o)
	}
	cd2 := *cd
	cd2.Options = opts
	d := &tableDef{t: t, computed: map[int]ast.ExprNode{}}
	if err := al.a.addColumn(d, &cd2); err != nil {
		return err
	}
	col := &t.Columns[len(t.Columns)-1]
	// The hidden key stays last, where SELECT * ordering expects nothing
	// after the visible columns anyway; new columns go before it.
	if h := t.HiddenKeyColumn(); h >= 0 && h == len(t.Columns)-2 {
		t.Columns[h], t.Columns[h+1] = t.Columns[h+1], t.Columns[h]
		t.PrimaryKey = []int{h + 1}
		col = &t.Columns[h]
	}
	if col.Default != "" {
		n, err := parseExpr(col.Default)
		if err != nil {
			return err
		}
		e, err := al.a.build(nil, n, nil)
		if err != nil {
			return err
		}
		if !expr.IsRowIndependent(e) || !expr.IsDeterministic(e) {
			return sqlerr.NotSupported("ADD COLUMN with a volatile DEFAULT (it would need a different value in every existing row)")
		}
		v, err := e.Eval(al.a.evalContext(), nil)
		if err != nil {
			return err
		}
		if v, err = types.Cast(v, col.Type); err != nil {
			return err
		}
		if !v.IsNull() {
			al.st.Missing[col.ID] = v
		}
	}
	if col.NotNull && al.st.Missing[col.ID].IsNull() {
		al.st.NotNull = append(al.st.NotNull, col.ID)
	}
	for _, spec := range d.indexes {
		if err := al.addIndex(spec); err != nil {
			return err
		}
	}
	for _, o := range checks {
		if err := al.addCheck(o.ConstraintName, o.Expr, col.Name, false); err != nil {
			return err
		}
	}
	for _, r := range refs {
		if err := al.addForeignKey(fkDef{cols: []string{col.Name}, refer: r}, false); err != nil {
			return err
		}
	}
	return nil
}

// addForeignKey adds a FOREIGN KEY; unless notValid, the stored rows are
// checked against it when the statement runs.
func (al *alterer) addForeignKey(d fkDef, notValid bool) error {
	if err := al.a.addForeignKey(al.t, d); err != nil {
		return err
	}
	if al.t.ForeignKeys[len(al.t.ForeignKeys)-1].RefTable == 0 {
		al.t.ForeignKeys[len(al.t.ForeignKeys)-1].RefTable = al.t.ID
	}
	if notValid {
		al.t.ForeignKeys[len(al.t.ForeignKeys)-1].NotValid = true
	} else {
		al.st.ValidateFKs = append(al.st.ValidateFKs, al.t.ForeignKeys[len(al.t.ForeignKeys)-1].Name)
	}
	return nil
}

// addIndex adds a unique index for a UNIQUE constraint (its id is
// allocated and its entries filled when the statement runs).
func (al *alterer) addIndex(spec IndexSpec) error {
	if al.a.snap.RelationExists(al.t.DatabaseID, spec.Name) || al.t.Index(spec.Name) != nil {
		return sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", spec.Name)
	}
	ix, err := spec.Resolve(al.t)
	if err != nil {
		return err
	}
	al.t.Indexes = append(al.t.Indexes, ix)
	return nil
}

// dropColumn is DROP COLUMN [IF EXISTS]. Key columns and columns an
// index or computed column uses are refused; CHECK constraints on the
// column go with it, as in PostgreSQL.
func (al *alterer) dropColumn(name string, ifExists bool) error {
	t := al.t
	i := t.ColumnIndex(name)
	if i < 0 || t.Columns[i].Hidden {
		if ifExists {
			al.notice("column %q of relation %q does not exist, skipping", name, t.Name)
			return nil
		}
		return sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", name, t.Name)
	}
	if q := al.ownedSequence(t.Columns[i].ID); q != nil {
		return sqlerr.NotSupported("dropping column %q, which owns sequence %q", name, q.Name)
	}
	name = t.Columns[i].Name
	depends := func(what string) error {
		return &sqlerr.Error{Code: sqlerr.DependentObjectsStillExist,
			Message: fmt.Sprintf("cannot drop column %s of table %s because other objects depend on it", name, t.Name),
			Detail:  fmt.Sprintf("%s depends on column %s of table %s", what, name, t.Name),
			Hint:    "Drop the dependent objects first."}
	}
	if t.IsKeyColumn(i) {
		return depends(fmt.Sprintf("constraint %s_pkey on table %s", t.Name, t.Name))
	}
	if ttl := t.Settings.TTL; ttl != nil && strings.EqualFold(ttl.Column, name) {
		return depends(fmt.Sprintf("the TTL setting of table %s", t.Name))
	}
	if slices.Contains(t.Settings.DeferredNullableKey, t.Columns[i].Name) {
		return depends(fmt.Sprintf("the NULLABLE_KEY_COLUMNS setting of table %s", t.Name))
	}
	for _, ix := range t.Indexes {
		if slices.Contains(ix.Columns, i) {
			return depends("index " + ix.Name)
		}
	}
	for _, c := range t.Columns {
		if c.Computed != "" && usesColumn(c.Computed, name) {
			return depends(fmt.Sprintf("column %s of table %s", c.Name, t.Name))
		}
	}
	if visible := slices.IndexFunc(t.Columns, func(c catalog.Column) bool { return !c.Hidden && !strings.EqualFold(c.Name, name) }); visible < 0 {
		// PostgreSQL allows a table of no columns; PivotDB's rows need one.
		return sqlerr.New(sqlerr.InvalidTableDefinition, "cannot drop column %q: it is the last column of table %q", name, t.Name)
	}
	checks := t.Checks[:0:0]
	for _, c := range t.Checks {
		if !usesColumn(c.Expr, name) {
			checks = append(checks, c)
		}
	}
	t.Checks = checks
	// Foreign keys on the column go with it, as in PostgreSQL.
	t.ForeignKeys = slices.DeleteFunc(t.ForeignKeys, func(fk catalog.ForeignKey) bool { return slices.Contains(fk.Columns, i) })
	removeColumn(t, i)
	return nil
}

// removeColumn deletes column i, renumbering the key and index columns
// after it.
func removeColumn(t *catalog.Table, i int) {
	t.Columns = slices.Delete(t.Columns, i, i+1)
	shift := func(cols []int) {
		for k, c := range cols {
			if c > i {
				cols[k] = c - 1
			}
		}
	}
	shift(t.PrimaryKey)
	for k := range t.Indexes {
		shift(t.Indexes[k].Columns)
	}
	for k := range t.ForeignKeys {
		shift(t.ForeignKeys[k].Columns)
	}
}

// renameColumn is RENAME [COLUMN] a TO b; the stored expressions that
// name the column (CHECK constraints, computed columns) are rewritten.
func (al *alterer) renameColumn(from, to string) error {
	t := al.t
	i, err := al.column(from)
	if err != nil {
		return err
	}
	if j := t.ColumnIndex(to); j >= 0 && j != i {
		return sqlerr.New(sqlerr.DuplicateColumn, "column %q of relation %q already exists", to, t.Name)
	}
	if strings.EqualFold(to, hiddenKeyName) {
		return sqlerr.New(sqlerr.InvalidColumnDefinition, "column name %q is reserved", to)
	}
	old := t.Columns[i].Name
	t.Columns[i].Name = to
	if ttl := t.Settings.TTL; ttl != nil && strings.EqualFold(ttl.Column, old) {
		renamed := *ttl
		renamed.Column = to
		t.Settings.TTL = &renamed
	}
	if k := slices.Index(t.Settings.DeferredNullableKey, old); k >= 0 {
		names := slices.Clone(t.Settings.DeferredNullableKey)
		names[k] = to
		t.Settings.DeferredNullableKey = names
	}
	for k := range t.Checks {
		if t.Checks[k].Expr, err = renameInExpr(t.Checks[k].Expr, old, to); err != nil {
			return err
		}
	}
	for k := range t.Columns {
		if c := &t.Columns[k]; c.Computed != "" {
			if c.Computed, err = renameInExpr(c.Computed, old, to); err != nil {
				return err
			}
		}
	}
	return nil
}

// columnNames visits the column references of a stored expression.
type columnNames struct {
	fn func(*ast.ColumnNameExpr)
}

func (v *columnNames) Enter(n ast.Node) (ast.Node, bool) {
	if c, ok := n.(*ast.ColumnNameExpr); ok {
		v.fn(c)
	}
	return n, false
}

func (v *columnNames) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// usesColumn reports whether a stored expression names column name.
func usesColumn(text, name string) bool {
	n, err := parseExpr(text)
	if err != nil {
		return true // unreadable: assume the worst
	}
	uses := false
	n.Accept(&columnNames{fn: func(c *ast.ColumnNameExpr) {
		uses = uses || strings.EqualFold(c.Name.Name.O, name)
	}})
	return uses
}

// renameInExpr renames column from to to in a stored expression.
func renameInExpr(text, from, to string) (string, error) {
	n, err := parseExpr(text)
	if err != nil {
		return "", err
	}
	changed := false
	n.Accept(&columnNames{fn: func(c *ast.ColumnNameExpr) {
		if strings.EqualFold(c.Name.Name.O, from) {
			c.Name.Name = ast.NewCIStr(to)
			changed = true
		}
	}})
	if !changed {
		return text, nil
	}
	return restore(n), nil
}

// addConstraint is ADD [CONSTRAINT name] CHECK (...) | UNIQUE (...) |
// PRIMARY KEY (...).
func (al *alterer) addConstraint(c *ast.Constraint, notValid bool) error {
	t := al.t
	switch c.Tp {
	case ast.ConstraintCheck:
		return al.addCheck(c.Name, c.Expr, "", notValid)
	case ast.ConstraintUniq, ast.ConstraintUniqKey, ast.ConstraintUniqIndex:
		name := c.Name
		if name == "" {
			name = uniqueConstraintName(t.Name, c.Keys)
		}
		spec, err := IndexSpecOf(name, true, c.Keys, c.Option)
		if err != nil {
			return err
		}
		return al.addIndex(spec)
	case ast.ConstraintPrimaryKey:
		return al.addPrimaryKey(c)
	case ast.ConstraintForeignKey:
		def, err := fkDefOf(c)
		if err != nil {
			return err
		}
		return al.addForeignKey(def, notValid)
	}
	return sqlerr.NotSupported("constraint %s", restore(c))
}

func (al *alterer) addCheck(name string, n ast.ExprNode, onColumn string, notValid bool) error {
	name, err := al.a.addCheck(al.t, name, n, onColumn, notValid)
	if err == nil && !notValid {
		al.validate = append(al.validate, name)
	}
	return err
}

// dropConstraint is DROP CONSTRAINT [IF EXISTS] name: a CHECK, or the
// unique index of a UNIQUE constraint.
func (al *alterer) dropConstraint(name string, ifExists bool) error {
	t := al.t
	if c := t.Check(name); c != nil {
		t.Checks = slices.DeleteFunc(t.Checks, func(x catalog.Check) bool { return strings.EqualFold(x.Name, name) })
		al.validate = slices.DeleteFunc(al.validate, func(x string) bool { return strings.EqualFold(x, name) })
		return nil
	}
	if k := slices.IndexFunc(t.ForeignKeys, func(x catalog.ForeignKey) bool { return strings.EqualFold(x.Name, name) }); k >= 0 {
		t.ForeignKeys = slices.Delete(t.ForeignKeys, k, k+1)
		return nil
	}
	if ix := t.Index(name); ix != nil && ix.Unique {
		t.Indexes = slices.DeleteFunc(t.Indexes, func(x catalog.Index) bool { return strings.EqualFold(x.Name, name) })
		return nil
	}
	if strings.EqualFold(name, t.Name+"_pkey") && t.HiddenKeyColumn() < 0 {
		return sqlerr.NotSupported("dropping a primary key")
	}
	if ifExists {
		al.notice("constraint %q of relation %q does not exist, skipping", name, t.Name)
		return nil
	}
	return sqlerr.New(sqlerr.UndefinedObject, "constraint %q of relation %q does not exist", name, t.Name)
}

// rewriteFrom starts a rewrite whose columns are cast from the old
// table's columns of the same id.
func (al *alterer) rewriteFrom() (*Rewrite, error) {
	old := al.st.Old
	if tables, _ := al.a.snap.ReferencingKeys(old.ID); len(tables) > 0 || len(old.ForeignKeys) > 0 {
		// The rewrite moves the table to a new id, which foreign keys
		// name.
		return nil, sqlerr.NotSupported("ALTER COLUMN TYPE and ADD PRIMARY KEY on a table with foreign keys")
	}
	rw := &Rewrite{From: make([]int, len(al.t.Columns)), Using: make([]expr.Expr, len(al.t.Columns))}
	for i, c := range al.t.Columns {
		rw.From[i] = slices.IndexFunc(old.Columns, func(o catalog.Column) bool { return o.ID == c.ID })
	}
	return rw, nil
}

// setType is ALTER COLUMN c [SET DATA] TYPE t [USING e]: the column gets
// a new id and every row is written again with the converted value.
func (al *alterer) setType(i int, act parser.AlterAction) error {
	t := al.t
	var err error
	if act.Type, err = al.a.resolveType(act.Type); err != nil {
		return err
	}
	col := &t.Columns[i]
	if col.Computed != "" {
		return sqlerr.NotSupported("changing the type of computed column %q", col.Name)
	}
	if ttl := t.Settings.TTL; ttl != nil && strings.EqualFold(ttl.Column, col.Name) {
		return sqlerr.NotSupported("changing the type of column %q, which the TTL setting uses", col.Name)
	}
	if t.IsKeyColumn(i) {
		// The pivots the table was created with are values of the old type.
		t.Settings.PartitionAtKeys = nil
	}
	for _, c := range t.Columns {
		if c.Computed != "" && usesColumn(c.Computed, col.Name) {
			return sqlerr.NotSupported("changing the type of column %q, which computed column %q uses", col.Name, c.Name)
		}
	}
	if t.IsKeyColumn(i) {
		if err := keyColumnErr(col.Name, act.Type); err != nil {
			return err
		}
	}
	for _, ix := range t.Indexes {
		if slices.Contains(ix.Columns, i) {
			if err := indexColumnErr(col.Name, act.Type); err != nil {
				return err
			}
		}
	}
	oldType := col.Type
	var using expr.Expr
	if act.Using != "" {
		n, err := parseExpr(act.Using)
		if err != nil {
			return err
		}
		if using, err = al.a.build(tableScope(al.st.Old, ""), n, nil); err != nil {
			return err
		}
		if expr.HasParams(using) {
			return sqlerr.NotSupported("parameters in USING")
		}
	} else if !assignable(oldType, act.Type) {
		tn := strings.ToLower(act.Type.String())
		return &sqlerr.Error{Code: sqlerr.DatatypeMismatch,
			Message: fmt.Sprintf("column %q cannot be cast automatically to type %s", col.Name, tn),
			Hint:    fmt.Sprintf("You might need to specify \"USING %s::%s\".", col.Name, tn)}
	}
	if col.Default != "" {
		if _, err := al.a.checkDefault(mustParse(col.Default), act.Type); err != nil {
			return err
		}
	}
	rw, err := al.rewriteFrom()
	if err != nil {
		return err
	}
	t.NextColumnID++
	col.ID = t.NextColumnID
	col.Type = act.Type
	col.Missing = nil
	rw.From[i] = slices.IndexFunc(al.st.Old.Columns, func(o catalog.Column) bool { return strings.EqualFold(o.Name, col.Name) })
	rw.Using[i] = using
	al.st.Rewrite = rw
	return nil
}

func mustParse(text string) ast.ExprNode {
	n, err := parseExpr(text)
	if err != nil {
		return ast.NewValueExpr(nil, "", "")
	}
	return n
}

// addPrimaryKey is ADD [CONSTRAINT name] PRIMARY KEY (cols) on a table
// created without one: the hidden key column goes and every row is
// written again under the new key.
func (al *alterer) addPrimaryKey(c *ast.Constraint) error {
	t := al.t
	h := t.HiddenKeyColumn()
	if h < 0 {
		return multiplePK(t.Name)
	}
	var key []int
	if err := tooManyKeys(len(c.Keys)); err != nil {
		return err
	}
	for _, k := range c.Keys {
		if k.Expr != nil || k.Length > 0 || k.Column == nil {
			return sqlerr.NotSupported("expressions and prefix lengths in PRIMARY KEY")
		}
		i, err := al.column(k.Column.Name.O)
		if err != nil {
			return err
		}
		if slices.Contains(key, i) {
			return sqlerr.New(sqlerr.DuplicateColumn, "column %q appears twice in primary key constraint", t.Columns[i].Name)
		}
		if err := keyColumnErr(t.Columns[i].Name, t.Columns[i].Type); err != nil {
			return err
		}
		// As in PostgreSQL the key's columns become NOT NULL, except those
		// the table's NULLABLE_KEY_COLUMNS names (a YQL key that allowed
		// NULL, coming back through pg_dump).
		if !t.Columns[i].NotNull && !slices.Contains(t.Settings.DeferredNullableKey, t.Columns[i].Name) {
			t.Columns[i].NotNull = true
			al.st.NotNull = append(al.st.NotNull, t.Columns[i].ID)
		}
		key = append(key, i)
	}
	for _, name := range t.Settings.DeferredNullableKey {
		if !slices.ContainsFunc(key, func(i int) bool { return t.Columns[i].Name == name }) {
			return tablesettings.NullableKeyNotInKey(name)
		}
	}
	t.Settings.DeferredNullableKey = nil
	rw, err := al.rewriteFrom()
	if err != nil {
		return err
	}
	removeColumn(t, h)
	rw.From = slices.Delete(rw.From, h, h+1)
	rw.Using = slices.Delete(rw.Using, h, h+1)
	for k := range key {
		if key[k] > h {
			key[k]--
		}
	}
	t.PrimaryKey = key
	// The shards the table was created with cut the hidden key's range;
	// the new key starts in one shard, which the balancer splits, unless
	// pivots of this key were given (pg_dump's form, kept for now).
	t.Settings.UniformPartitions = nil
	t.Settings.PartitionAtKeys = nil
	if text := t.Settings.DeferredPivots; text != "" {
		pivots, err := tablesettings.DeferredBoundaries(text, t.SettingsInfo())
		if err != nil {
			return err
		}
		t.Settings.DeferredPivots = ""
		t.Settings.PartitionAtKeys = pivots
		rw.Pivots = pivots
	}
	al.st.Rewrite = rw
	return nil
}

// finishAlter binds the new table's checks, and those of them (named in
// validate) that the stored rows must pass now.
func (a *binder) finishAlter(st *AlterTable, validate []string) error {
	checks, err := a.checkExprs(st.New)
	if err != nil {
		return err
	}
	st.Checks = checks
	for _, c := range checks {
		if slices.ContainsFunc(validate, func(n string) bool { return strings.EqualFold(n, c.Name) }) {
			st.Validate = append(st.Validate, c)
		}
	}
	return nil
}
