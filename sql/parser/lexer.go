package parser

import (
	"strings"
	"unicode/utf8"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// tokKind classifies a token of the PostgreSQL/YQL surface syntax.
type tokKind uint8

const (
	tkEOF tokKind = iota
	// tkIdent is a bare word: an identifier or a keyword (the lexer does
	// not tell them apart; the rewriter looks at the text).
	tkIdent
	// tkQuotedIdent is a `backtick` identifier, or in the postgresql
	// dialect a "double-quoted" one; its text (stmtToks.text, which
	// spells the latter with backticks) is passed to TiDB verbatim.
	tkQuotedIdent
	// tkString is any string literal ('...', E'...', N'...', "...",
	// $tag$...$tag$); aux indexes the decoded value in statement.strs.
	tkString
	// tkBitString is X'..' or B'..', passed to TiDB verbatim.
	tkBitString
	tkNumber
	// tkParam is $n; aux is n.
	tkParam
	// tkOp is an operator or punctuation mark.
	tkOp
)

// token is one lexical token. Offsets are byte offsets into the whole
// script; tokens are kept small (16 bytes) because a 10 MB statement has
// millions of them.
type token struct {
	start, end int32
	aux        int32
	kind       tokKind
}

// multiOps are the operators longer than one byte, longest first.
var multiOps = []string{"<=>", "->>", "<=", ">=", "<>", "!=", "==", "||", "&&", "<<", ">>", "::", ":=", "=>", "->", "@@", "@>", "<@"}

// lexer scans the script one token at a time. Comments and whitespace are
// skipped; they only show as gaps between token offsets.
type lexer struct {
	src string
	pos int
	// strs receives decoded string literal values; the statement scanner
	// resets it per statement.
	strs []string
	// pgIdents makes "..." a quoted identifier (the postgresql dialect)
	// instead of a string with C-style escapes (yql).
	pgIdents bool
}

// multiOpStart marks the first bytes of multiOps.
var multiOpStart = func() (m [256]bool) {
	for _, op := range multiOps {
		m[op[0]] = true
	}
	return m
}()

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

func isIdentCont(c byte) bool {
	return isIdentStart(c) || c >= '0' && c <= '9' || c == '$'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// next returns the next token, tkEOF at the end of the script.
func (l *lexer) next() (token, error) {
	if err := l.skipSpace(); err != nil {
		return token{}, err
	}
	src := l.src
	start := l.pos
	if start >= len(src) {
		return token{start: int32(start), end: int32(start), kind: tkEOF}, nil
	}
	c := src[start]
	tok := func(kind tokKind, aux int) token {
		return token{start: int32(start), end: int32(l.pos), aux: int32(aux), kind: kind}
	}
	switch {
	case c == '\'':
		v, err := l.scanQuoted('\'', false, start)
		if err != nil {
			return token{}, err
		}
		return tok(tkString, l.addStr(v)), nil
	case c == '"' && l.pgIdents:
		return l.scanDoubleQuotedIdent(start)
	case c == '"':
		v, err := l.scanQuoted('"', true, start)
		if err != nil {
			return token{}, err
		}
		return tok(tkString, l.addStr(v)), nil
	case c == '`':
		if err := l.scanBacktick(); err != nil {
			return token{}, err
		}
		return tok(tkQuotedIdent, 0), nil
	case c == '$':
		return l.scanDollar()
	case isDigit(c) || c == '.' && start+1 < len(src) && isDigit(src[start+1]):
		l.scanNumber()
		return tok(tkNumber, 0), nil
	case isIdentStart(c):
		if start+1 < len(src) && src[start+1] == '\'' {
			switch c {
			case 'e', 'E':
				l.pos++
				v, err := l.scanQuoted('\'', true, start)
				if err != nil {
					return token{}, err
				}
				return tok(tkString, l.addStr(v)), nil
			case 'n', 'N':
				l.pos++
				v, err := l.scanQuoted('\'', false, start)
				if err != nil {
					return token{}, err
				}
				return tok(tkString, l.addStr(v)), nil
			case 'x', 'X', 'b', 'B':
				l.pos++
				if _, err := l.scanQuoted('\'', false, start); err != nil {
					return token{}, err
				}
				return tok(tkBitString, 0), nil
			}
		}
		l.pos++
		for l.pos < len(src) && isIdentCont(src[l.pos]) {
			l.pos++
		}
		return tok(tkIdent, 0), nil
	}
	if multiOpStart[c] {
		// Only these can begin a longer operator: punctuation such as
		// ( ) , skips the list, which a VALUES list has millions of.
		for _, op := range multiOps {
			if strings.HasPrefix(src[start:], op) {
				l.pos += len(op)
				return tok(tkOp, 0), nil
			}
		}
	}
	l.pos++
	return tok(tkOp, 0), nil
}

func (l *lexer) addStr(v string) int {
	l.strs = append(l.strs, v)
	return len(l.strs) - 1
}

// skipSpace skips whitespace and comments: "--" to the end of the line and
// "/* */", which nests as in PostgreSQL.
func (l *lexer) skipSpace() error {
	src := l.src
	for l.pos < len(src) {
		c := src[l.pos]
		switch {
		case isSpace(c):
			l.pos++
		case c == '-' && l.pos+1 < len(src) && src[l.pos+1] == '-':
			nl := strings.IndexByte(src[l.pos:], '\n')
			if nl < 0 {
				l.pos = len(src)
			} else {
				l.pos += nl + 1
			}
		case c == '/' && l.pos+1 < len(src) && src[l.pos+1] == '*':
			start := l.pos
			depth := 0
			for {
				if l.pos+1 >= len(src) {
					return l.errNear(sqlerr.SyntaxError, "unterminated /* comment", start)
				}
				switch {
				case src[l.pos] == '/' && src[l.pos+1] == '*':
					depth++
					l.pos += 2
				case src[l.pos] == '*' && src[l.pos+1] == '/':
					depth--
					l.pos += 2
				default:
					l.pos++
				}
				if depth == 0 {
					break
				}
			}
		default:
			return nil
		}
	}
	return nil
}

// scanQuoted scans a string literal whose opening quote q is at l.pos and
// returns its decoded value. A doubled quote stands for one quote; with
// cEscapes, backslash starts a C-style escape (\n \t \\ \' \" \xHH \ooo
// \uXXXX \UXXXXXXXX; any other escaped character stands for itself). The
// value may hold any bytes, valid UTF-8 or not. start is the offset of the
// token (its prefix, for E'...'), where errors point.
func (l *lexer) scanQuoted(q byte, cEscapes bool, start int) (string, error) {
	src := l.src
	i := l.pos + 1
	// Fast path: no escapes and no doubled quotes.
	for j := i; j < len(src); j++ {
		c := src[j]
		if c == q {
			if j+1 < len(src) && src[j+1] == q {
				break
			}
			l.pos = j + 1
			return src[i:j], nil
		}
		if c == '\\' && cEscapes {
			break
		}
	}
	var b strings.Builder
	for i < len(src) {
		c := src[i]
		switch {
		case c == q:
			if i+1 < len(src) && src[i+1] == q {
				b.WriteByte(q)
				i += 2
				continue
			}
			l.pos = i + 1
			return b.String(), nil
		case c == '\\' && cEscapes:
			n, err := decodeEscape(src, i, &b)
			if err != nil {
				return "", withOffset(err, i)
			}
			i += n
		default:
			b.WriteByte(c)
			i++
		}
	}
	return "", l.errNear(sqlerr.SyntaxError, "unterminated quoted string", start)
}

// decodeEscape decodes the backslash escape at src[i] into b and returns its
// length in bytes.
func decodeEscape(src string, i int, b *strings.Builder) (int, error) {
	if i+1 >= len(src) {
		b.WriteByte('\\')
		return 1, nil
	}
	c := src[i+1]
	switch c {
	case 'n':
		b.WriteByte('\n')
	case 't':
		b.WriteByte('\t')
	case 'r':
		b.WriteByte('\r')
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'v':
		b.WriteByte('\v')
	case 'a':
		b.WriteByte('\a')
	case 'x':
		n, v := hexDigits(src[i+2:], 2)
		if n == 0 {
			b.WriteByte('x')
			return 2, nil
		}
		b.WriteByte(byte(v))
		return 2 + n, nil
	case 'u', 'U':
		want := 4
		if c == 'U' {
			want = 8
		}
		n, v := hexDigits(src[i+2:], want)
		if n != want {
			return 0, &sqlerr.Error{Code: sqlerr.InvalidEscapeSequence, Message: "invalid Unicode escape",
				Hint: `Unicode escapes must be \uXXXX or \UXXXXXXXX.`}
		}
		length := 2 + n
		if v >= 0xD800 && v <= 0xDBFF {
			// A UTF-16 surrogate pair written as two \u escapes.
			rest := src[i+length:]
			if len(rest) >= 6 && rest[0] == '\\' && rest[1] == 'u' {
				if m, lo := hexDigits(rest[2:], 4); m == 4 && lo >= 0xDC00 && lo <= 0xDFFF {
					v = 0x10000 + (v-0xD800)<<10 + (lo - 0xDC00)
					length += 6
				}
			}
		}
		if v >= 0xD800 && v <= 0xDFFF || v > utf8.MaxRune {
			return 0, &sqlerr.Error{Code: sqlerr.InvalidEscapeSequence, Message: "invalid Unicode escape value"}
		}
		b.WriteRune(rune(v))
		return length, nil
	default:
		if c >= '0' && c <= '7' {
			n, v := 1, int(c-'0')
			for n < 3 && i+1+n < len(src) && src[i+1+n] >= '0' && src[i+1+n] <= '7' {
				v = v*8 + int(src[i+1+n]-'0')
				n++
			}
			b.WriteByte(byte(v))
			return 1 + n, nil
		}
		// \\, \', \" and any other character stand for themselves.
		b.WriteByte(c)
	}
	return 2, nil
}

// hexDigits reads up to max hex digits from s.
func hexDigits(s string, max int) (n int, v int) {
	for n < max && n < len(s) {
		c := s[n]
		var d int
		switch {
		case c >= '0' && c <= '9':
			d = int(c - '0')
		case c >= 'a' && c <= 'f':
			d = int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = int(c-'A') + 10
		default:
			return n, v
		}
		v = v*16 + d
		n++
	}
	return n, v
}

// scanDoubleQuotedIdent scans PostgreSQL's "quoted identifier" ("" is a
// quote, no other escapes). The token is a tkQuotedIdent whose aux indexes
// the name in strs; stmtToks.text spells it as a backtick identifier, so
// the rewriter and TiDB see it as one.
func (l *lexer) scanDoubleQuotedIdent(start int) (token, error) {
	v, err := l.scanQuoted('"', false, start)
	if err != nil {
		return token{}, l.errNear(sqlerr.SyntaxError, "unterminated quoted identifier", start)
	}
	if v == "" {
		return token{}, l.errNear(sqlerr.SyntaxError, "zero-length delimited identifier", start)
	}
	return token{start: int32(start), end: int32(l.pos), aux: int32(l.addStr(v)), kind: tkQuotedIdent}, nil
}

func (l *lexer) scanBacktick() error {
	src := l.src
	start := l.pos
	for i := start + 1; i < len(src); i++ {
		if src[i] == '`' {
			if i+1 < len(src) && src[i+1] == '`' {
				i++
				continue
			}
			l.pos = i + 1
			return nil
		}
	}
	return l.errNear(sqlerr.SyntaxError, "unterminated quoted identifier", start)
}

// scanDollar scans $n (a parameter) or a dollar-quoted string $tag$...$tag$.
func (l *lexer) scanDollar() (token, error) {
	src := l.src
	start := l.pos
	i := start + 1
	if i < len(src) && isDigit(src[i]) {
		n := 0
		for i < len(src) && isDigit(src[i]) {
			if n <= maxParams {
				n = n*10 + int(src[i]-'0')
			}
			i++
		}
		l.pos = i
		if n < 1 || n > maxParams {
			return token{}, errAt(sqlerr.UndefinedParameter, start, "there is no parameter %s", src[start:i])
		}
		return token{start: int32(start), end: int32(i), aux: int32(n), kind: tkParam}, nil
	}
	// A tag is an identifier without '$' (possibly empty) closed by '$'.
	j := i
	for j < len(src) && isIdentCont(src[j]) && src[j] != '$' && !(j == i && isDigit(src[j])) {
		j++
	}
	if j < len(src) && src[j] == '$' {
		tag := src[start : j+1]
		body := j + 1
		end := strings.Index(src[body:], tag)
		if end < 0 {
			return token{}, l.errNear(sqlerr.SyntaxError, "unterminated dollar-quoted string", start)
		}
		l.pos = body + end + len(tag)
		v := l.addStr(src[body : body+end])
		return token{start: int32(start), end: int32(l.pos), aux: int32(v), kind: tkString}, nil
	}
	// A lone '$': an operator token the rewriter rejects.
	l.pos = start + 1
	return token{start: int32(start), end: int32(start + 1), kind: tkOp}, nil
}

// scanNumber scans an integer, decimal or floating-point literal, or a
// 0x/0b/0o integer, which TiDB reads itself.
func (l *lexer) scanNumber() {
	src := l.src
	i := l.pos
	if src[i] == '0' && i+2 < len(src) {
		switch src[i+1] {
		case 'x', 'X', 'b', 'B', 'o', 'O':
			j := i + 2
			for j < len(src) && (isDigit(src[j]) || src[j] >= 'a' && src[j] <= 'f' || src[j] >= 'A' && src[j] <= 'F') {
				j++
			}
			if j > i+2 {
				l.pos = j
				return
			}
		}
	}
	for i < len(src) && isDigit(src[i]) {
		i++
	}
	if i < len(src) && src[i] == '.' && !(i+1 < len(src) && src[i+1] == '.') {
		i++
		for i < len(src) && isDigit(src[i]) {
			i++
		}
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		j := i + 1
		if j < len(src) && (src[j] == '+' || src[j] == '-') {
			j++
		}
		if j < len(src) && isDigit(src[j]) {
			for j < len(src) && isDigit(src[j]) {
				j++
			}
			i = j
		}
	}
	l.pos = i
}

// errNear returns a lexical error about the text from byte offset start to
// the end of the script, as PostgreSQL words unterminated literals.
func (l *lexer) errNear(code, msg string, start int) error {
	return errAt(code, start, "%s at or near %s", msg, quoteNear(l.src[start:]))
}
