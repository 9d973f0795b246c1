package expr

import (
	"strings"
	"unicode"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Like is E [NOT] LIKE Pattern [ESCAPE Escape], or ILIKE when
// CaseInsensitive. % matches any sequence, _ any one character (one byte
// for String operands, one code point for Utf8); Escape (0 for none)
// makes the next pattern character literal. The default escape is the
// backslash, as in PostgreSQL. NULL operands give NULL.
type Like struct {
	E, Pattern      Expr
	Escape          rune
	Negate          bool
	CaseInsensitive bool

	// m is the compiled pattern when Pattern is a constant.
	m *likeMatcher
}

// NewLike returns the node, compiling a constant pattern (a malformed
// constant pattern fails here, 22025).
func NewLike(e, pattern Expr, escape rune, negate, ci bool) (*Like, error) {
	n := &Like{E: e, Pattern: pattern, Escape: escape, Negate: negate, CaseInsensitive: ci}
	if k, ok := pattern.(*Const); ok && !k.Value.IsNull() {
		m, err := compileLike(runesOf(k.Value), escape, ci)
		if err != nil {
			return nil, err
		}
		n.m = m
	}
	return n, nil
}

func (e *Like) Type() types.Type { return types.TypeBool }

func (e *Like) Eval(c *Context, row Row) (types.Value, error) {
	v, err := e.E.Eval(c, row)
	if err != nil || v.IsNull() {
		return types.NullValue, err
	}
	m := e.m
	if m == nil {
		p, err := e.Pattern.Eval(c, row)
		if err != nil || p.IsNull() {
			return types.NullValue, err
		}
		if m, err = compileLike(runesOf(p), e.Escape, e.CaseInsensitive); err != nil {
			return types.Value{}, err
		}
	}
	s := runesOf(v)
	if e.CaseInsensitive {
		for i, r := range s {
			s[i] = unicode.ToLower(r)
		}
	}
	return types.NewBool(m.match(s) != e.Negate), nil
}

func (e *Like) String() string {
	op := " LIKE "
	if e.CaseInsensitive {
		op = " ILIKE "
	}
	if e.Negate {
		op = " NOT" + op
	}
	s := operand(e.E) + op + operand(e.Pattern)
	if e.Escape != '\\' {
		esc := ""
		if e.Escape != 0 {
			esc = string(e.Escape)
		}
		s += " ESCAPE " + quoteString(esc)
	}
	return s
}

// runesOf returns the characters of a string value: code points for text,
// bytes for String (each byte a rune below 256).
func runesOf(v types.Value) []rune {
	s := v.Str()
	if !v.Family().IsStringLike() && v.Family() != types.Unknown {
		s = v.Text()
	}
	if v.Family() == types.String {
		rs := make([]rune, len(s))
		for i := 0; i < len(s); i++ {
			rs[i] = rune(s[i])
		}
		return rs
	}
	return []rune(s)
}

type likeKind uint8

const (
	likeLit likeKind = iota
	likeOne
	likeAny
)

type likeTok struct {
	kind likeKind
	r    rune
}

type likeMatcher struct{ toks []likeTok }

func compileLike(p []rune, escape rune, ci bool) (*likeMatcher, error) {
	m := &likeMatcher{}
	for i := 0; i < len(p); i++ {
		r := p[i]
		switch {
		case escape != 0 && r == escape:
			if i+1 == len(p) {
				return nil, sqlerr.New(sqlerr.InvalidEscapeSequence, "LIKE pattern must not end with escape character")
			}
			i++
			r = p[i]
			if ci {
				r = unicode.ToLower(r)
			}
			m.toks = append(m.toks, likeTok{kind: likeLit, r: r})
		case r == '%':
			// Collapse runs of % (they match the same strings).
			if n := len(m.toks); n == 0 || m.toks[n-1].kind != likeAny {
				m.toks = append(m.toks, likeTok{kind: likeAny})
			}
		case r == '_':
			m.toks = append(m.toks, likeTok{kind: likeOne})
		default:
			if ci {
				r = unicode.ToLower(r)
			}
			m.toks = append(m.toks, likeTok{kind: likeLit, r: r})
		}
	}
	return m, nil
}

// match is the classic wildcard matcher: on a mismatch it resumes after
// the last %, letting it absorb one more character. That is linear for
// patterns with one % and O(len(s)*len(p)) at worst.
func (m *likeMatcher) match(s []rune) bool {
	toks := m.toks
	ti, si := 0, 0
	star, starS := -1, 0
	for si < len(s) {
		if ti < len(toks) {
			t := toks[ti]
			if t.kind == likeOne || (t.kind == likeLit && t.r == s[si]) {
				ti++
				si++
				continue
			}
			if t.kind == likeAny {
				star, starS = ti, si
				ti++
				continue
			}
		}
		if star < 0 {
			return false
		}
		ti = star + 1
		starS++
		si = starS
	}
	for ti < len(toks) && toks[ti].kind == likeAny {
		ti++
	}
	return ti == len(toks)
}

// LikePrefix returns the literal prefix every string matching pattern
// starts with, and whether the pattern is that prefix followed by a single
// % (so that the match is exactly "starts with prefix"). The planner turns
// k LIKE 'abc%' into a key range with it.
func LikePrefix(pattern string, escape rune) (prefix string, onlyPrefix bool) {
	var b strings.Builder
	rs := []rune(pattern)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case escape != 0 && r == escape:
			if i+1 == len(rs) {
				return b.String(), false
			}
			i++
			b.WriteRune(rs[i])
		case r == '%':
			rest := rs[i:]
			for len(rest) > 0 && rest[0] == '%' {
				rest = rest[1:]
			}
			return b.String(), len(rest) == 0
		case r == '_':
			return b.String(), false
		default:
			b.WriteRune(r)
		}
	}
	return b.String(), false
}
