package bind

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// IndexSpec is an index being defined, by CREATE INDEX or in CREATE TABLE.
type IndexSpec struct {
	Name    string
	Columns []string
	Desc    []bool
	Unique  bool
}

// uniqueConstraintName is the name PostgreSQL gives an unnamed UNIQUE
// (a, b) constraint of table t: t_a_b_key.
func uniqueConstraintName(table string, keys []*ast.IndexPartSpecification) string {
	name := table
	for _, k := range keys {
		if k.Column != nil {
			name += "_" + k.Column.Name.O
		}
	}
	return name + "_key"
}

// IndexSpecOf reads the column list of CREATE INDEX or of a table element.
func IndexSpecOf(name string, unique bool, parts []*ast.IndexPartSpecification, opt *ast.IndexOption) (IndexSpec, error) {
	spec := IndexSpec{Name: name, Unique: unique}
	if name == "" {
		return spec, sqlerr.NotSupported("an index without a name")
	}
	if opt != nil && opt.Condition != nil {
		return spec, sqlerr.NotSupported("partial indexes")
	}
	for _, p := range parts {
		if first, ok := nullsMarker(p.Expr); ok {
			// (c [DESC] NULLS FIRST|LAST): entries are stored ascending
			// with NULL as the smallest value (sql/rowenc), a DESC column
			// read in reverse, so only the order that gives is available.
			if len(spec.Desc) == 0 {
				return spec, sqlerr.New(sqlerr.SyntaxError, "syntax error at or near \"NULLS\"")
			}
			if desc := spec.Desc[len(spec.Desc)-1]; first != planner.NullsDefault(desc, false) {
				what := "NULLS LAST on an ascending"
				if desc {
					what = "NULLS FIRST on a descending"
				}
				return spec, &sqlerr.Error{Code: sqlerr.FeatureNotSupported,
					Message: what + " index column is not supported yet",
					Hint:    "Index entries sort NULL as the smallest value: write ASC NULLS FIRST or DESC NULLS LAST (the order of a query comes from its ORDER BY)."}
			}
			continue
		}
		if p.Expr != nil || p.Length > 0 || p.Column == nil {
			return spec, sqlerr.NotSupported("expressions and prefix lengths in an index")
		}
		spec.Columns = append(spec.Columns, p.Column.Name.O)
		spec.Desc = append(spec.Desc, p.Desc)
	}
	return spec, nil
}

// Resolve turns the spec into an index of t (without an id), validating
// its columns.
func (spec IndexSpec) Resolve(t *catalog.Table) (catalog.Index, error) {
	ix := catalog.Index{Name: spec.Name, Unique: spec.Unique}
	if err := tooManyKeys(len(spec.Columns)); err != nil {
		return ix, err
	}
	anyDesc := false
	for i, name := range spec.Columns {
		c := t.ColumnIndex(name)
		if c < 0 || t.Columns[c].Hidden {
			return ix, sqlerr.New(sqlerr.UndefinedColumn, "column %q does not exist", name)
		}
		for _, prev := range ix.Columns {
			if prev == c {
				return ix, sqlerr.New(sqlerr.DuplicateColumn, "column %q appears twice in index %q", name, spec.Name)
			}
		}
		if err := indexColumnErr(name, t.Columns[c].Type); err != nil {
			return ix, err
		}
		ix.Columns = append(ix.Columns, c)
		anyDesc = anyDesc || spec.Desc[i]
	}
	if anyDesc {
		ix.Desc = append([]bool(nil), spec.Desc...)
	}
	return ix, nil
}

// planCreateIndex is CREATE [UNIQUE] INDEX [IF NOT EXISTS] name ON t (cols).
func (a *binder) planCreateIndex(n *ast.CreateIndexStmt) (Statement, error) {
	switch n.KeyType {
	case ast.IndexKeyTypeNone, ast.IndexKeyTypeUnique:
	default:
		return nil, sqlerr.NotSupported("this kind of index")
	}
	t, err := a.lookupTable(n.Table)
	if err != nil {
		return nil, err
	}
	if err := a.requireOwner(t); err != nil {
		return nil, err
	}
	spec, err := IndexSpecOf(n.IndexName, n.KeyType == ast.IndexKeyTypeUnique, n.IndexPartSpecifications, n.IndexOption)
	if err != nil {
		return nil, err
	}
	return &CreateIndex{Table: n.Table.Name.O, Spec: spec, IfNotExists: n.IfNotExists}, nil
}

// MaxIndexKeys is PostgreSQL's INDEX_MAX_KEYS: at most this many columns
// in an index, a primary key or a foreign key (54011), which the
// read-only setting max_index_keys reports (pgjdbc's getImportedKeys
// reads it).
const MaxIndexKeys = 32

func tooManyKeys(n int) error {
	if n > MaxIndexKeys {
		return sqlerr.New(sqlerr.TooManyColumns, "cannot use more than %d columns in an index", MaxIndexKeys)
	}
	return nil
}
