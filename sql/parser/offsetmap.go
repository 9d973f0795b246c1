package parser

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// The rewritten text handed to TiDB is built piece by piece; every piece
// comes from one token of the original statement (synthetic text such as
// "pivot_cast(" is charged to the token it was made for). The emitter keeps
// a segment list, sorted by output offset, so that a position TiDB reports
// in the rewritten text maps back to a token, and from there to a byte
// offset and a token text in the original script:
//
//	original:  SELECT $1::int FROM        tokens: SELECT=0 $1=1 ::=2 int=3 FROM=4
//	rewritten: SELECT pivot_cast(?, 'Int32') FROM
//	segments:  [0 tok0] [7 tok1] [19 tok2] [30 tok4]
//
// ("pivot_cast(?" comes from $1, ", 'Int32')" from the "::").
//
// Offsets in the rewritten text past its end mean "end of input".

// segment says that output from offset out up to the next segment's offset
// came from statement token tok.
type segment struct {
	out int
	tok int
}

// emitter accumulates the rewritten text and its segments.
type emitter struct {
	buf  []byte
	segs []segment
}

// write appends text for token tok. adjacent says the piece directly
// follows the previous one in the original text (no whitespace or comment
// between them); a space is inserted otherwise, and also wherever TiDB's
// lexer would glue the two pieces into one token.
func (e *emitter) write(text string, tok int, adjacent bool) {
	if text == "" {
		return
	}
	if len(e.buf) > 0 && needSpace(e.buf[len(e.buf)-1], text[0], adjacent) {
		e.buf = append(e.buf, ' ')
	}
	if n := len(e.segs); n == 0 || e.segs[n-1].tok != tok {
		e.segs = append(e.segs, segment{out: len(e.buf), tok: tok})
	}
	e.buf = append(e.buf, text...)
}

func isOpChar(c byte) bool {
	return strings.IndexByte("+-*/%=<>!~^&|:@?#\\", c) >= 0
}

func isQuoteChar(c byte) bool { return c == '\'' || c == '`' || c == '"' }

// needSpace reports whether a space must separate the bytes last and first
// of two consecutive pieces.
func needSpace(last, first byte, adjacent bool) bool {
	switch {
	case !adjacent:
		return true
	case isIdentCont(last) && isIdentCont(first):
		return true
	case isOpChar(last) && isOpChar(first):
		// "- -1" must not become "--1", nor "a / *" a comment opener.
		return true
	case isQuoteChar(last) && isQuoteChar(first):
		// 'a' 'b' must not become 'a''b'.
		return true
	case isIdentCont(last) && first == '\'':
		// Keep x 'ab' from turning into the hex literal x'ab'.
		return true
	}
	return false
}

// tokenAt returns the statement token the output offset off came from, or
// -1 when off is at or past the end of the output.
func (e *emitter) tokenAt(off int) int {
	if off >= len(e.buf) || len(e.segs) == 0 {
		return -1
	}
	k := sort.Search(len(e.segs), func(k int) bool { return e.segs[k].out > off }) - 1
	if k < 0 {
		k = 0
	}
	return e.segs[k].tok
}

var (
	// TiDB's yacc errors read `line 1 column 13 near "<rest of input>"`
	// followed by an optional message and, when the rest was cut at 2048
	// bytes, "(total length N)".
	tidbNearPrefix = regexp.MustCompile(`^line \d+ column \d+ near "`)
	tidbTotalLen   = regexp.MustCompile(`\(total length (\d+)\)$`)
	tidbCodePrefix = regexp.MustCompile(`^\[[a-z:]+\d+\]`)
)

// tidbErrorOffset finds the byte offset in the rewritten text that a TiDB
// syntax error points at, from the quoted rest of input in its message.
// The second result is TiDB's extra message text, if any.
func tidbErrorOffset(text, msg string) (int, string, bool) {
	loc := tidbNearPrefix.FindStringIndex(msg)
	if loc == nil {
		return 0, "", false
	}
	rest := msg[loc[1]:]
	if m := tidbTotalLen.FindStringSubmatch(rest); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil || n > len(text) {
			return 0, "", false
		}
		return len(text) - n, "", true
	}
	// The quoted part is a suffix of text, followed by `"`, the message
	// and a space.
	for i := len(rest) - 1; i >= 0; i-- {
		if rest[i] == '"' && strings.HasSuffix(text, rest[:i]) {
			return len(text) - i, strings.TrimSpace(rest[i+1:]), true
		}
	}
	return 0, "", false
}

// tidbError turns an error from TiDB's parser into a PostgreSQL-style
// error positioned in the original script.
func (r *rewriter) tidbError(err error) error {
	text := string(r.out.buf)
	msg := err.Error()
	if off, extra, ok := tidbErrorOffset(text, msg); ok {
		tok := r.out.tokenAt(off)
		var e *sqlerr.Error
		if tok < 0 {
			e = r.s.errAtTok(r.s.n()).(*sqlerr.Error)
		} else {
			e = r.s.errAtTok(tok).(*sqlerr.Error)
		}
		if extra != "" {
			c := *e
			c.Detail = extra
			e = &c
		}
		return e
	}
	msg = strings.TrimSpace(tidbCodePrefix.ReplaceAllString(msg, ""))
	return errAt(sqlerr.SyntaxError, r.s.start(0), "%s", msg)
}
