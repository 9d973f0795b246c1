package expr

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/types"
)

// CmpOp is a comparison operator.
type CmpOp uint8

const (
	EQ CmpOp = iota
	NE
	LT
	LE
	GT
	GE
	// NullSafeEQ is IS NOT DISTINCT FROM (MySQL's <=>): NULLs are equal to
	// each other and unequal to every value; the result is never NULL.
	NullSafeEQ
)

var cmpOpNames = [...]string{EQ: "=", NE: "<>", LT: "<", LE: "<=", GT: ">", GE: ">=", NullSafeEQ: "IS NOT DISTINCT FROM"}

func (op CmpOp) String() string { return cmpOpNames[op] }

// Commute returns the operator with its operands swapped: a < b is b > a.
func (op CmpOp) Commute() CmpOp {
	switch op {
	case LT:
		return GT
	case LE:
		return GE
	case GT:
		return LT
	case GE:
		return LE
	}
	return op
}

// Negate returns the operator of NOT (a op b) for non-NULL operands.
func (op CmpOp) Negate() CmpOp {
	switch op {
	case EQ:
		return NE
	case NE:
		return EQ
	case LT:
		return GE
	case LE:
		return GT
	case GT:
		return LE
	case GE:
		return LT
	}
	return op
}

// holds reports whether op accepts a three-way comparison result c.
func (op CmpOp) holds(c int) bool {
	switch op {
	case EQ, NullSafeEQ:
		return c == 0
	case NE:
		return c != 0
	case LT:
		return c < 0
	case LE:
		return c <= 0
	case GT:
		return c > 0
	case GE:
		return c >= 0
	}
	return false
}

// Compare is L op R. Operands of different numeric families compare
// exactly (types.Compare); the Builder only builds comparisons between
// comparable families.
type Compare struct {
	Op   CmpOp
	L, R Expr
}

func (e *Compare) Type() types.Type { return types.TypeBool }

func (e *Compare) Eval(c *Context, row Row) (types.Value, error) {
	l, err := e.L.Eval(c, row)
	if err != nil {
		return l, err
	}
	r, err := e.R.Eval(c, row)
	if err != nil {
		return r, err
	}
	return compareValues(e.Op, l, r), nil
}

func compareValues(op CmpOp, l, r types.Value) types.Value {
	if l.IsNull() || r.IsNull() {
		if op == NullSafeEQ {
			return types.NewBool(l.IsNull() && r.IsNull())
		}
		return types.NullValue
	}
	return types.NewBool(op.holds(types.Compare(l, r)))
}

func (e *Compare) String() string {
	return operand(e.L) + " " + e.Op.String() + " " + operand(e.R)
}

// RowCompare compares two rows of equal length in lexicographic order,
// as PostgreSQL does: pairs are compared left to right until one differs
// or involves a NULL; a NULL there makes the result NULL. The Builder
// turns row = and <> into And/Or of column comparisons (the same result)
// and uses RowCompare only for <, <=, >, >=.
type RowCompare struct {
	Op   CmpOp
	L, R []Expr
}

func (e *RowCompare) Type() types.Type { return types.TypeBool }

func (e *RowCompare) Eval(c *Context, row Row) (types.Value, error) {
	switch e.Op {
	case EQ, NE, NullSafeEQ:
		res := types.NewBool(e.Op != NE)
		for i := range e.L {
			l, err := e.L[i].Eval(c, row)
			if err != nil {
				return l, err
			}
			r, err := e.R[i].Eval(c, row)
			if err != nil {
				return r, err
			}
			v := compareValues(e.Op, l, r)
			switch {
			case v.IsNull():
				res = types.NullValue
			case v.Bool() == (e.Op == NE):
				return v, nil
			}
		}
		return res, nil
	}
	for i := range e.L {
		l, err := e.L[i].Eval(c, row)
		if err != nil {
			return l, err
		}
		r, err := e.R[i].Eval(c, row)
		if err != nil {
			return r, err
		}
		if l.IsNull() || r.IsNull() {
			return types.NullValue, nil
		}
		if cmp := types.Compare(l, r); cmp != 0 {
			return types.NewBool(e.Op.holds(cmp)), nil
		}
	}
	return types.NewBool(e.Op.holds(0)), nil
}

