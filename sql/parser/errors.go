package parser

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// Errors inside the package carry their location as a byte offset into the
// script, stored in sqlerr.Error.Position as -(offset+1) so that it cannot be
// mistaken for a finished 1-based character position. Parse converts every
// such position into characters before returning (finishError). Keeping
// bytes until the end means no error path has to count runes.

// errAt returns an error with the given code positioned at byte offset off.
func errAt(code string, off int, format string, args ...any) *sqlerr.Error {
	return &sqlerr.Error{Code: code, Message: fmt.Sprintf(format, args...), Position: -(off + 1)}
}

// withOffset positions err at byte offset off unless it already has a
// position. Errors without a SQLSTATE become internal errors.
func withOffset(err error, off int) error {
	var e *sqlerr.Error
	if !errors.As(err, &e) {
		return &sqlerr.Error{Code: sqlerr.InternalError, Message: err.Error(), Position: -(off + 1)}
	}
	if e.Position != 0 {
		return e
	}
	c := *e
	c.Position = -(off + 1)
	return &c
}

// maxNearLen bounds the token text quoted in an error message; PostgreSQL
// quotes the whole token, which for a 10 MB string is not useful.
const maxNearLen = 512

// quoteNear quotes token text for "at or near" messages.
func quoteNear(s string) string {
	if len(s) > maxNearLen {
		cut := maxNearLen
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return `"` + s + `"`
}

// syntaxErrorNear is PostgreSQL's generic parse error for a token.
func syntaxErrorNear(text string, off int) *sqlerr.Error {
	return errAt(sqlerr.SyntaxError, off, "syntax error at or near %s", quoteNear(text))
}

// syntaxErrorAtEnd is PostgreSQL's parse error when the input stops early.
func syntaxErrorAtEnd(off int) *sqlerr.Error {
	return errAt(sqlerr.SyntaxError, off, "syntax error at end of input")
}

// finishError converts a byte-offset position into PostgreSQL's 1-based
// character position in the script, and makes sure every error carries a
// SQLSTATE.
func finishError(script string, err error) error {
	e := sqlerr.As(err)
	if e.Position >= 0 {
		return e
	}
	off := -e.Position - 1
	if off > len(script) {
		off = len(script)
	}
	c := *e
	c.Position = utf8.RuneCountInString(script[:off]) + 1
	return &c
}

// runePos converts byte offsets into 1-based character positions. Offsets
// are usually asked for in ascending order, so it counts forward from the
// previous answer and the total work stays linear in the script.
type runePos struct {
	src        string
	byteOff    int
	runesSoFar int
}

func (p *runePos) pos(off int) int {
	if off < p.byteOff {
		p.byteOff, p.runesSoFar = 0, 0
	}
	if off > len(p.src) {
		off = len(p.src)
	}
	p.runesSoFar += utf8.RuneCountInString(p.src[p.byteOff:off])
	p.byteOff = off
	return p.runesSoFar + 1
}
