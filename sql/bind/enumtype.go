package bind

import (
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// TypeDDL is CREATE TYPE ... AS ENUM, ALTER TYPE or DROP TYPE; the
// session checks names against the catalog it changes (sql/enum_ddl.go).
type TypeDDL struct {
	noRows
	*parser.TypeStmt
}

// resolveType resolves a user-defined type name (types.Type.IsUserTypeRef,
// or an array of one) against the catalog: 42704 when the database has no
// such type. Other types come back as they are.
func (a *binder) resolveType(t types.Type) (types.Type, error) {
	if !t.ElemType().IsUserTypeRef() {
		return t, nil
	}
	name := t.ElemType().Enum.Name
	e, ok := a.snap.EnumType(a.env.Database.ID, name)
	if !ok {
		return types.Type{}, sqlerr.New(sqlerr.UndefinedObject, "type %q does not exist", name)
	}
	if t.Family == types.Array {
		return types.ArrayOf(types.EnumType(&e.Def)), nil
	}
	return types.EnumType(&e.Def), nil
}
