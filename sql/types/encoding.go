package types

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// CheckText reports whether s may be a text (Utf8) value: valid UTF-8
// without NUL characters. PostgreSQL's server encoding is UTF8 and its text
// values are C strings, so it refuses both with 22021 and names the
// offending bytes ("invalid byte sequence for encoding "UTF8": 0x00");
// PivotDB refuses them wherever bytes become text — string literals and
// parameters resolved as text, binary text parameters, casts from bytes —
// so that a stored Utf8 value always reads back through any PostgreSQL
// client. Bytes (String) may hold anything.
func CheckText(s string) error {
	for i := 0; i < len(s); {
		c := s[i]
		if c == 0 {
			return invalidEncoding(s[i : i+1])
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			return invalidEncoding(s[i:min(len(s), i+utf8SeqLen(c))])
		}
		i += n
	}
	return nil
}

// utf8SeqLen is the length a sequence starting with lead byte c claims,
// which is how many bytes PostgreSQL's report_invalid_encoding shows.
func utf8SeqLen(c byte) int {
	switch {
	case c&0xe0 == 0xc0:
		return 2
	case c&0xf0 == 0xe0:
		return 3
	case c&0xf8 == 0xf0:
		return 4
	}
	return 1
}

func invalidEncoding(bad string) error {
	hexes := make([]string, len(bad))
	for i := 0; i < len(bad); i++ {
		hexes[i] = fmt.Sprintf("0x%02x", bad[i])
	}
	return sqlerr.New(sqlerr.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\": %s", strings.Join(hexes, " "))
}
