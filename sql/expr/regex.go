package expr

import (
	"regexp"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Regex is E ~ Pattern (PostgreSQL's regular-expression match; the dialect
// front spells it as MySQL's REGEXP), or E !~ Pattern when Negate. The
// pattern is unanchored: it matches anywhere in E, as in PostgreSQL.
// Patterns are Go's RE2 syntax, which agrees with PostgreSQL's advanced
// regular expressions for everything but back-references and lookaround
// (rejected as invalid, 2201B). NULL operands give NULL.
type Regex struct {
	E, Pattern Expr
	Negate     bool

	// re is the compiled pattern when Pattern is a constant.
	re *regexp.Regexp
}

func compileRegex(p string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, sqlerr.New(sqlerr.InvalidRegularExpression, "invalid regular expression: %v", err)
	}
	return re, nil
}

// NewRegex returns the node, compiling a constant pattern.
func NewRegex(e, pattern Expr, negate bool) (*Regex, error) {
	n := &Regex{E: e, Pattern: pattern, Negate: negate}
	if k, ok := pattern.(*Const); ok && !k.Value.IsNull() {
		re, err := compileRegex(k.Value.Str())
		if err != nil {
			return nil, err
		}
		n.re = re
	}
	return n, nil
}

func (e *Regex) Type() types.Type { return types.TypeBool }

func (e *Regex) Eval(c *Context, row Row) (types.Value, error) {
	v, err := e.E.Eval(c, row)
	if err != nil || v.IsNull() {
		return types.NullValue, err
	}
	re := e.re
	if re == nil {
		p, err := e.Pattern.Eval(c, row)
		if err != nil || p.IsNull() {
			return types.NullValue, err
		}
		if re, err = compileRegex(p.Str()); err != nil {
			return types.Value{}, err
		}
	}
	return types.NewBool(re.MatchString(v.Str()) != e.Negate), nil
}

func (e *Regex) String() string {
	op := " ~ "
	if e.Negate {
		op = " !~ "
	}
	return operand(e.E) + op + operand(e.Pattern)
}

func (b *Builder) regex(n *ast.PatternRegexpExpr) (Expr, error) {
	e, err := b.build(n.Expr)
	if err != nil {
		return nil, err
	}
	p, err := b.build(n.Pattern)
	if err != nil {
		return nil, err
	}
	if e, err = b.resolve(e, types.TypeUtf8); err != nil {
		return nil, err
	}
	if p, err = b.resolve(p, types.TypeUtf8); err != nil {
		return nil, err
	}
	op := "~"
	if n.Not {
		op = "!~"
	}
	for _, x := range []Expr{e, p} {
		switch x.Type().Family {
		case types.Utf8, types.Null:
		default:
			return nil, opNotExist(op, e.Type(), p.Type())
		}
	}
	return NewRegex(e, p, n.Not)
}
