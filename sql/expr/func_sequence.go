package expr

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Sequences is what the sequence functions (nextval, currval, setval,
// lastval) reach through Context.Sequences: the session's sequences.
// A sequence is named by its name as text ('s', 'public.s', '"S"') or by
// its OID (an integer, as 's'::regclass gives). Sequence functions are
// not transactional, as in PostgreSQL: a value handed out is never handed
// out again, even when the transaction that took it rolls back.
type Sequences interface {
	Nextval(seq types.Value) (int64, error)
	Currval(seq types.Value) (int64, error)
	Setval(seq types.Value, v int64, isCalled bool) (int64, error)
	Lastval() (int64, error)
}

// The functions are registered under the dialect front's spellings
// (parser.SequenceFuncs: TiDB's grammar has keywords nextval, setval and
// lastval), and named without the prefix.
func init() {
	// seqArg accepts a sequence name (text) or OID (integer).
	seqArg := func(b *Builder, args []Expr, i int) error {
		if err := b.textArg(args, i); err == nil {
			return nil
		}
		return b.intArg(args, i)
	}
	sequences := func(c *Context) (Sequences, error) {
		if c == nil || c.Sequences == nil {
			return nil, sqlerr.NotSupported("sequence functions here")
		}
		return c.Sequences, nil
	}
	volatile := func(f *Func) *Func {
		f.Name = strings.TrimPrefix(f.Name, "pivot_")
		f.Deterministic = false
		return f
	}
	// bySequence is nextval and currval: one sequence argument, the
	// sequence's value out.
	bySequence := func(op func(Sequences, types.Value) (int64, error)) *funcDef {
		return &funcDef{1, 1, func(b *Builder, name string, args []Expr) (Expr, error) {
			if err := seqArg(b, args, 0); err != nil {
				return nil, err
			}
			return volatile(newFunc(name, types.TypeInt64, args, true, func(c *Context, a []types.Value) (types.Value, error) {
				s, err := sequences(c)
				if err != nil {
					return types.Value{}, err
				}
				v, err := op(s, a[0])
				return types.NewInt64(v), err
			})), nil
		}}
	}
	register(bySequence(Sequences.Nextval), "pivot_nextval")
	register(bySequence(Sequences.Currval), "pivot_currval")
	register(&funcDef{2, 3, func(b *Builder, name string, args []Expr) (Expr, error) {
		if err := seqArg(b, args, 0); err != nil {
			return nil, err
		}
		if err := b.intArg(args, 1); err != nil {
			return nil, err
		}
		if len(args) == 3 {
			if err := b.boolArg(args, 2); err != nil {
				return nil, err
			}
		}
		return volatile(newFunc(name, types.TypeInt64, args, true, func(c *Context, a []types.Value) (types.Value, error) {
			s, err := sequences(c)
			if err != nil {
				return types.Value{}, err
			}
			called := len(a) < 3 || a[2].Bool()
			v, err := s.Setval(a[0], a[1].Int(), called)
			return types.NewInt64(v), err
		})), nil
	}}, "pivot_setval")
	register(&funcDef{0, 0, func(b *Builder, name string, args []Expr) (Expr, error) {
		return volatile(newFunc(name, types.TypeInt64, args, false, func(c *Context, a []types.Value) (types.Value, error) {
			s, err := sequences(c)
			if err != nil {
				return types.Value{}, err
			}
			v, err := s.Lastval()
			return types.NewInt64(v), err
		})), nil
	}}, "pivot_lastval")
}
