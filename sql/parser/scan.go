package parser

import (
	"math"
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// Limits that keep the work per statement bounded. Both give 54001
// (statement_too_complex) before TiDB sees the text, so that no input can
// overflow a goroutine stack in TiDB's recursive AST passes or in later
// passes over the AST.
const (
	// maxNesting is the deepest parenthesis nesting accepted.
	maxNesting = 1000
	// maxExprDepth bounds an estimate of the AST depth: the sum, along the
	// deepest path of parentheses, of the operators (and operator-like
	// keywords: AND, OR, NOT, CASE, JOIN, ...) in each comma-separated
	// element. TiDB builds a chain of n binary operators as a tree of
	// depth n; 100k is far beyond hand-written or ORM-generated SQL.
	maxExprDepth = 100000
	// maxParams is the largest $n; the wire protocol counts parameters in
	// an int16.
	maxParams = 65535
)

// stmtToks holds the tokens of one statement of the script.
type stmtToks struct {
	src  string // the whole script
	toks []token
	strs []string // decoded string literals, indexed by token.aux
	// match[i] is, for a '(' token, the index of its ')'.
	match []int32
	// semi is the byte offset of the ';' that ends the statement; -1 at
	// the end of the script.
	semi int
	// rp converts offsets to character positions; shared by the script's
	// statements.
	rp *runePos
	// fullPath turns the literal-VALUES fast path off (ParseFullPath).
	fullPath bool
}

func (s *stmtToks) n() int { return len(s.toks) }

// text is the source text of token i; a "double-quoted" identifier (the
// postgresql dialect) is spelled as the equivalent backtick identifier.
func (s *stmtToks) text(i int) string {
	t := s.toks[i]
	if t.kind == tkQuotedIdent && s.src[t.start] == '"' {
		return backquote(strings.ReplaceAll(s.strs[t.aux], "`", "``"))
	}
	return s.src[t.start:t.end]
}

// start is the byte offset of token i in the script; for i past the last
// token it is where the statement's input ends.
func (s *stmtToks) start(i int) int {
	if i < len(s.toks) {
		return int(s.toks[i].start)
	}
	return s.endOff()
}

// endOff is the offset "end of input" refers to: the terminating ';' or the
// end of the script.
func (s *stmtToks) endOff() int {
	if s.semi >= 0 {
		return s.semi
	}
	return len(s.src)
}

func (s *stmtToks) isWord(i int, w string) bool {
	return i >= 0 && i < len(s.toks) && s.toks[i].kind == tkIdent && strings.EqualFold(s.text(i), w)
}

func (s *stmtToks) isOp(i int, op string) bool {
	return i >= 0 && i < len(s.toks) && s.toks[i].kind == tkOp && s.text(i) == op
}

func (s *stmtToks) isKind(i int, k tokKind) bool {
	return i >= 0 && i < len(s.toks) && s.toks[i].kind == k
}

// skip returns the index after the item at i: a whole parenthesised group
// or one token.
func (s *stmtToks) skip(i int) int {
	if s.isOp(i, "(") {
		return int(s.match[i]) + 1
	}
	return i + 1
}

// split returns the comma-separated elements of [lo, hi) at its own
// nesting level, as [start, end) pairs. An empty range has no elements.
func (s *stmtToks) split(lo, hi int) [][2]int {
	if lo >= hi {
		return nil
	}
	var out [][2]int
	a := lo
	for i := lo; i < hi; i = s.skip(i) {
		if s.isOp(i, ",") {
			out = append(out, [2]int{a, i})
			a = i + 1
		}
	}
	return append(out, [2]int{a, hi})
}

// errAtTok is a syntax error at token i, or at the end of the statement's
// input when i is past its last token.
func (s *stmtToks) errAtTok(i int) error {
	if i >= len(s.toks) {
		if s.semi >= 0 {
			return syntaxErrorNear(";", s.semi)
		}
		return syntaxErrorAtEnd(len(s.src))
	}
	return syntaxErrorNear(s.text(i), s.start(i))
}

// unquoteIdent returns the name an identifier token stands for: a bare word
// as written, a backtick identifier without its quotes.
func (s *stmtToks) unquoteIdent(i int) string {
	t := s.text(i)
	if s.toks[i].kind == tkQuotedIdent {
		return strings.ReplaceAll(t[1:len(t)-1], "``", "`")
	}
	return t
}

// scanner splits a script into statements.
type scanner struct {
	lex lexer
	rp  runePos
	// fullPath turns the literal-VALUES fast path off (ParseFullPath).
	fullPath bool
}

// frame tracks one open parenthesis while scanning, for the complexity
// estimate.
type frame struct {
	open     int // token index of '('
	ops      int // operators in the current element
	maxChild int // deepest estimate among groups in the current element
	best     int // deepest estimate among finished elements
}

// next returns the tokens of the next statement (possibly empty, for ";;"
// or comment-only input), or nil at the end of the script.
func (sc *scanner) next() (*stmtToks, error) {
	if sc.lex.pos >= len(sc.lex.src) {
		return nil, nil
	}
	sc.lex.strs = nil
	st := &stmtToks{src: sc.lex.src, semi: -1, rp: &sc.rp, fullPath: sc.fullPath}
	stack := []frame{{open: -1}}
	// pathOps is the sum of ops over the open frames: a lower bound of the
	// final estimate, so exceeding it can fail early, before a huge
	// statement is fully tokenised.
	pathOps := 0
	tooComplex := func(off int) error {
		return errAt(sqlerr.StatementTooComplex, off,
			"statement too complex: expression nesting exceeds %d", maxExprDepth)
	}
	for {
		t, err := sc.lex.next()
		if err != nil {
			return nil, err
		}
		if t.kind == tkEOF {
			if len(stack) > 1 {
				return nil, syntaxErrorAtEnd(len(st.src))
			}
			break
		}
		idx := len(st.toks)
		top := &stack[len(stack)-1]
		if t.kind == tkOp {
			switch op := st.src[t.start:t.end]; op {
			case ";":
				if len(stack) > 1 {
					return nil, syntaxErrorNear(";", int(t.start))
				}
				st.semi = int(t.start)
				goto done
			case "(":
				if len(stack) > maxNesting {
					return nil, errAt(sqlerr.StatementTooComplex, int(t.start),
						"statement too complex: parentheses nested deeper than %d", maxNesting)
				}
				stack = append(stack, frame{open: idx})
			case ")":
				if len(stack) == 1 {
					return nil, syntaxErrorNear(")", int(t.start))
				}
				d := max(top.best, top.ops+top.maxChild) + 1
				pathOps -= top.ops
				open := top.open
				stack = stack[:len(stack)-1]
				parent := &stack[len(stack)-1]
				parent.maxChild = max(parent.maxChild, d)
				for len(st.match) <= idx {
					st.match = append(st.match, -1)
				}
				st.match[open] = int32(idx)
			case ",":
				top.best = max(top.best, top.ops+top.maxChild)
				pathOps -= top.ops
				top.ops, top.maxChild = 0, 0
			case ".", "[", "]", "{", "}":
			case "?", "#", "$":
				// '?' would become a TiDB parameter marker and '#' a MySQL
				// comment; neither means anything in this dialect.
				return nil, syntaxErrorNear(op, int(t.start))
			default:
				top.ops++
				pathOps++
			}
		} else if t.kind == tkIdent && isOpKeyword(st.src[t.start:t.end]) {
			top.ops++
			pathOps++
		}
		if pathOps > maxExprDepth {
			return nil, tooComplex(int(t.start))
		}
		if len(st.toks) >= math.MaxInt32 {
			return nil, errAt(sqlerr.ProgramLimitExceeded, int(t.start), "statement too long")
		}
		st.toks = append(st.toks, t)
	}
done:
	top := stack[0]
	if d := max(top.best, top.ops+top.maxChild); d > maxExprDepth {
		return nil, tooComplex(st.start(0))
	}
	for len(st.match) < len(st.toks) {
		st.match = append(st.match, -1)
	}
	st.strs = sc.lex.strs
	return st, nil
}

// isOpKeyword reports whether a word is an operator-like keyword that
// deepens TiDB's AST the way a binary or prefix operator does.
func isOpKeyword(w string) bool {
	switch len(w) {
	case 2:
		return strings.EqualFold(w, "or") || strings.EqualFold(w, "is") || strings.EqualFold(w, "in")
	case 3:
		return strings.EqualFold(w, "and") || strings.EqualFold(w, "not") || strings.EqualFold(w, "xor") ||
			strings.EqualFold(w, "div") || strings.EqualFold(w, "mod")
	case 4:
		return strings.EqualFold(w, "like") || strings.EqualFold(w, "case") || strings.EqualFold(w, "join")
	case 5:
		return strings.EqualFold(w, "ilike") || strings.EqualFold(w, "rlike") || strings.EqualFold(w, "union")
	case 6:
		return strings.EqualFold(w, "regexp") || strings.EqualFold(w, "except") || strings.EqualFold(w, "escape") ||
			strings.EqualFold(w, "binary")
	case 7:
		return strings.EqualFold(w, "between") || strings.EqualFold(w, "collate")
	case 8:
		return strings.EqualFold(w, "interval")
	case 9:
		return strings.EqualFold(w, "intersect")
	}
	return false
}
