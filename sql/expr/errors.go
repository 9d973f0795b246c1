package expr

import (
	"fmt"
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// SQLSTATE codes that sqlerr does not name (PostgreSQL's errcodes.txt).
const (
	codeAmbiguousFunction     = "42725" // ambiguous_function
	codeInvalidArgumentForLog = "2201E" // invalid_argument_for_logarithm
	codeInvalidArgumentForPow = "2201F" // invalid_argument_for_power_function
	codeSubstringError        = "22011" // substring_error
	codeCannotCoerce          = "42846" // cannot_coerce
)

// Shorter names for the sqlerr codes used here.
const (
	codeProgramLimitExceeded  = sqlerr.ProgramLimitExceeded
	codeStatementTooComplex   = sqlerr.StatementTooComplex
	codeDatatypeMismatch      = sqlerr.DatatypeMismatch
	codeUndefinedFunction     = sqlerr.UndefinedFunction
	codeGroupingError         = sqlerr.GroupingError
	codeUndefinedColumn       = sqlerr.UndefinedColumn
	codeInvalidParameterValue = sqlerr.InvalidParameterValue
)

// TypeName is how error messages name a type: PostgreSQL's name where
// PostgreSQL has the type, the YQL name otherwise (Uint32, Datetime).
func TypeName(t types.Type) string {
	switch f := t.Family; {
	case f.IsUnsigned(), f == types.Datetime:
		return t.Family.String()
	case f == types.Decimal:
		return "numeric"
	case f == types.Utf8 && t.Blank:
		return "character"
	case f == types.Utf8 && t.Width > 0:
		return "character varying"
	}
	return t.PGName()
}

func typeList(ts []types.Type) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = TypeName(t)
	}
	return strings.Join(names, ", ")
}

// opNotExist is PostgreSQL's error for a binary operator with no
// implementation for the operand types.
func opNotExist(op string, l, r types.Type) error {
	return sqlerr.New(codeUndefinedFunction, "operator does not exist: %s %s %s", TypeName(l), op, TypeName(r))
}

// opNotUnique is PostgreSQL's error for a binary operator that more
// than one implementation matches through implicit casts.
func opNotUnique(op string, l, r types.Type) error {
	return &sqlerr.Error{Code: sqlerr.AmbiguousFunction,
		Message: fmt.Sprintf("operator is not unique: %s %s %s", TypeName(l), op, TypeName(r)),
		Hint:    "Could not choose a best candidate operator. You might need to add explicit type casts."}
}

func opNotExist1(op string, t types.Type) error {
	return sqlerr.New(codeUndefinedFunction, "operator does not exist: %s %s", op, TypeName(t))
}

func funcNotExist(name string, args []types.Type) error {
	return sqlerr.New(codeUndefinedFunction, "function %s(%s) does not exist", name, typeList(args))
}

// funcNotExistHint is funcNotExist with PostgreSQL's HINT, for a function
// that exists under the name but not for these argument types.
func funcNotExistHint(name string, args []types.Type) error {
	return &sqlerr.Error{Code: codeUndefinedFunction,
		Message: fmt.Sprintf("function %s(%s) does not exist", name, typeList(args)),
		Hint:    "No function matches the given name and argument types. You might need to add explicit type casts."}
}

func exprTypes(es []Expr) []types.Type {
	ts := make([]types.Type, len(es))
	for i, e := range es {
		ts[i] = e.Type()
	}
	return ts
}
