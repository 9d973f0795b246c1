package parser

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// FunctionStmt is CREATE FUNCTION or DROP FUNCTION (PostgreSQL's syntax,
// LANGUAGE sql only), which TiDB's grammar lacks:
//
//	CREATE [OR REPLACE] FUNCTION name ([[argname] type, ...])
//	    RETURNS [SETOF] type | RETURNS TABLE (name type, ...)
//	    {LANGUAGE sql | IMMUTABLE | STABLE | VOLATILE | STRICT
//	     | RETURNS NULL ON NULL INPUT | CALLED ON NULL INPUT
//	     | [NOT] LEAKPROOF | PARALLEL {SAFE | RESTRICTED | UNSAFE}
//	     | AS 'body' | RETURN expr} ...
//	DROP FUNCTION [IF EXISTS] name [([[argname] type, ...])] [, ...] [CASCADE | RESTRICT]
//
// The body is kept as text (a SELECT; RETURN expr is kept as SELECT expr)
// and parsed again where the function is called.
type FunctionStmt struct {
	Drop      bool
	OrReplace bool
	// Name is the function's name (unquoted names folded to lower case).
	Name string
	Args []FuncArg
	// ArgsGiven is set when DROP gave an argument list.
	ArgsGiven bool
	Returns   types.Type
	// SetOf is set for RETURNS SETOF type (Returns; a table's name comes
	// as an unresolved user-type reference) and RETURNS TABLE (Table).
	SetOf bool
	// Table is RETURNS TABLE's columns.
	Table    []FuncArg
	Language string
	// Volatility is 'i', 's' or 'v' (pg_proc.provolatile).
	Volatility byte
	Strict     bool
	Body       string
	IfExists   bool
	// Drops lists DROP FUNCTION's other functions (after the first, which
	// is this statement's Name and Args).
	Drops []FunctionStmt
}

// FuncArg is one declared argument; Name is "" for an unnamed one.
type FuncArg struct {
	Name string
	Type types.Type
}

