package expr

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// FieldSelectFunc is what the dialect front writes for PostgreSQL's field
// selection (expr).field: pivot_field(expr, 'field') (parser.FieldSelectFunc).
const FieldSelectFunc = "pivot_field"

// RowExpr builds a record (types.Record) from its fields' values: the row
// of a set-returning function such as information_schema._pg_expandarray.
type RowExpr struct {
	Fields []Expr
	Typ    types.Type // a Record type whose Fields describe Fields
}

func (e *RowExpr) Type() types.Type { return e.Typ }

func (e *RowExpr) Eval(c *Context, row Row) (types.Value, error) {
	vals := make([]types.Value, len(e.Fields))
	for i, f := range e.Fields {
		v, err := f.Eval(c, row)
		if err != nil {
			return types.Value{}, err
		}
		vals[i] = v
	}
	return types.NewRecord(vals), nil
}

func (e *RowExpr) String() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.String()
	}
	return "ROW(" + strings.Join(parts, ", ") + ")"
}

func (e *RowExpr) Children() []Expr { return e.Fields }

func (e *RowExpr) WithChildren(ch []Expr) (Expr, error) {
	if len(ch) != len(e.Fields) {
		return nil, sqlerr.New(sqlerr.InternalError, "expr: RowExpr takes %d children, got %d", len(e.Fields), len(ch))
	}
	return &RowExpr{Fields: ch, Typ: e.Typ}, nil
}

// FieldSelect is (rec).field: one field of a record; NULL when the record
// is NULL, as in PostgreSQL.
type FieldSelect struct {
	Rec   Expr
	Index int
	Name  string
}

func (e *FieldSelect) Type() types.Type { return e.Rec.Type().Fields.Types[e.Index] }

func (e *FieldSelect) Eval(c *Context, row Row) (types.Value, error) {
	v, err := e.Rec.Eval(c, row)
	if err != nil || v.IsNull() {
		return types.NullValue, err
	}
	f := v.RecordFields()
	if e.Index >= len(f) {
		return types.Value{}, sqlerr.New(sqlerr.InternalError, "expr: record has %d fields, wanted field %d", len(f), e.Index+1)
	}
	return f[e.Index], nil
}

func (e *FieldSelect) String() string { return fmt.Sprintf("(%s).%s", e.Rec, e.Name) }

func (e *FieldSelect) Children() []Expr { return []Expr{e.Rec} }

func (e *FieldSelect) WithChildren(ch []Expr) (Expr, error) {
	if len(ch) != 1 {
		return nil, sqlerr.New(sqlerr.InternalError, "expr: FieldSelect takes 1 child, got %d", len(ch))
	}
	return &FieldSelect{Rec: ch[0], Index: e.Index, Name: e.Name}, nil
}

// buildFieldSelect is pivot_field(expr, 'field'). Selecting a field of a
// record built in the same expression is that field's expression.
func (b *Builder) buildFieldSelect(n *ast.FuncCallExpr) (Expr, error) {
	if len(n.Args) != 2 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "%s takes a value and a field name", FieldSelectFunc)
	}
	args, err := b.buildList(n.Args)
	if err != nil {
		return nil, err
	}
	k, ok := args[1].(*Const)
	if !ok {
		return nil, sqlerr.New(sqlerr.SyntaxError, "%s takes a field name", FieldSelectFunc)
	}
	name := k.Value.Str()
	t := args[0].Type()
	if t.Family != types.Record || t.Fields == nil {
		return nil, sqlerr.New(sqlerr.WrongObjectType, "column notation .%s applied to type %s, which is not a composite type", name, TypeName(t))
	}
	i := t.Fields.Field(name)
	if i < 0 {
		return nil, sqlerr.New(sqlerr.UndefinedColumn, "could not identify column %q in record data type", name)
	}
	if r, ok := args[0].(*RowExpr); ok {
		return r.Fields[i], nil
	}
	return &FieldSelect{Rec: args[0], Index: i, Name: name}, nil
}
