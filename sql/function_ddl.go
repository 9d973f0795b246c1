package sql

import (
	"context"
	"fmt"
	"slices"

	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
)

// SQL functions: CREATE [OR REPLACE] FUNCTION and DROP FUNCTION. The
// binder checked the body and resolved the types (bind/function.go); here
// the catalog's functions of the name are checked for a function with the
// same argument types (42723, or replaced by OR REPLACE).

func (s *Session) runFunctionDDL(ctx context.Context, st *bind.FunctionDDL) (Result, error) {
	tag := "CREATE FUNCTION"
	if st.Drop {
		tag = "DROP FUNCTION"
	}
	err := s.ddl(func(ch *catalog.Change, _ *partition.Change, _ *storage.Batch) error {
		if st.Drop {
			return s.dropFunctions(ch, st)
		}
		f := st.Function
		ts := funcArgTypes(f)
		for _, old := range ch.Snapshot().Functions(s.db.ID, f.Name) {
			if !sameArgTypes(funcArgTypes(old), ts) {
				continue
			}
			if !st.OrReplace {
				return sqlerr.New(sqlerr.DuplicateFunction, "function %s already exists with same argument types",
					bind.FunctionSignature(f.Name, ts))
			}
			if !s.access(ch.Snapshot()).Owns(&old.Owned) {
				return sqlerr.New(sqlerr.InsufficientPrivilege, "must be owner of function %s", old.Name)
			}
			if expr.BaseType(old.Returns) != expr.BaseType(f.Returns) || old.SetOf != f.SetOf || !sameFuncColumns(old.Columns, f.Columns) {
				return &sqlerr.Error{Code: sqlerr.InvalidFunctionDefinition,
					Message: "cannot change return type of existing function",
					Hint:    fmt.Sprintf("Use DROP FUNCTION %s first.", bind.FunctionSignature(f.Name, ts))}
			}
			nf := *f
			nf.ID, nf.Owned = old.ID, old.Owned
			ch.PutFunction(&nf)
			return nil
		}
		nf := *f
		nf.ID = ch.NewID()
		nf.Owned = catalog.Owned{Owner: s.user}
		ch.PutFunction(&nf)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &tagResult{tag: tag}, nil
}

func (s *Session) dropFunctions(ch *catalog.Change, st *bind.FunctionDDL) error {
	names := []string{st.Name}
	for _, d := range st.Drops {
		names = append(names, d.Name)
	}
	for k, name := range names {
		ts := st.DropArgs[k]
		var match []*catalog.Function
		for _, f := range ch.Snapshot().Functions(s.db.ID, name) {
			if ts == nil || sameArgTypes(funcArgTypes(f), ts) {
				match = append(match, f)
			}
		}
		sig := name
		if ts != nil {
			sig = bind.FunctionSignature(name, ts)
		}
		switch {
		case len(match) == 0 && st.IfExists:
			s.notice("NOTICE", sqlerr.UndefinedFunction, "function %s does not exist, skipping", sig)
			continue
		case len(match) == 0 && ts == nil:
			return sqlerr.New(sqlerr.UndefinedFunction, "could not find a function named %q", name)
		case len(match) == 0:
			return sqlerr.New(sqlerr.UndefinedFunction, "function %s does not exist", sig)
		case len(match) > 1:
			return &sqlerr.Error{Code: "42725", Message: fmt.Sprintf("function name %q is not unique", name),
				Hint: "Specify the argument list to select the function unambiguously."}
		}
		if !s.access(ch.Snapshot()).Owns(&match[0].Owned) {
			return sqlerr.New(sqlerr.InsufficientPrivilege, "must be owner of function %s", name)
		}
		ch.DropFunction(match[0])
	}
	return nil
}

func funcArgTypes(f *catalog.Function) []types.Type {
	out := make([]types.Type, len(f.Args))
	for i, a := range f.Args {
		out[i] = a.Type
	}
	return out
}

// sameArgTypes compares argument types as PostgreSQL's signatures do:
// without modifiers (varchar(5) and text differ, varchar(5) and
// varchar(9) do not).
func sameArgTypes(a, b []types.Type) bool {
	return slices.EqualFunc(a, b, func(x, y types.Type) bool {
		return expr.TypeName(expr.BaseType(x)) == expr.TypeName(expr.BaseType(y))
	})
}

// sameFuncColumns reports whether two RETURNS TABLE column lists are the
// same (names and types).
func sameFuncColumns(a, b []catalog.FunctionArg) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || expr.BaseType(a[i].Type) != expr.BaseType(b[i].Type) {
			return false
		}
	}
	return true
}
