package bind

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// FOREIGN KEY constraints (catalog.ForeignKey) reference the primary key
// of a table. Writes get an FKGraph: for the written table, the tables its
// rows reference, and the tables whose rows reference it — followed
// through CASCADE, SET NULL and SET DEFAULT, whose writes the sql root
// makes in the same transaction.

// FKGraph is the foreign key information a write of one table needs.
type FKGraph struct {
	Root *FKTable
}

// FKTable is one table of an FKGraph.
type FKTable struct {
	Table *catalog.Table
	// Parents are the tables this table's rows reference.
	Parents []FKParent
	// Children are the foreign keys of other tables (or this one) that
	// reference this table's rows.
	Children []FKChild
	// Defaults and Checks serve the writes that SET NULL, SET DEFAULT
	// and CASCADE make to this table's rows.
	Defaults []expr.Expr
	Checks   []Check
}

// FKParent is a foreign key of a table and the table it references.
type FKParent struct {
	FK     *catalog.ForeignKey
	Parent *catalog.Table
}

// FKChild is a foreign key that references a table, and its table.
type FKChild struct {
	FK    *catalog.ForeignKey
	Child *FKTable
}

// fkGraph builds the FKGraph of writes to t; nil when no foreign key
// involves t.
func (a *binder) fkGraph(t *catalog.Table) (*FKGraph, error) {
	seen := map[uint64]*FKTable{}
	root, err := a.fkTable(t, seen)
	if err != nil || root == nil {
		return nil, err
	}
	if len(root.Parents) == 0 && len(root.Children) == 0 {
		return nil, nil
	}
	return &FKGraph{Root: root}, nil
}

func (a *binder) fkTable(t *catalog.Table, seen map[uint64]*FKTable) (*FKTable, error) {
	if ft, ok := seen[t.ID]; ok {
		return ft, nil
	}
	ft := &FKTable{Table: t}
	seen[t.ID] = ft
	for i := range t.ForeignKeys {
		fk := &t.ForeignKeys[i]
		parent := t
		if fk.RefTable != t.ID {
			p, ok := a.snap.TableByID(fk.RefTable)
			if !ok {
				return nil, sqlerr.New(sqlerr.InternalError, "foreign key %q references a missing table", fk.Name)
			}
			parent = p
		}
		ft.Parents = append(ft.Parents, FKParent{FK: fk, Parent: parent})
	}
	tables, fks := a.snap.ReferencingKeys(t.ID)
	for i, ct := range tables {
		child, err := a.fkTable(ct, seen)
		if err != nil {
			return nil, err
		}
		ft.Children = append(ft.Children, FKChild{FK: fks[i], Child: child})
	}
	var err error
	if len(tables) > 0 || len(t.ForeignKeys) > 0 {
		if ft.Defaults, err = a.columnDefaults(t); err != nil {
			return nil, err
		}
		if ft.Checks, err = a.checkExprs(t); err != nil {
			return nil, err
		}
	}
	return ft, nil
}

// fkDef is a FOREIGN KEY as declared.
type fkDef struct {
	name  string
	cols  []string
	refer *ast.ReferenceDef
}

// fkDefOf reads a FOREIGN KEY table constraint (CREATE TABLE's or ALTER
// TABLE ADD's) as written; addForeignKey resolves it.
func fkDefOf(c *ast.Constraint) (fkDef, error) {
	def := fkDef{name: c.Name, refer: c.Refer}
	for _, k := range c.Keys {
		if k.Column == nil {
			return fkDef{}, sqlerr.NotSupported("expressions in FOREIGN KEY")
		}
		def.cols = append(def.cols, k.Column.Name.O)
	}
	return def, nil
}

