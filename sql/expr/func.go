package expr

import (
	"errors"
	"sort"
	"strings"

	"github.com/pivotdb/pivotdb/sql/types"
)

// Func is a call of a scalar function. Name is the canonical lower-case
// name (aliases such as ceiling are reported as the name written). The
// planner pattern-matches Func nodes by Name (farm_hash for computed key
// columns); build them with NewFunc or a Builder, never as literals, since
// the implementation is chosen at build time.
type Func struct {
	Name string
	Args []Expr
	Typ  types.Type
	// Deterministic is false for random() and the clock functions: they
	// are never folded into constants, and computed columns reject them.
	Deterministic bool

	impl *funcImpl
}

// evalFn computes a function from its argument values.
type evalFn func(c *Context, args []types.Value) (types.Value, error)

type funcImpl struct {
	// strict functions return NULL for a NULL argument without calling
	// eval.
	strict bool
	eval   evalFn
}

func (e *Func) Type() types.Type { return e.Typ }

func (e *Func) Eval(c *Context, row Row) (types.Value, error) {
	if e.impl == nil {
		// A Func built as a literal: bind it now (not cached, since Eval
		// must not modify the node).
		f, err := NewFunc(e.Name, e.Args)
		if err != nil {
			return types.Value{}, err
		}
		fn, ok := f.(*Func)
		if !ok {
			return f.Eval(c, row)
		}
		return fn.Eval(c, row)
	}
	var buf [4]types.Value
	args := buf[:0]
	for _, a := range e.Args {
		v, err := a.Eval(c, row)
		if err != nil {
			return v, err
		}
		if v.IsNull() && e.impl.strict {
			return types.NullValue, nil
		}
		args = append(args, v)
	}
	return e.impl.eval(c, args)
}

func (e *Func) String() string { return e.Name + "(" + joinExprs(e.Args) + ")" }

// funcDef describes one scalar function (or a family of aliases).
type funcDef struct {
	minArgs, maxArgs int // maxArgs < 0: variadic
	// build type-checks the arguments (resolving untyped ones) and returns
	// the expression: usually a *Func from newFunc, sometimes another node
	// (coalesce → Coalesce, if → Case).
	build func(b *Builder, name string, args []Expr) (Expr, error)
}

// errSignature makes the caller report "function f(types) does not
// exist" with the argument types as written.
var errSignature = errors.New("expr: no such signature")

var funcs = map[string]*funcDef{}

func register(def *funcDef, names ...string) {
	for _, n := range names {
		if _, dup := funcs[n]; dup {
			panic("expr: function registered twice: " + n)
		}
		funcs[n] = def
	}
}

// FunctionNames lists the scalar functions the Builder knows, sorted.
func FunctionNames() []string {
	names := make([]string, 0, len(funcs))
	for n := range funcs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// NewFunc type-checks a call of the scalar function name (case-insensitive)
// on args, outside a Builder: untyped parameters among args get their types
// but nothing records them.
func NewFunc(name string, args []Expr) (Expr, error) {
	var b Builder
	return b.callFunc(strings.ToLower(name), name, args)
}

func (b *Builder) callFunc(lname, written string, args []Expr) (Expr, error) {
	def := funcs[lname]
	if def == nil {
		if IsAggregate(lname) {
			return nil, aggNotAllowed(lname)
		}
		return nil, funcNotExist(written, exprTypes(args))
	}
	if len(args) < def.minArgs || (def.maxArgs >= 0 && len(args) > def.maxArgs) {
		return nil, funcNotExist(written, exprTypes(args))
	}
	orig := exprTypes(args)
	args = append([]Expr(nil), args...)
	e, err := def.build(b, lname, args)
	if errors.Is(err, errSignature) {
		return nil, funcNotExist(written, orig)
	}
	if err != nil {
		return nil, err
	}
	return fold(e), nil
}

// newFunc returns a deterministic function node.
func newFunc(name string, typ types.Type, args []Expr, strict bool, eval evalFn) *Func {
	return &Func{Name: name, Args: args, Typ: typ, Deterministic: true, impl: &funcImpl{strict: strict, eval: eval}}
}

// Argument checks used by the function definitions. Each resolves an
// untyped argument to the type the function expects and returns
// errSignature when the argument's family does not fit.

// textArg accepts Utf8 and String (bytes); untyped literals become Utf8.
func (b *Builder) textArg(args []Expr, i int) error {
	e, err := b.resolve(args[i], types.TypeUtf8)
	if err != nil {
		return err
	}
	// A function of text given a char(n) value sees it without its
	// padding, as PostgreSQL's char-to-text cast leaves it.
	args[i] = trimBlank(e)
	switch e.Type().Family {
	case types.Utf8, types.String, types.Null:
		return nil
	}
	return errSignature
}

// intArg accepts integers; untyped literals become Int64.
func (b *Builder) intArg(args []Expr, i int) error {
	e, err := b.resolve(args[i], types.TypeInt64)
	if err != nil {
		return err
	}
	args[i] = e
	if f := e.Type().Family; f.IsInteger() || f == types.Null {
		return nil
	}
	return errSignature
}

// numArg accepts numbers; untyped literals become `unknown`.
func (b *Builder) numArg(args []Expr, i int, unknown types.Type) error {
	e, err := b.resolve(args[i], unknown)
	if err != nil {
		return err
	}
	args[i] = e
	if f := e.Type().Family; f.IsNumeric() || f == types.Null {
		return nil
	}
	return errSignature
}

// boolArg accepts Bool; untyped literals parse as Bool.
func (b *Builder) boolArg(args []Expr, i int) error {
	e, err := b.resolve(args[i], types.TypeBool)
	if err != nil {
		return err
	}
	args[i] = e
	if f := e.Type().Family; f == types.Bool || f == types.Null {
		return nil
	}
	return errSignature
}

// commonArgs converts args[from:] to their common type and returns it.
func (b *Builder) commonArgs(context string, args []Expr, from int) (types.Type, error) {
	t, err := CommonType(context, exprTypes(args[from:])...)
	if err != nil {
		return t, err
	}
	for i := from; i < len(args); i++ {
		if args[i], err = b.Coerce(args[i], t); err != nil {
			return t, err
		}
	}
	return t, nil
}