// functionStatement parses CREATE/DROP FUNCTION; ok is false for others.
func (s *stmtToks) functionStatement() (*FunctionStmt, bool, error) {
	i := 1
	st := &FunctionStmt{Volatility: 'v'}
	if s.isWord(0, "create") && s.isWord(1, "or") && s.isWord(2, "replace") {
		st.OrReplace = true
		i = 3
	}
	if s.isWord(i, "procedure") {
		return nil, true, sqlerr.NotSupported("procedures")
	}
	if !s.isWord(i, "function") {
		return nil, false, nil
	}
	i++
	if s.isWord(0, "drop") {
		st.Drop = true
		if s.isWord(i, "if") && s.isWord(i+1, "exists") {
			st.IfExists = true
			i += 2
		}
		for first := true; ; first = false {
			f := FunctionStmt{}
			name, next, err := s.typeObjName(i)
			if err != nil {
				return nil, true, err
			}
			f.Name, i = name, next
			if s.isOp(i, "(") {
				close := int(s.match[i])
				if f.Args, err = s.funcArgs(i+1, close); err != nil {
					return nil, true, err
				}
				f.ArgsGiven, i = true, close+1
			}
			if first {
				st.Name, st.Args, st.ArgsGiven = f.Name, f.Args, f.ArgsGiven
			} else {
				st.Drops = append(st.Drops, f)
			}
			if !s.isOp(i, ",") {
				break
			}
			i++
		}
		if s.isWord(i, "cascade") || s.isWord(i, "restrict") {
			i++
		}
		return st, true, s.endAt(i)
	}
	if !s.isWord(0, "create") {
		return nil, false, nil
	}
	name, i, err := s.typeObjName(i)
	if err != nil {
		return nil, true, err
	}
	st.Name = name
	if !s.isOp(i, "(") {
		return nil, true, s.errAtTok(i)
	}
	close := int(s.match[i])
	if st.Args, err = s.funcArgs(i+1, close); err != nil {
		return nil, true, err
	}
	i = close + 1
	haveReturns, haveBody := false, false
	for i < s.n() {
		switch {
		case s.isWord(i, "returns") && s.isWord(i+1, "null"):
			if !s.isWord(i+2, "on") || !s.isWord(i+3, "null") || !s.isWord(i+4, "input") {
				return nil, true, s.errAtTok(i + 2)
			}
			st.Strict, i = true, i+5
		case s.isWord(i, "returns") && s.isWord(i+1, "table") && s.isOp(i+2, "("):
			close := int(s.match[i+2])
			if st.Table, err = s.funcArgs(i+3, close); err != nil {
				return nil, true, err
			}
			if len(st.Table) == 0 {
				return nil, true, s.errAtTok(close)
			}
			for _, c := range st.Table {
				if c.Name == "" {
					return nil, true, s.errAtTok(close)
				}
			}
			st.SetOf, haveReturns, i = true, true, close+1
		case s.isWord(i, "returns"):
			k := i + 1
			if s.isWord(k, "setof") {
				st.SetOf = true
				k++
			}
			if st.Returns, i, err = s.parseTypeAt(k, s.n()); err != nil {
				return nil, true, err
			}
			haveReturns = true
		case s.isWord(i, "language"):
			if !s.isKind(i+1, tkIdent) && !s.isKind(i+1, tkString) && !s.isKind(i+1, tkQuotedIdent) {
				return nil, true, s.errAtTok(i + 1)
			}
			st.Language = strings.ToLower(s.unquoteWord(i + 1))
			i += 2
		case s.isWord(i, "immutable"), s.isWord(i, "stable"), s.isWord(i, "volatile"):
			st.Volatility = strings.ToLower(s.text(i))[0]
			i++
		case s.isWord(i, "strict"):
			st.Strict, i = true, i+1
		case s.isWord(i, "called") && s.isWord(i+1, "on") && s.isWord(i+2, "null") && s.isWord(i+3, "input"):
			st.Strict, i = false, i+4
		case s.isWord(i, "leakproof"):
			i++
		case s.isWord(i, "not") && s.isWord(i+1, "leakproof"):
			i += 2
		case s.isWord(i, "parallel") && (s.isWord(i+1, "safe") || s.isWord(i+1, "restricted") || s.isWord(i+1, "unsafe")):
			i += 2
		case s.isWord(i, "security") || s.isWord(i, "external") || s.isWord(i, "cost") || s.isWord(i, "rows") ||
			s.isWord(i, "set") || s.isWord(i, "window") || s.isWord(i, "transform") || s.isWord(i, "support"):
			return nil, true, sqlerr.NotSupported("CREATE FUNCTION option %s", strings.ToUpper(s.text(i)))
		case s.isWord(i, "as"):
			if !s.isKind(i+1, tkString) {
				return nil, true, s.errAtTok(i + 1)
			}
			if s.isOp(i+2, ",") {
				return nil, true, sqlerr.NotSupported("AS 'obj_file', 'link_symbol'")
			}
			st.Body, haveBody, i = s.strValue(i+1), true, i+2
		case s.isWord(i, "return"):
			// RETURN expr runs to the end of the statement.
			st.Body = "SELECT " + s.src[s.start(i+1):s.endOff()]
			haveBody, i = true, s.n()
		case s.isWord(i, "begin") && s.isWord(i+1, "atomic"):
			return nil, true, sqlerr.NotSupported("BEGIN ATOMIC function bodies")
		default:
			return nil, true, s.errAtTok(i)
		}
	}
	if !haveReturns {
		return nil, true, sqlerr.New(sqlerr.InvalidFunctionDefinition, "function result type must be specified")
	}
	if st.Language == "" {
		return nil, true, sqlerr.New(sqlerr.SyntaxError, "no language specified")
	}
	if st.Language != "sql" {
		return nil, true, sqlerr.NotSupported("LANGUAGE %s functions (only LANGUAGE sql)", st.Language)
	}
	if !haveBody {
		return nil, true, sqlerr.New(sqlerr.InvalidFunctionDefinition, "no function body specified")
	}
	return st, true, nil
}

// funcArgs reads an argument list in [lo, hi).
func (s *stmtToks) funcArgs(lo, hi int) ([]FuncArg, error) {
	var out []FuncArg
	for _, el := range s.split(lo, hi) {
		a, b := el[0], el[1]
		if a == b {
			return nil, s.errAtTok(a)
		}
		if s.isWord(a, "in") {
			a++
		} else if s.isWord(a, "out") || s.isWord(a, "inout") || s.isWord(a, "variadic") {
			return nil, sqlerr.NotSupported("%s arguments", strings.ToUpper(s.text(a)))
		}
		for k := a; k < b; k++ {
			if s.isWord(k, "default") || s.isOp(k, "=") {
				return nil, sqlerr.NotSupported("argument defaults")
			}
		}
		// An unnamed argument is a type that takes the whole element.
		if t, next, err := s.parseTypeAt(a, b); err == nil && next == b {
			out = append(out, FuncArg{Type: t})
			continue
		}
		t, next, err := s.parseTypeAt(a+1, b)
		if err != nil {
			return nil, err
		}
		if next != b {
			return nil, s.errAtTok(next)
		}
		name := s.unquoteIdent(a)
		if s.isKind(a, tkIdent) {
			name = strings.ToLower(name)
		}
		out = append(out, FuncArg{Name: name, Type: t})
	}
	return out, nil
}

// unquoteWord is an identifier's or a string's text.
func (s *stmtToks) unquoteWord(i int) string {
	if s.isKind(i, tkString) {
		return s.strValue(i)
	}
	return s.unquoteIdent(i)
}
