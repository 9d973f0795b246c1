package parser

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// CastFunc is the name of the function every cast is rewritten to:
// x::T, CAST(x AS T) and the typed literal T("...") all become
// pivot_cast(x, 'T') in the AST, with T spelled so that
// types.ParseTypeName reads it back exactly.
const CastFunc = "pivot_cast"

// ColumnType returns the type of a column definition from a CREATE TABLE
// or ALTER TABLE statement returned by Parse. The type was written in YQL
// or PostgreSQL/MySQL spelling and checked when the statement was parsed.
func ColumnType(col *ast.ColumnDef) (types.Type, error) {
	if col == nil || col.Tp == nil {
		return types.Type{}, sqlerr.New(sqlerr.InternalError, "parser: column definition without a type")
	}
	for _, e := range col.Tp.GetElems() {
		if strings.HasPrefix(e, markerPrefix) {
			return types.ParseTypeName(e[len(markerPrefix):])
		}
	}
	// A definition whose marker has not been moved yet (an AST built from
	// TiDBText by hand).
	if len(col.Options) > 0 && col.Options[0].Tp == ast.ColumnOptionComment {
		if v, ok := col.Options[0].Expr.(ast.ValueExpr); ok && strings.HasPrefix(v.GetString(), markerPrefix) {
			return types.ParseTypeName(v.GetString()[len(markerPrefix):])
		}
	}
	return types.Type{}, sqlerr.New(sqlerr.FeatureNotSupported, "column type %s is not supported", col.Tp.String())
}

// CastTarget recognises a cast in the AST: a call of pivot_cast. ok is
// false for any other function. For a cast it returns the expression being
// cast and the target type; err is set (42601) when a hand-written
// pivot_cast call is malformed or names an unknown type.
//
// The expression of a typed literal such as Date("2024-01-01") is the
// string literal itself.
func CastTarget(call *ast.FuncCallExpr) (expr ast.ExprNode, t types.Type, ok bool, err error) {
	if call == nil || call.FnName.L != CastFunc {
		return nil, types.Type{}, false, nil
	}
	if len(call.Args) != 2 {
		return nil, types.Type{}, true, sqlerr.New(sqlerr.SyntaxError, "%s takes an expression and a type name", CastFunc)
	}
	v, isValue := call.Args[1].(ast.ValueExpr)
	name, isString := "", false
	if isValue {
		name, isString = v.GetValue().(string)
	}
	if !isString {
		return nil, types.Type{}, true, sqlerr.New(sqlerr.SyntaxError, "the type of %s must be a string literal", CastFunc)
	}
	t, err = types.ParseTypeName(name)
	if err != nil {
		return nil, types.Type{}, true, err
	}
	return call.Args[0], t, true, nil
}
