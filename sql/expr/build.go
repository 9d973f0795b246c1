package expr

import (
	"math"

	"fmt"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/pivotdb/pivotdb/sql/memory"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Scope resolves column names for a Builder.
type Scope interface {
	// ResolveColumn resolves [table.]name to a position in the input row.
	// Names are passed as written (the scope decides case sensitivity).
	// Errors: 42703 column does not exist, 42702 ambiguous.
	ResolveColumn(table, name string) (index int, typ types.Type, err error)
}

// MaxDepth bounds the nesting of expressions the Builder accepts (54001
// beyond), so that evaluation, which recurses, never exhausts the stack.
const MaxDepth = 2000

// Builder translates TiDB AST expressions into Expr trees: it resolves
// columns through Scope, types every node, resolves untyped literals and
// parameters from context, and folds constant subtrees. A Builder is used
// for one statement by one goroutine; it may build several expressions.
type Builder struct {
	Scope Scope
	// StrictDivision makes division and modulo by zero raise 22012, as in
	// PostgreSQL (sql_dialect postgresql); otherwise they are NULL (yql).
	StrictDivision bool
	// IntegerDateDiff makes date − date an integer number of days, as in
	// PostgreSQL (sql_dialect postgresql); in yql it is an Interval.
	IntegerDateDiff bool
	// NumericLiterals types an integer literal beyond bigint's range as
	// numeric, as PostgreSQL does (sql_dialect postgresql); in yql it is
	// a Uint64 when it fits one.
	NumericLiterals bool
	// CaretPower makes a ^ b exponentiation, PostgreSQL's operator
	// (sql_dialect postgresql: power's float8 or numeric form,
	// func_numeric.go); in yql it is 0A000.
	CaretPower bool
	// ParamTypes are the types of $1..$n: declared types in (zero or
	// TypeUnknown when not declared), inferred types out (TypeUnknown where
	// nothing decided). It grows as parameters are seen.
	ParamTypes []types.Type
	// ParamIndex maps the Order of a TiDB ParamMarkerExpr to its $n
	// (1-based), as the dialect front computed it; nil means the i-th
	// marker is $(i+1).
	ParamIndex []int
	// Replace, when set, is tried on every node before the default
	// translation; the SELECT builder uses it to substitute aggregate calls
	// and GROUP BY expressions with references to aggregated columns.
	// ok=false falls through to the default translation.
	Replace func(n ast.ExprNode) (e Expr, ok bool, err error)
	// Subquery, when set, builds subquery nodes: *ast.SubqueryExpr (a
	// scalar subquery), *ast.ExistsSubqueryExpr, *ast.CompareSubqueryExpr
	// (x op ANY/ALL (...)), *ast.PatternInExpr with Sel set, and an
	// *ast.BinaryOperationExpr comparing a row with a subquery
	// ((a, b) = (SELECT ...)). It may build operands with the same Builder.
	// When nil, subqueries are 0A000.
	Subquery func(n ast.ExprNode) (Expr, error)
	// Funcs, when set, is tried on every function call after its
	// arguments are built and before the built-in functions: the session
	// supplies the functions that read its own state or the catalog
	// (current_database(), pg_table_is_visible(), ::regclass). ok=false
	// falls through to the built-in functions.
	Funcs func(name string, args []Expr) (e Expr, ok bool, err error)
	// Types, when set, resolves a user-defined type name of a cast
	// (types.Type.IsUserTypeRef, or an array of one) against the catalog.
	// When nil such names are 42704.
	Types func(t types.Type) (types.Type, error)
	// Position, when set, maps a node's offset in the parsed text to the
	// 1-based position in the client's statement reported with errors.
	Position func(offset int) int
	// Mem, when set, is the statement's memory account: IN lists and long
	// constants reserve what the built tree will hold (53200 over the
	// budget). nil: no budget.
	Mem *memory.Account

	depth int
}

// longConst is the length from which a string constant is reserved in
// Builder.Mem: shorter ones are covered by the statement's parse estimate.
const longConst = 4 << 10

// Build translates n. A result that is still untyped (a lone string
// literal or parameter) becomes Utf8, as PostgreSQL types an unknown
// output column as text.
func (b *Builder) Build(n ast.ExprNode) (Expr, error) {
	return b.BuildTyped(n, types.TypeUtf8)
}

// BuildTyped translates n with an expected type: an untyped literal or
// parameter, or a NULL, becomes t (INSERT values, UPDATE SET, defaults).
// Other types are returned as they are; use AssignCast to convert them.
func (b *Builder) BuildTyped(n ast.ExprNode, t types.Type) (Expr, error) {
	e, err := b.BuildUntyped(n)
	if err != nil {
		return nil, err
	}
	switch e.Type().Family {
	case types.Unknown:
		if e, err = b.resolve(e, t); err != nil {
			return nil, b.withPos(err, n)
		}
	case types.Null:
		if _, ok := e.(*Const); ok && t.Family != types.Unknown {
			e = NullOf(t)
		}
	}
	b.fixParams(e)
	return e, nil
}

// BuildAssign translates n for storing into column `column` of type t
// (INSERT, UPDATE SET): BuildTyped then AssignCast.
func (b *Builder) BuildAssign(n ast.ExprNode, t types.Type, column string) (Expr, error) {
	e, err := b.BuildTyped(n, t)
	if err != nil {
		return nil, err
	}
	e, err = b.AssignCast(e, t, column)
	if err != nil {
		return nil, b.withPos(err, n)
	}
	return e, nil
}

// BuildBool translates a condition (WHERE, HAVING, ON, CHECK): the result
// must be boolean; clause names the clause in the 42804 error.
func (b *Builder) BuildBool(n ast.ExprNode, clause string) (Expr, error) {
	e, err := b.BuildUntyped(n)
	if err != nil {
		return nil, err
	}
	if e, err = b.boolOperand(e, clause); err != nil {
		return nil, b.withPos(err, n)
	}
	b.fixParams(e)
	return e, nil
}

// BuildUntyped translates n leaving an untyped result untyped, for callers
// that unify several expressions themselves (VALUES rows, UNION arms) with
// CommonType and Coerce.
func (b *Builder) BuildUntyped(n ast.ExprNode) (Expr, error) {
	e, err := b.build(n)
	if err != nil {
		return nil, err
	}
	b.fixParams(e)
	return e, nil
}

// fixParams types the occurrences of a parameter built before a later
// occurrence decided its type.
func (b *Builder) fixParams(e Expr) {
	Walk(e, func(x Expr) bool {
		if p, ok := x.(*Param); ok && p.Typ.Family == types.Unknown && p.N <= len(b.ParamTypes) {
			if t := b.ParamTypes[p.N-1]; t.Family != types.Unknown && t.Family != types.Null {
				p.Typ = t
			}
		}
		return true
	})
}

func (b *Builder) setParamType(n int, t types.Type) {
	if b == nil || n < 1 {
		return
	}
	b.growParams(n)
	b.ParamTypes[n-1] = t
}

func (b *Builder) growParams(n int) {
	for len(b.ParamTypes) < n {
		b.ParamTypes = append(b.ParamTypes, types.TypeUnknown)
	}
}

func (b *Builder) withPos(err error, n ast.Node) error {
	if b.Position == nil || n == nil {
		return err
	}
	return sqlerr.WithPosition(err, b.Position(n.OriginTextPosition()))
}

func (b *Builder) build(n ast.ExprNode) (Expr, error) {
	b.depth++
	defer func() { b.depth-- }()
	if b.depth > MaxDepth {
		return nil, b.withPos(sqlerr.New(codeStatementTooComplex,
			"stack depth limit exceeded: expression nests more than %d levels", MaxDepth), n)
	}
	if b.Replace != nil {
		e, ok, err := b.Replace(n)
		if err != nil {
			return nil, b.withPos(err, n)
		}
		if ok {
			return e, nil
		}
	}
	e, err := b.translate(n)
	if err != nil {
		return nil, b.withPos(err, n)
	}
	return fold(e), nil
}

// growConst reserves a long string constant in b.Mem.
func (b *Builder) growConst(str string) error {
	if len(str) >= longConst {
		return b.Mem.Grow(memory.ConstBytesPerByte*int64(len(str)), "a constant")
	}
	return nil
}

func (b *Builder) buildList(ns []ast.ExprNode) ([]Expr, error) {
	out := make([]Expr, len(ns))
	for i, n := range ns {
		e, err := b.build(n)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

func notSupported(what string) error { return sqlerr.NotSupported("%s", what) }

func (b *Builder) translate(n ast.ExprNode) (Expr, error) {
	switch n := n.(type) {
	case *ast.ParenthesesExpr:
		return b.build(n.Expr)
	case *test_driver.ParamMarkerExpr:
		return b.param(n)
	case *test_driver.ValueExpr:
		if str, ok := n.GetValue().(string); ok {
			if err := b.growConst(str); err != nil {
				return nil, err
			}
		}
		if u, ok := n.GetValue().(uint64); ok && b.NumericLiterals {
			d := new(apd.Decimal)
			d.Coeff.SetUint64(u)
			return NewConst(types.NewDecimal(d)), nil
		}
		return literal(n)
	case *ast.ColumnNameExpr:
		return b.column(n.Name)
	case *ast.BinaryOperationExpr:
		return b.binary(n)
	case *ast.UnaryOperationExpr:
		return b.unary(n)
	case *ast.IsNullExpr:
		e, err := b.build(n.Expr)
		if err != nil {
			return nil, err
		}
		return &IsNull{E: e, Negate: n.Not}, nil
	case *ast.IsTruthExpr:
		e, err := b.build(n.Expr)
		if err != nil {
			return nil, err
		}
		if e, err = b.boolOperand(e, "IS TRUE"); err != nil {
			return nil, err
		}
		return &IsTruth{E: e, Truth: n.True != 0, Negate: n.Not}, nil
	case *ast.PatternInExpr:
		if n.Sel != nil {
			return b.subquery(n)
		}
		return b.in(n)
	case *ast.BetweenExpr:
		return b.between(n)
	case *ast.PatternLikeOrIlikeExpr:
		return b.like(n)
	case *ast.CaseExpr:
		return b.caseExpr(n)
	case *ast.FuncCallExpr:
		return b.funcCall(n)
	case *ast.FuncCastExpr:
		return b.funcCast(n)
	case *ast.RowExpr:
		return nil, notSupported("a row expression outside a comparison or IN")
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr, *ast.CompareSubqueryExpr:
		return b.subquery(n)
	case *ast.AggregateFuncExpr:
		return nil, aggNotAllowed(strings.ToLower(n.F))
	case *ast.WindowFuncExpr:
		return nil, sqlerr.New(sqlerr.WindowingError, "window functions are not allowed here: %s() is allowed only in a SELECT list or ORDER BY", strings.ToLower(n.Name))
	case *ast.DefaultExpr:
		return nil, notSupported("DEFAULT in an expression")
	case *ast.VariableExpr:
		return nil, notSupported("variable @" + n.Name)
	case *ast.PatternRegexpExpr:
		return b.regex(n)
	case *ast.PositionExpr:
		return nil, notSupported("a column position in an expression")
	}
	name := strings.TrimSuffix(strings.TrimPrefix(fmt.Sprintf("%T", n), "*ast."), "Expr")
	return nil, notSupported(name + " expression")
}

func aggNotAllowed(name string) error {
	return sqlerr.New(codeGroupingError, "aggregate function %s() is not allowed here", name)
}

func (b *Builder) subquery(n ast.ExprNode) (Expr, error) {
	if b.Subquery == nil {
		return nil, notSupported("a subquery in this context")
	}
	return b.Subquery(n)
}

func (b *Builder) column(c *ast.ColumnName) (Expr, error) {
	name := c.Name.O
	if b.Scope == nil {
		return nil, sqlerr.New(codeUndefinedColumn, "column %q does not exist", name)
	}
	idx, t, err := b.Scope.ResolveColumn(c.Table.O, name)
	if err != nil {
		return nil, err
	}
	display := name
	if c.Table.O != "" {
		display = c.Table.O + "." + name
	}
	return &ColumnRef{Index: idx, Name: display, Typ: t}, nil
}

func (b *Builder) param(p *test_driver.ParamMarkerExpr) (Expr, error) {
	n := p.Order + 1
	if b.ParamIndex != nil {
		if p.Order < 0 || p.Order >= len(b.ParamIndex) {
			return nil, sqlerr.New(sqlerr.InternalError, "expr: parameter marker %d has no number", p.Order)
		}
		n = b.ParamIndex[p.Order]
	}
	return b.paramN(n)
}

// paramN is the parameter $n.
func (b *Builder) paramN(n int) (Expr, error) {
	if n < 1 {
		return nil, sqlerr.New(sqlerr.UndefinedParameter, "there is no parameter $%d", n)
	}
	b.growParams(n)
	t := b.ParamTypes[n-1]
	if t.Family == types.Null {
		t = types.TypeUnknown
		b.ParamTypes[n-1] = t
	}
	return &Param{N: n, Typ: t}, nil
}

// literal translates a constant. Integers are Int32 when they fit, as
// PostgreSQL types them (so int4_col + 1 stays integer and 2147483647 + 1
// is 22003), then Int64, then Uint64, numbers with a point are exact Decimals as in PostgreSQL,
// numbers with an exponent are Double, quoted strings are untyped until
// their context types them, TRUE/FALSE are Bool, x'..' is String.
func literal(v *test_driver.ValueExpr) (Expr, error) {
	switch x := v.GetValue().(type) {
	case nil:
		return NewConst(types.NullValue), nil
	case int64:
		if v.Type.GetFlag()&mysql.IsBooleanFlag != 0 {
			return NewConst(types.NewBool(x != 0)), nil
		}
		return intLiteral(x), nil
	case uint64:
		return NewConst(types.NewUint64(x)), nil
	case float64:
		return NewConst(types.NewDouble(x)), nil
	case float32:
		return NewConst(types.NewDouble(float64(x))), nil
	case string:
		return NewConst(types.NewUnknown(x)), nil
	case []byte:
		return NewConst(types.NewString(string(x))), nil
	case *test_driver.MyDecimal:
		return decimalLiteral(x.String())
	case test_driver.BinaryLiteral:
		return NewConst(types.NewString(string(x))), nil
	}
	return nil, notSupported("this kind of literal")
}

func intLiteral(x int64) Expr {
	if x >= math.MinInt32 && x <= math.MaxInt32 {
		return NewConst(types.NewInt(types.Int32, x))
	}
	return NewConst(types.NewInt64(x))
}

// decimalLiteral is the constant of a decimal literal spelled as TiDB's
// MyDecimal spells it.
func decimalLiteral(text string) (Expr, error) {
	d, _, err := apd.NewFromString(text)
	if err != nil {
		return nil, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type numeric: %q", text)
	}
	return NewConst(types.NewDecimal(d)), nil
}

// boolOperand checks that e can be used as a condition: Bool or NULL;
// untyped literals and parameters become Bool.
func (b *Builder) boolOperand(e Expr, context string) (Expr, error) {
	e, err := b.resolve(e, types.TypeBool)
	if err != nil {
		return nil, err
	}
	switch e.Type().Family {
	case types.Bool, types.Null:
		return e, nil
	}
	return nil, sqlerr.New(codeDatatypeMismatch, "argument of %s must be type boolean, not type %s", context, TypeName(e.Type()))
}

func (b *Builder) binary(n *ast.BinaryOperationExpr) (Expr, error) {
	switch n.Op {
	case opcode.EQ, opcode.NE, opcode.LT, opcode.LE, opcode.GT, opcode.GE, opcode.NullEQ:
		return b.comparison(cmpOpOf(n.Op), n.L, n.R)
	}
	l, err := b.build(n.L)
	if err != nil {
		return nil, err
	}
	r, err := b.build(n.R)
	if err != nil {
		return nil, err
	}
	switch n.Op {
	case opcode.LogicAnd, opcode.LogicOr, opcode.LogicXor:
		name := map[opcode.Op]string{opcode.LogicAnd: "AND", opcode.LogicOr: "OR", opcode.LogicXor: "XOR"}[n.Op]
		if l, err = b.boolOperand(l, name); err != nil {
			return nil, err
		}
		if r, err = b.boolOperand(r, name); err != nil {
			return nil, err
		}
		switch n.Op {
		case opcode.LogicAnd:
			return &And{L: l, R: r}, nil
		case opcode.LogicOr:
			return &Or{L: l, R: r}, nil
		}
		// a XOR b is a <> b on booleans, NULL when either is NULL.
		return &Compare{Op: NE, L: l, R: r}, nil
	case opcode.Plus:
		return b.arithExprs(Add, l, r)
	case opcode.Minus:
		return b.arithExprs(Sub, l, r)
	case opcode.Mul:
		return b.arithExprs(Mul, l, r)
	case opcode.Div:
		return b.arithExprs(Div, l, r)
	case opcode.Mod:
		return b.arithExprs(Mod, l, r)
	case opcode.IntDiv:
		return b.arithExprs(IntDiv, l, r)
	case opcode.And, opcode.Or:
		return b.bitwise(n.Op, l, r)
	case opcode.Xor:
		if b.CaretPower {
			return buildPower(b, "power", []Expr{l, r})
		}
	}
	return nil, notSupported("operator " + n.Op.String())
}

// bitwise builds PostgreSQL's integer operators a & b and a | b (pgjdbc's
// getIndexInfo tests indoption[k] & 1::smallint for DESC), of the wider
// operand type; other types are 42883 as in PostgreSQL.
func (b *Builder) bitwise(op opcode.Op, l, r Expr) (Expr, error) {
	sym, name := "&", "bitand"
	if op == opcode.Or {
		sym, name = "|", "bitor"
	}
	var err error
	if l.Type().Family == types.Unknown {
		if l, err = b.resolve(l, types.TypeInt32); err != nil {
			return nil, err
		}
	}
	if r.Type().Family == types.Unknown {
		if r, err = b.resolve(r, types.TypeInt32); err != nil {
			return nil, err
		}
	}
	lf, rf := l.Type().Family, r.Type().Family
	if !(lf.IsInteger() || lf == types.Null) || !(rf.IsInteger() || rf == types.Null) {
		return nil, opNotExist(sym, l.Type(), r.Type())
	}
	t, _ := ArithType(Add, l.Type(), r.Type())
	return newFunc(name, t, []Expr{l, r}, true, func(_ *Context, a []types.Value) (types.Value, error) {
		x := a[0].Int() & a[1].Int()
		if op == opcode.Or {
			x = a[0].Int() | a[1].Int()
		}
		if t.Family.IsUnsigned() {
			return types.NewUint(t.Family, uint64(x)), nil
		}
		return types.NewInt(t.Family, x), nil
	}), nil
}

func cmpOpOf(op opcode.Op) CmpOp {
	switch op {
	case opcode.NE:
		return NE
	case opcode.LT:
		return LT
	case opcode.LE:
		return LE
	case opcode.GT:
		return GT
	case opcode.GE:
		return GE
	case opcode.NullEQ:
		return NullSafeEQ
	}
	return EQ
}

// comparison builds l op r for scalars and rows.
func (b *Builder) comparison(op CmpOp, ln, rn ast.ExprNode) (Expr, error) {
	if e, ok, err := b.arrayCompare(op, ln, rn); ok {
		return e, err
	}
	lr, lok := unparen(ln).(*ast.RowExpr)
	rr, rok := unparen(rn).(*ast.RowExpr)
	if lok || rok {
		if !lok || !rok {
			_, lsub := unparen(ln).(*ast.SubqueryExpr)
			_, rsub := unparen(rn).(*ast.SubqueryExpr)
			if lsub || rsub {
				// A row compared with a one-row subquery: the Subquery
				// hook gets the whole comparison.
				return b.subquery(&ast.BinaryOperationExpr{Op: opOfCmp(op), L: ln, R: rn})
			}
			return nil, sqlerr.New(sqlerr.SyntaxError, "cannot compare a row with a scalar")
		}
		return b.rowComparison(op, lr.Values, rr.Values)
	}
	l, err := b.build(ln)
	if err != nil {
		return nil, err
	}
	r, err := b.build(rn)
	if err != nil {
		return nil, err
	}
	return b.compareExprs(op, l, r)
}

func opOfCmp(op CmpOp) opcode.Op {
	return map[CmpOp]opcode.Op{EQ: opcode.EQ, NE: opcode.NE, LT: opcode.LT, LE: opcode.LE,
		GT: opcode.GT, GE: opcode.GE, NullSafeEQ: opcode.NullEQ}[op]
}

func unparen(n ast.ExprNode) ast.ExprNode {
	for {
		p, ok := n.(*ast.ParenthesesExpr)
		if !ok {
			return n
		}
		n = p.Expr
	}
}

// compareExprs type-checks l op r: untyped sides take the other side's
// type, and the families must be comparable (42883 otherwise, worded as
// PostgreSQL's "operator does not exist: integer = text").
func (b *Builder) compareExprs(op CmpOp, l, r Expr) (Expr, error) {
	l, r, err := b.resolvePair(l, r)
	if err != nil {
		return nil, err
	}
	if !Comparable(l.Type(), r.Type()) {
		sym := op.String()
		if op == NullSafeEQ {
			sym = "="
		}
		return nil, opNotExist(sym, l.Type(), r.Type())
	}
	// timestamptz against another time: the other side names a wall-clock
	// time in the session's zone, as in PostgreSQL (zone.go). The
	// timestamptz side is the one converted (to that wall clock), so that
	// a timestamp column compared with now() stays a bare column for key
	// range inference; the order is the same but for the hour a daylight
	// saving change repeats.
	l, r = blankCompare(op, l, r)
	lf, rf := l.Type().Family, r.Type().Family
	switch {
	case lf == types.TimestampTZ && rf != types.TimestampTZ && rf.IsTime():
		l = &Cast{E: l, To: types.TypeTimestamp}
	case rf == types.TimestampTZ && lf != types.TimestampTZ && lf.IsTime():
		r = &Cast{E: r, To: types.TypeTimestamp}
	}
	return &Compare{Op: op, L: l, R: r}, nil
}

// rowComparison: (a, b) = (1, 2) is (a = 1) AND (b = 2), <> is the OR of
// <>, IS NOT DISTINCT FROM the AND of the pairs; <, <=, >, >= compare
// lexicographically with RowCompare.
func (b *Builder) rowComparison(op CmpOp, ln, rn []ast.ExprNode) (Expr, error) {
	if len(ln) != len(rn) {
		return nil, sqlerr.New(sqlerr.SyntaxError, "unequal number of entries in row expressions")
	}
	ls, err := b.buildList(ln)
	if err != nil {
		return nil, err
	}
	rs, err := b.buildList(rn)
	if err != nil {
		return nil, err
	}
	pairs := make([]Expr, len(ls))
	for i := range ls {
		c, err := b.compareExprs(op, ls[i], rs[i])
		if err != nil {
			return nil, err
		}
		cmp := c.(*Compare)
		ls[i], rs[i] = cmp.L, cmp.R
		pairs[i] = fold(c)
	}
	switch op {
	case EQ, NullSafeEQ:
		return conjoin(pairs, false), nil
	case NE:
		return conjoin(pairs, true), nil
	}
	return &RowCompare{Op: op, L: ls, R: rs}, nil
}

// conjoin joins es with AND (or OR) into a left-deep tree.
func conjoin(es []Expr, or bool) Expr {
	e := es[0]
	for _, x := range es[1:] {
		if or {
			e = fold(&Or{L: e, R: x})
		} else {
			e = fold(&And{L: e, R: x})
		}
	}
	return e
}

// arithExprs type-checks l op r. An untyped operand takes the other's type
// (a time minus an untyped literal is tried as a time first, then as an
// interval, as PostgreSQL does); two untyped operands are ambiguous.
func (b *Builder) arithExprs(op ArithOp, l, r Expr) (Expr, error) {
	lu, ru := l.Type().Family == types.Unknown, r.Type().Family == types.Unknown
	var err error
	switch {
	case lu && ru, lu && r.Type().Family == types.Null, ru && l.Type().Family == types.Null:
		return nil, sqlerr.New(codeAmbiguousFunction, "operator is not unique: %s %s %s",
			TypeName(l.Type()), op, TypeName(r.Type()))
	case lu:
		l, err = b.resolveArith(op, l, r.Type())
	case ru:
		r, err = b.resolveArith(op, r, l.Type())
	}
	if err != nil {
		return nil, err
	}
	l, r = adoptUnsigned(l, r), adoptUnsigned(r, l)
	if b.IntegerDateDiff && op == Sub && l.Type().Family == types.Date && r.Type().Family == types.Date {
		return fold(newFunc("date_mi", types.TypeInt32, []Expr{l, r}, true, func(_ *Context, a []types.Value) (types.Value, error) {
			if a[0].IsInfiniteTime() || a[1].IsInfiniteTime() {
				return types.Value{}, types.InfiniteSubtractError("dates")
			}
			return types.IntToFamily(types.Int32, a[0].Int()-a[1].Int())
		})), nil
	}
	e, err := NewArith(op, l, r)
	if err == nil {
		e.Strict = b.StrictDivision
	}
	return e, err
}

// adoptUnsigned makes a non-negative integer constant next to an unsigned
// operand of 32 or 64 bits take that operand's family when it fits, so
// that `u - 1` and `farm_hash(k) % 16` compute in the unsigned family
// instead of the mixed-signedness signed one (where hashes above 2^63 would
// be out of range). Narrower unsigned operands keep the literal a signed
// 32-bit integer, as int2_col + 1 is integer in PostgreSQL.
func adoptUnsigned(k, other Expr) Expr {
	c, ok := k.(*Const)
	of := other.Type().Family
	if !ok || !of.IsUnsigned() || intBits(of) < 32 {
		return k
	}
	if f := c.Value.Family(); f.IsInteger() && !f.IsUnsigned() && c.Value.Int() >= 0 {
		if v, err := types.IntToFamily(of, c.Value.Int()); err == nil {
			return &Const{Value: v, Typ: types.T(of)}
		}
	}
	return k
}

func (b *Builder) resolveArith(op ArithOp, unknown Expr, other types.Type) (Expr, error) {
	f := other.Family
	switch {
	case f.IsTime() && op == Sub:
		if e, err := b.resolve(unknown, BaseType(other)); err == nil {
			return e, nil
		}
		return b.resolve(unknown, types.TypeInterval)
	case f.IsTime():
		return b.resolve(unknown, types.TypeInterval)
	case f == types.Interval && (op == Mul || op == Div):
		return b.resolve(unknown, types.TypeDouble)
	}
	return b.resolve(unknown, BaseType(other))
}

func (b *Builder) unary(n *ast.UnaryOperationExpr) (Expr, error) {
	e, err := b.build(n.V)
	if err != nil {
		return nil, err
	}
	switch n.Op {
	case opcode.Not, opcode.Not2:
		if e, err = b.boolOperand(e, "NOT"); err != nil {
			return nil, err
		}
		return &Not{E: e}, nil
	case opcode.Plus:
		// +x is x for every type, as in SQLite and MySQL (PostgreSQL
		// accepts it only on numbers); the sqllogictest corpus writes
		// `+ col` on text columns.
		return e, nil
	case opcode.Minus:
		return b.negate(e)
	}
	return nil, notSupported("operator " + n.Op.String())
}

// negate builds -e.
func (b *Builder) negate(e Expr) (Expr, error) {
	op, sym := Neg, "-"
	if e.Type().Family == types.Unknown {
		var err error
		if e, err = b.resolve(e, types.TypeDecimal); err != nil {
			return nil, err
		}
	}
	t, ok := UnaryType(op, e.Type())
	if !ok {
		return nil, opNotExist1(sym, e.Type())
	}
	return &Unary{Op: op, E: e, Typ: t}, nil
}

// in builds E [NOT] IN (list): the elements are typed against E (or E
// against the first typed element) and must be comparable with it.
func (b *Builder) in(n *ast.PatternInExpr) (Expr, error) {
	if row, ok := unparen(n.Expr).(*ast.RowExpr); ok {
		return b.rowIn(row.Values, n.List, n.Not)
	}
	e, err := b.build(n.Expr)
	if err != nil {
		return nil, err
	}
	if len(n.List) == 1 {
		if f, ok := n.List[0].(*ast.FuncCallExpr); ok && f.FnName.L == "pivot_empty_list" && len(f.Args) == 0 {
			// x IN () (SQLite): no element equals x, not even when x is
			// NULL, so it is FALSE and NOT IN () is TRUE.
			return &Const{Value: types.NewBool(n.Not), Typ: types.TypeBool}, nil
		}
	}
	if err := b.Mem.Grow(memory.InItemBytes*int64(len(n.List)), "an IN list"); err != nil {
		return nil, err
	}
	list, err := b.buildList(n.List)
	if err != nil {
		return nil, err
	}
	e, list, err = b.unifyIn(e, list)
	if err != nil {
		return nil, err
	}
	return NewIn(e, list, n.Not), nil
}

func (b *Builder) unifyIn(e Expr, list []Expr) (Expr, []Expr, error) {
	var err error
	if e.Type().Family == types.Unknown {
		target := types.TypeUtf8
		for _, x := range list {
			if f := x.Type().Family; f != types.Unknown && f != types.Null {
				target = BaseType(x.Type())
				break
			}
		}
		if e, err = b.resolve(e, target); err != nil {
			return nil, nil, err
		}
	}
	for i, x := range list {
		if x, err = b.resolve(x, resolveTarget(e.Type())); err != nil {
			return nil, nil, err
		}
		if !Comparable(e.Type(), x.Type()) {
			return nil, nil, opNotExist("=", e.Type(), x.Type())
		}
		list[i] = x
	}
	e, list = blankIn(e, list)
	return e, list, nil
}

func (b *Builder) rowIn(ln []ast.ExprNode, items []ast.ExprNode, negate bool) (Expr, error) {
	ls, err := b.buildList(ln)
	if err != nil {
		return nil, err
	}
	if err := b.Mem.Grow(memory.InItemBytes*int64(len(items)*len(ls)), "an IN list"); err != nil {
		return nil, err
	}
	rows := make([][]Expr, len(items))
	for i, item := range items {
		r, ok := unparen(item).(*ast.RowExpr)
		if !ok || len(r.Values) != len(ls) {
			return nil, sqlerr.New(sqlerr.SyntaxError, "IN list element %d does not have %d entries", i+1, len(ls))
		}
		if rows[i], err = b.buildList(r.Values); err != nil {
			return nil, err
		}
	}
	for col := range ls {
		column := make([]Expr, len(rows))
		for i := range rows {
			column[i] = rows[i][col]
		}
		if ls[col], column, err = b.unifyIn(ls[col], column); err != nil {
			return nil, err
		}
		for i := range rows {
			rows[i][col] = column[i]
		}
	}
	return &RowIn{L: ls, List: rows, Negate: negate}, nil
}

// between desugars E BETWEEN a AND b into (E >= a) AND (E <= b), and NOT
// BETWEEN into (E < a) OR (E > b), so that the planner sees plain
// comparisons. E is shared by both comparisons (evaluated twice, as in
// PostgreSQL).
func (b *Builder) between(n *ast.BetweenExpr) (Expr, error) {
	e, err := b.build(n.Expr)
	if err != nil {
		return nil, err
	}
	lo, err := b.build(n.Left)
	if err != nil {
		return nil, err
	}
	hi, err := b.build(n.Right)
	if err != nil {
		return nil, err
	}
	if e.Type().Family == types.Unknown {
		t, err := CommonType("BETWEEN", lo.Type(), hi.Type())
		if err != nil {
			return nil, err
		}
		if e, err = b.resolve(e, BaseType(t)); err != nil {
			return nil, err
		}
	}
	opLo, opHi := GE, LE
	if n.Not {
		opLo, opHi = LT, GT
	}
	l, err := b.compareExprs(opLo, e, lo)
	if err != nil {
		return nil, err
	}
	h, err := b.compareExprs(opHi, e, hi)
	if err != nil {
		return nil, err
	}
	if n.Not {
		return &Or{L: fold(l), R: fold(h)}, nil
	}
	return &And{L: fold(l), R: fold(h)}, nil
}

func (b *Builder) like(n *ast.PatternLikeOrIlikeExpr) (Expr, error) {
	e, err := b.build(n.Expr)
	if err != nil {
		return nil, err
	}
	p, err := b.build(n.Pattern)
	if err != nil {
		return nil, err
	}
	// Untyped sides are text (bytes next to a String operand).
	target := types.TypeUtf8
	if e.Type().Family == types.String || p.Type().Family == types.String {
		target = types.TypeString
	}
	if e, err = b.resolve(e, target); err != nil {
		return nil, err
	}
	if p, err = b.resolve(p, target); err != nil {
		return nil, err
	}
	op := "~~"
	if !n.IsLike {
		op = "~~*"
	}
	for _, x := range []Expr{e, p} {
		switch x.Type().Family {
		case types.Utf8, types.String, types.Null:
		default:
			return nil, opNotExist(op, e.Type(), p.Type())
		}
	}
	return NewLike(e, p, rune(n.Escape), n.Not, !n.IsLike)
}

func (b *Builder) caseExpr(n *ast.CaseExpr) (Expr, error) {
	c := &Case{}
	var err error
	if n.Value != nil {
		if c.Operand, err = b.build(n.Value); err != nil {
			return nil, err
		}
	}
	results := make([]Expr, 0, len(n.WhenClauses)+1)
	for _, w := range n.WhenClauses {
		cond, err := b.build(w.Expr)
		if err != nil {
			return nil, err
		}
		if c.Operand != nil {
			cmp, err := b.compareExprs(EQ, c.Operand, cond)
			if err != nil {
				return nil, err
			}
			c.Operand, cond = cmp.(*Compare).L, cmp.(*Compare).R
		} else if cond, err = b.boolOperand(cond, "CASE/WHEN"); err != nil {
			return nil, err
		}
		res, err := b.build(w.Result)
		if err != nil {
			return nil, err
		}
		c.Whens = append(c.Whens, When{Cond: cond, Result: res})
		results = append(results, res)
	}
	if n.ElseClause != nil {
		if c.Else, err = b.build(n.ElseClause); err != nil {
			return nil, err
		}
		results = append(results, c.Else)
	}
	if c.Typ, err = b.commonArgs("CASE", results, 0); err != nil {
		return nil, err
	}
	for i := range c.Whens {
		c.Whens[i].Result = results[i]
	}
	if c.Else != nil {
		c.Else = results[len(results)-1]
	}
	return c, nil
}

// userType resolves a cast's type when it names a user-defined type.
func (b *Builder) userType(t types.Type) (types.Type, error) {
	if !t.ElemType().IsUserTypeRef() {
		return t, nil
	}
	if b.Types == nil {
		return types.Type{}, sqlerr.New(sqlerr.UndefinedObject, "type %q does not exist", t.ElemType().Enum.Name)
	}
	return b.Types(t)
}