// addForeignKey resolves a declared foreign key of t (the table being
// created or altered: a reference to its own name is to itself) and adds
// it to t.
func (a *binder) addForeignKey(t *catalog.Table, d fkDef) error {
	r := d.refer
	var parent *catalog.Table
	if strings.EqualFold(r.Table.Name.O, TempDisplayName(t.Name)) {
		parent = t
	} else {
		p, err := a.lookupTable(r.Table)
		if err != nil {
			return err
		}
		parent = p
	}
	// A temporary table goes with its session: no permanent table may
	// point at it, and it may point only at its session's tables, which
	// go with it (the names of another session's are not visible).
	switch temp := IsTempName(t.Name); {
	case temp && !IsTempName(parent.Name):
		return sqlerr.New(sqlerr.InvalidTableDefinition, "constraints on temporary tables may reference only temporary tables")
	case !temp && IsTempName(parent.Name):
		return sqlerr.New(sqlerr.InvalidTableDefinition, "constraints on permanent tables may reference only permanent tables")
	}
	if r.Match != ast.MatchNone && r.Match != ast.MatchSimple {
		return sqlerr.NotSupported("MATCH FULL and MATCH PARTIAL")
	}
	fk := catalog.ForeignKey{Name: d.name, RefTable: parent.ID, OnDelete: 'a', OnUpdate: 'a'}
	if r.OnDelete != nil {
		fk.OnDelete = referAction(r.OnDelete.ReferOpt)
	}
	if r.OnUpdate != nil {
		fk.OnUpdate = referAction(r.OnUpdate.ReferOpt)
	}
	if len(d.cols) > MaxIndexKeys {
		return sqlerr.New(sqlerr.TooManyColumns, "cannot have more than %d keys in a foreign key", MaxIndexKeys)
	}
	for _, name := range d.cols {
		i := t.ColumnIndex(name)
		if i < 0 || t.Columns[i].Hidden {
			return sqlerr.New(sqlerr.UndefinedColumn, "column %q referenced in foreign key constraint does not exist", name)
		}
		fk.Columns = append(fk.Columns, i)
	}
	if parent.HiddenKeyColumn() >= 0 {
		if len(r.IndexPartSpecifications) == 0 {
			return sqlerr.New(sqlerr.UndefinedObject, "there is no primary key for referenced table %q", parent.Name)
		}
		return sqlerr.New(sqlerr.InvalidForeignKey, "there is no unique constraint matching given keys for referenced table %q", parent.Name)
	}
	ref := parent.PrimaryKey
	if len(r.IndexPartSpecifications) > 0 {
		var named []int
		for _, p := range r.IndexPartSpecifications {
			if p.Column == nil {
				return sqlerr.NotSupported("expressions in REFERENCES")
			}
			i := parent.ColumnIndex(p.Column.Name.O)
			if i < 0 || parent.Columns[i].Hidden {
				return sqlerr.New(sqlerr.UndefinedColumn, "column %q referenced in foreign key constraint does not exist", p.Column.Name.O)
			}
			named = append(named, i)
		}
		if !slices.Equal(named, parent.PrimaryKey) {
			for _, ix := range parent.Indexes {
				if ix.Unique && len(ix.Columns) == len(named) && !slices.ContainsFunc(named, func(c int) bool { return !slices.Contains(ix.Columns, c) }) {
					return sqlerr.NotSupported("a FOREIGN KEY that references a UNIQUE constraint (reference the primary key)")
				}
			}
			sorted := slices.Clone(named)
			slices.Sort(sorted)
			pk := slices.Clone(parent.PrimaryKey)
			slices.Sort(pk)
			if slices.Equal(sorted, pk) {
				return sqlerr.NotSupported("a FOREIGN KEY that lists the primary key columns in another order")
			}
			return sqlerr.New(sqlerr.InvalidForeignKey, "there is no unique constraint matching given keys for referenced table %q", parent.Name)
		}
	}
	if len(fk.Columns) != len(ref) {
		return sqlerr.New(sqlerr.InvalidForeignKey, "number of referencing and referenced columns for foreign key disagree")
	}
	if fk.Name == "" {
		names := make([]string, len(fk.Columns))
		for i, c := range fk.Columns {
			names[i] = t.Columns[c].Name
		}
		fk.Name = t.Name + "_" + strings.Join(names, "_") + "_fkey"
	}
	if t.Check(fk.Name) != nil || t.Index(fk.Name) != nil || slices.ContainsFunc(t.ForeignKeys, func(x catalog.ForeignKey) bool { return strings.EqualFold(x.Name, fk.Name) }) {
		return sqlerr.New(sqlerr.DuplicateObject, "constraint %q for relation %q already exists", fk.Name, t.Name)
	}
	for k, c := range fk.Columns {
		from, to := t.Columns[c], parent.Columns[ref[k]]
		if !assignable(from.Type, to.Type) || !assignable(to.Type, from.Type) {
			return &sqlerr.Error{Code: sqlerr.DatatypeMismatch,
				Message: fmt.Sprintf("foreign key constraint %q cannot be implemented", fk.Name),
				Detail: fmt.Sprintf("Key columns %q and %q are of incompatible types: %s and %s.",
					from.Name, to.Name, from.Type.PGName(), to.Type.PGName())}
		}
	}
	t.ForeignKeys = append(t.ForeignKeys, fk)
	return nil
}

// referAction is the pg_constraint letter of ON DELETE/ON UPDATE.
func referAction(o ast.ReferOptionType) byte {
	switch o {
	case ast.ReferOptionRestrict:
		return 'r'
	case ast.ReferOptionCascade:
		return 'c'
	case ast.ReferOptionSetNull:
		return 'n'
	case ast.ReferOptionSetDefault:
		return 'd'
	}
	return 'a'
}
