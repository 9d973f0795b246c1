package types

import (
	"strings"
	"unicode/utf8"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// PostgreSQL's blank-padded character type, char(n) (bpchar). A value is
// a Utf8 kept padded with spaces to n characters, so that it is stored and
// displayed as PostgreSQL shows it; the type (Type.Blank), not the value,
// says that trailing blanks do not count. The expression layer applies
// that: a comparison with a char side compares the values without their
// trailing blanks unless both sides have the same width (the padded
// strings are then equal exactly when the trimmed ones are), and a char
// value converted to any other string type (text, varchar, a function's
// text argument) loses its trailing blanks (TrimBlanks).

// parseBPChar reads char, character and bpchar with their length: bare
// char and character are char(1), as in PostgreSQL; bare bpchar has no
// length limit.
func parseBPChar(lower, base string, args []int) (Type, error) {
	switch len(args) {
	case 0:
		if lower == "bpchar" {
			return TypeBPChar, nil
		}
		return Type{Family: Utf8, Width: 1, Blank: true}, nil
	case 1:
		if args[0] < 1 {
			return Type{}, sqlerr.New(sqlerr.InvalidParameterValue, "length for type %s must be at least 1", lower)
		}
		if args[0] > 10485760 {
			return Type{}, sqlerr.New(sqlerr.InvalidParameterValue, "length for type %s cannot exceed 10485760", lower)
		}
		return Type{Family: Utf8, Width: args[0], Blank: true}, nil
	}
	return Type{}, sqlerr.New(sqlerr.SyntaxError, "invalid type modifier for %s", base)
}

// fitWidth makes s fit a bounded character type of t: characters past
// t.Width are dropped when they are all spaces (PostgreSQL's rule for
// varchar and char alike: 'abcd    ' fits char(4)), anything else past it
// is 22001; a char(n) value is then padded with spaces to n characters.
func fitWidth(t Type, s string) (string, error) {
	n := utf8.RuneCountInString(s)
	if n > t.Width {
		cut, count := len(s), 0
		for i := range s {
			if count == t.Width {
				cut = i
				break
			}
			count++
		}
		if strings.Trim(s[cut:], " ") != "" {
			name := "character varying"
			if t.Blank {
				name = "character"
			}
			return "", sqlerr.New(sqlerr.StringDataRightTruncation, "value too long for type %s(%d)", name, t.Width)
		}
		return s[:cut], nil
	}
	if t.Blank && n < t.Width {
		s += strings.Repeat(" ", t.Width-n)
	}
	return s, nil
}

// TrimBlanks drops the trailing spaces of a Utf8 value: what a char(n)
// value becomes as text. Other values are returned unchanged.
func TrimBlanks(v Value) Value {
	if v.fam != Utf8 {
		return v
	}
	if t := strings.TrimRight(v.s, " "); len(t) != len(v.s) {
		return NewUtf8(t)
	}
	return v
}

// TruncateChars is s cut to at most n characters: what an explicit cast
// to varchar(n) or char(n) keeps.
func TruncateChars(s string, n int) string {
	count := 0
	for i := range s {
		if count == n {
			return s[:i]
		}
		count++
	}
	return s
}