func (e *RowCompare) String() string {
	return "(" + joinExprs(e.L) + ") " + e.Op.String() + " (" + joinExprs(e.R) + ")"
}

// In is E [NOT] IN (List...). It is true when E equals some element,
// otherwise NULL when E or some element is NULL, otherwise false; NOT IN
// negates that (so NOT IN with a NULL element is never true).
type In struct {
	E      Expr
	List   []Expr
	Negate bool

	// set holds the group keys of the list when every element is a
	// constant (built by NewIn); hasNull records a NULL element.
	set     map[string]struct{}
	hasNull bool
}

// inSetMin is the list length from which NewIn hashes constant lists.
const inSetMin = 8

// NewIn returns E [NOT] IN (list), hashing a list of constants.
func NewIn(e Expr, list []Expr, negate bool) *In {
	n := &In{E: e, List: list, Negate: negate}
	if len(list) < inSetMin {
		return n
	}
	set := make(map[string]struct{}, len(list))
	var buf []byte
	for _, item := range list {
		k, ok := item.(*Const)
		if !ok {
			return n
		}
		if k.Value.IsNull() {
			n.hasNull = true
			continue
		}
		buf = types.AppendGroupKey(buf[:0], k.Value)
		set[string(buf)] = struct{}{}
	}
	n.set = set
	return n
}

func (e *In) Type() types.Type { return types.TypeBool }

func (e *In) Eval(c *Context, row Row) (types.Value, error) {
	v, err := e.E.Eval(c, row)
	if err != nil || v.IsNull() {
		return types.NullValue, err
	}
	found, sawNull := false, false
	if e.set != nil {
		var buf [32]byte
		_, found = e.set[string(types.AppendGroupKey(buf[:0], v))]
		sawNull = e.hasNull
	} else {
		for _, item := range e.List {
			x, err := item.Eval(c, row)
			if err != nil {
				return x, err
			}
			if x.IsNull() {
				sawNull = true
				continue
			}
			if types.Compare(v, x) == 0 {
				found = true
				break
			}
		}
	}
	switch {
	case found:
		return types.NewBool(!e.Negate), nil
	case sawNull:
		return types.NullValue, nil
	}
	return types.NewBool(e.Negate), nil
}

func (e *In) String() string {
	op := " IN ("
	if e.Negate {
		op = " NOT IN ("
	}
	return operand(e.E) + op + joinExprs(e.List) + ")"
}

// RowIn is (L...) [NOT] IN ((...), (...)): OR of row equalities with
// three-valued logic, negated for NOT IN. Every row of List has len(L)
// elements.
type RowIn struct {
	L      []Expr
	List   [][]Expr
	Negate bool
}

func (e *RowIn) Type() types.Type { return types.TypeBool }

func (e *RowIn) Eval(c *Context, row Row) (types.Value, error) {
	left := make([]types.Value, len(e.L))
	for i, x := range e.L {
		v, err := x.Eval(c, row)
		if err != nil {
			return v, err
		}
		left[i] = v
	}
	sawNull := false
	for _, r := range e.List {
		eq := true // true, or false when some pair is unequal
		null := false
		for i, x := range r {
			v, err := x.Eval(c, row)
			if err != nil {
				return v, err
			}
			if v.IsNull() || left[i].IsNull() {
				null = true
				continue
			}
			if types.Compare(left[i], v) != 0 {
				eq = false
				break
			}
		}
		switch {
		case !eq:
		case null:
			sawNull = true
		default:
			return types.NewBool(!e.Negate), nil
		}
	}
	if sawNull {
		return types.NullValue, nil
	}
	return types.NewBool(e.Negate), nil
}

func (e *RowIn) String() string {
	var b strings.Builder
	b.WriteString("(" + joinExprs(e.L) + ")")
	if e.Negate {
		b.WriteString(" NOT")
	}
	b.WriteString(" IN (")
	for i, r := range e.List {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(" + joinExprs(r) + ")")
	}
	b.WriteString(")")
	return b.String()
}
