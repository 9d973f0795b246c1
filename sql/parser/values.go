package parser

import (
	"math"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// The literal-VALUES fast path. A bulk INSERT ... VALUES (...), (...) of
// literals spends most of its parse in TiDB's grammar building an AST node
// per literal; the binder then walks every node. When every item of every
// row is a literal, the rows are read here straight into Literals
// (Statement.Values) and TiDB parses only the rest of the statement, with
// the list written as VALUES (). The binder builds each Literal into the
// expression it would have built from TiDB's node (expr.BuildLiteral), so
// results and errors, positions included, are the same;
// TestLiteralValuesMatchFullParse checks that against the full parse on
// random statements. Anything else falls back to the full path.

// LiteralKind is the shape of one item of a literal VALUES row.
type LiteralKind uint8

// The items the fast path reads. The value fields hold what TiDB's lexer
// makes of the same text.
const (
	LitNull    LiteralKind = iota + 1
	LitBool                // TRUE or FALSE: Int is 1 or 0
	LitInt                 // an integer that fits int64: Int
	LitUint                // an integer above MaxInt64 that fits uint64: Uint
	LitDecimal             // a number with a point (or an integer beyond uint64): Str is TiDB's decimal text
	LitDouble              // a number with an exponent: Float
	LitString              // a string literal: Str is its decoded value
	LitParam               // $n: Int is n
	LitDefault             // DEFAULT
)

// Literal is one item of a literal VALUES row: a literal, $n or DEFAULT,
// with an optional leading sign and ::type.
type Literal struct {
	Kind  LiteralKind
	Neg   bool // a leading minus (applied after the cast, as -x::T is -(x::T))
	Int   int64
	Uint  uint64
	Float float64
	Str   string
	// Cast is the type name of x::T as the rewriter spells it in
	// pivot_cast(x, 'T'); "" when there is no cast.
	Cast string
	// Off is the byte offset of the literal's token in the script and
	// SignOff that of the minus; LiteralRows.Position turns them into the
	// positions errors report.
	Off, SignOff int32
}

// LiteralRows are the rows of an INSERT's literal VALUES list (see
// Statement.Values).
type LiteralRows struct {
	// Items are the items of all rows in order; row r is
	// Items[Ends[r-1]:Ends[r]] (Ends[-1] = 0). Rows may differ in width:
	// the binder reports that as the full path does.
	Items []Literal
	Ends  []int
	// Position maps Literal.Off or SignOff to the 1-based character
	// position in the script.
	Position func(off int) int
}

// Row returns the items of row r.
func (l *LiteralRows) Row(r int) []Literal {
	lo := 0
	if r > 0 {
		lo = l.Ends[r-1]
	}
	return l.Items[lo:l.Ends[r]]
}

// literalValues finds an INSERT, UPSERT or REPLACE of the form
// verb INTO name [(columns)] VALUES rows, with hi the end of the rows (the
// statement's end or the start of its ON CONFLICT / RETURNING tail), whose
// rows are all literal. It returns the index of the VALUES word and the
// rows; ok is false when the statement has another shape or a row holds
// anything but literals, and the statement then takes the full path.
func (s *stmtToks) literalValues(hi int) (values int, rows *LiteralRows, ok bool) {
	if s.fullPath {
		return 0, nil, false
	}
	i := 0
	switch {
	case s.isWord(0, "insert") && s.isWord(1, "or") && s.isWord(2, "replace"):
		i = 3
	case s.isWord(0, "insert") || s.isWord(0, "upsert") || s.isWord(0, "replace"):
		i = 1
	default:
		return 0, nil, false
	}
	if !s.isWord(i, "into") {
		return 0, nil, false
	}
	i++
	// The table name: name or schema.name, as written (the rewriter
	// spells it).
	if !s.isKind(i, tkIdent) && !s.isKind(i, tkQuotedIdent) {
		return 0, nil, false
	}
	i++
	for s.isOp(i, ".") && (s.isKind(i+1, tkIdent) || s.isKind(i+1, tkQuotedIdent)) {
		i += 2
	}
	if s.isOp(i, "(") {
		i = int(s.match[i]) + 1
	}
	if !s.isWord(i, "values") || i+1 >= hi {
		return 0, nil, false
	}
	values = i
	// A cheap first look: a list of literals has about two tokens per
	// item, so allocate for that.
	rows = &LiteralRows{Items: make([]Literal, 0, (hi-values)/2), Position: s.rp.pos}
	for i = values + 1; ; {
		if !s.isOp(i, "(") {
			return 0, nil, false
		}
		close := int(s.match[i])
		if close >= hi {
			return 0, nil, false
		}
		if close == i+1 {
			// VALUES (): TiDB's empty row; rare, left to it.
			return 0, nil, false
		}
		for j := i + 1; ; {
			next, ok := s.literalItem(j, close, &rows.Items)
			if !ok {
				return 0, nil, false
			}
			if next == close {
				break
			}
			if !s.isOp(next, ",") {
				return 0, nil, false
			}
			j = next + 1
		}
		rows.Ends = append(rows.Ends, len(rows.Items))
		i = close + 1
		if i == hi {
			return values, rows, true
		}
		if !s.isOp(i, ",") {
			return 0, nil, false
		}
		i++
	}
}

// literalItem reads one item at i (before hi) and appends it to items. It
// returns the index after the item; ok is false when the item is not one
// the fast path takes.
func (s *stmtToks) literalItem(i, hi int, items *[]Literal) (next int, ok bool) {
	var l Literal
	if s.isOp(i, "-") || s.isOp(i, "+") {
		// A sign only before a number: -'1' and -$1 are rare.
		if !s.isKind(i+1, tkNumber) {
			return 0, false
		}
		l.Neg = s.isOp(i, "-")
		l.SignOff = s.toks[i].start
		i++
	}
	if i >= hi {
		return 0, false
	}
	t := s.toks[i]
	l.Off = t.start
	switch t.kind {
	case tkNumber:
		if !number(s.src[t.start:t.end], &l) {
			return 0, false
		}
	case tkString:
		l.Kind, l.Str = LitString, s.strs[t.aux]
	case tkParam:
		l.Kind, l.Int = LitParam, int64(t.aux)
	case tkIdent:
		switch w := s.src[t.start:t.end]; {
		case strings.EqualFold(w, "null"):
			l.Kind = LitNull
		case strings.EqualFold(w, "true"):
			l.Kind, l.Int = LitBool, 1
		case strings.EqualFold(w, "false"):
			l.Kind, l.Int = LitBool, 0
		case strings.EqualFold(w, "default"):
			l.Kind = LitDefault
		default:
			return 0, false
		}
	default:
		return 0, false
	}
	i++
	if s.isOp(i, "::") {
		if l.Kind == LitDefault {
			return 0, false
		}
		if _, _, reg := s.regTypeAt(i+1, hi); reg {
			return 0, false
		}
		t, after, err := s.parseTypeAt(i+1, hi)
		if err != nil {
			// The full path reports it.
			return 0, false
		}
		l.Cast = typeText(t)
		i = after
	}
	if i != hi && !s.isOp(i, ",") {
		return 0, false
	}
	*items = append(*items, l)
	return i, true
}

// number reads a decimal number token as TiDB's lexer reads it: digits are
// an integer (int64, else uint64, else a decimal), digits with a point a
// decimal, anything with an exponent a double. It returns false for the
// other spellings (0x.., 0b.., 0o..) and for values TiDB would refuse or
// warn about, which take the full path.
func number(text string, l *Literal) bool {
	point, exp := false, false
	for k := 0; k < len(text); k++ {
		switch c := text[k]; {
		case isDigit(c):
		case c == '.':
			point = true
		case c == 'e' || c == 'E':
			exp = true
		case (c == '+' || c == '-') && exp:
		default:
			return false
		}
	}
	switch {
	case exp:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return false
		}
		l.Kind, l.Float = LitDouble, f
		return true
	case point:
		return decimal(text, l)
	}
	u, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		if err.(*strconv.NumError).Err == strconv.ErrRange {
			return decimal(text, l)
		}
		return false
	}
	if u <= math.MaxInt64 {
		l.Kind, l.Int = LitInt, int64(u)
	} else {
		l.Kind, l.Uint = LitUint, u
	}
	return true
}

// decimal reads a decimal as TiDB's lexer does (ast.NewDecimal); values it
// would cut to its limits with a warning take the full path.
func decimal(text string, l *Literal) bool {
	d, err := ast.NewDecimal(text)
	if err != nil {
		return false
	}
	md, ok := d.(*test_driver.MyDecimal)
	if !ok {
		return false
	}
	l.Kind, l.Str = LitDecimal, md.String()
	return true
}
