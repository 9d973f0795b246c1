package expr

import (
	"crypto/md5"
	"encoding/hex"
	"strings"
	"unicode/utf8"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// String functions follow PostgreSQL. They accept Utf8 (counting in
// characters) and String (counting in bytes, as YQL's String is bytes);
// untyped literals are Utf8. Functions returning a string return the type
// of their (first) string argument.

// maxStringLen bounds the strings repeat and lpad build (PostgreSQL's
// limit is 1 GB; a statement that wants more is a mistake).
const maxStringLen = 256 << 20

func init() {
	register(&funcDef{1, 1, buildLength(false)}, "length", "char_length", "character_length", "len")
	register(&funcDef{1, 1, buildLength(true)}, "octet_length")
	register(&funcDef{1, 1, strMap(func(s string, _ bool) string { return strings.ToLower(s) })}, "lower", "lcase")
	register(&funcDef{1, 1, strMap(func(s string, _ bool) string { return strings.ToUpper(s) })}, "upper", "ucase")
	register(&funcDef{1, 1, strMap(reverseChars)}, "reverse")
	register(&funcDef{2, 3, buildSubstr}, "substr", "substring")
	register(&funcDef{1, 2, buildTrim(true, true)}, "trim", "btrim")
	register(&funcDef{1, 2, buildTrim(true, false)}, "ltrim")
	register(&funcDef{1, 2, buildTrim(false, true)}, "rtrim")
	register(&funcDef{3, 3, buildReplace}, "replace")
	register(&funcDef{1, -1, buildConcat}, "concat")
	register(&funcDef{2, -1, buildConcatWS}, "concat_ws")
	register(&funcDef{2, 2, buildStrpos(false)}, "strpos", "instr")
	register(&funcDef{2, 2, buildStrpos(true)}, "position")
	register(&funcDef{2, 2, buildLeftRight(true)}, "left")
	register(&funcDef{2, 2, buildLeftRight(false)}, "right")
	register(&funcDef{2, 2, buildRepeat}, "repeat")
	register(&funcDef{2, 3, buildPad(true)}, "lpad")
	register(&funcDef{2, 3, buildPad(false)}, "rpad")
	register(&funcDef{2, 2, buildStartsWith}, "starts_with")
	register(&funcDef{1, 1, buildASCII}, "ascii")
	register(&funcDef{1, 1, buildChr}, "chr")
	register(&funcDef{1, 1, buildMD5}, "md5")
}

func isBytes(v types.Value) bool { return v.Family() == types.String }

func strValue(bytes bool, s string) types.Value {
	if bytes {
		return types.NewString(s)
	}
	return types.NewUtf8(s)
}

// strType is the result type of a string function whose first string
// argument has type t.
func strType(t types.Type) types.Type {
	if t.Family == types.String {
		return types.TypeString
	}
	return types.TypeUtf8
}

// chars returns s split into characters: code points, or bytes.
func chars(s string, bytes bool) []string {
	if bytes {
		out := make([]string, len(s))
		for i := range len(s) {
			out[i] = s[i : i+1]
		}
		return out
	}
	out := make([]string, 0, len(s))
	for i, w := 0, 0; i < len(s); i += w {
		_, w = utf8.DecodeRuneInString(s[i:])
		out = append(out, s[i:i+w])
	}
	return out
}

func charLen(s string, bytes bool) int64 {
	if bytes {
		return int64(len(s))
	}
	return int64(utf8.RuneCountInString(s))
}

// sliceChars returns characters [from, to) of s (0-based, clamped).
func sliceChars(s string, bytes bool, from, to int64) string {
	n := charLen(s, bytes)
	from = max(from, 0)
	to = min(to, n)
	if to <= from {
		return ""
	}
	if bytes {
		return s[from:to]
	}
	start, end := -1, len(s)
	var ci int64
	for i := range s {
		if ci == from {
			start = i
		}
		if ci == to {
			end = i
			break
		}
		ci++
	}
	return s[start:end]
}

func buildLength(octets bool) func(b *Builder, name string, args []Expr) (Expr, error) {
	return func(b *Builder, name string, args []Expr) (Expr, error) {
		padded := args[0]
		if err := b.textArg(args, 0); err != nil {
			return nil, err
		}
		if octets && padded.Type().Blank {
			// octet_length(bpchar) counts the padding (PostgreSQL's).
			args[0] = padded
		}
		return newFunc(name, types.TypeInt64, args, true, func(_ *Context, a []types.Value) (types.Value, error) {
			return types.NewInt64(charLen(a[0].Str(), octets || isBytes(a[0]))), nil
		}), nil
	}
}

func strMap(f func(s string, bytes bool) string) func(b *Builder, name string, args []Expr) (Expr, error) {
	return func(b *Builder, name string, args []Expr) (Expr, error) {
		if err := b.textArg(args, 0); err != nil {
			return nil, err
		}
		return newFunc(name, strType(args[0].Type()), args, true, func(_ *Context, a []types.Value) (types.Value, error) {
			return strValue(isBytes(a[0]), f(a[0].Str(), isBytes(a[0]))), nil
		}), nil
	}
}

func reverseChars(s string, bytes bool) string {
	cs := chars(s, bytes)
	var b strings.Builder
	b.Grow(len(s))
	for i := len(cs) - 1; i >= 0; i-- {
		b.WriteString(cs[i])
	}
	return b.String()
}

// buildSubstr is PostgreSQL's substring(s, from [, count]): characters
// from position `from` (1-based; positions before 1 count but select
// nothing) for count characters.
func buildSubstr(b *Builder, name string, args []Expr) (Expr, error) {
	if err := b.textArg(args, 0); err != nil {
		return nil, err
	}
	for i := 1; i < len(args); i++ {
		if err := b.intArg(args, i); err != nil {
			return nil, err
		}
	}
	return newFunc(name, strType(args[0].Type()), args, true, func(_ *Context, a []types.Value) (types.Value, error) {
		s, bytes := a[0].Str(), isBytes(a[0])
		from := sm64(a[1]) - 1 // 0-based
		to := int64(1) << 62
		if len(a) == 3 {
			n := sm64(a[2])
			if n < 0 {
				return types.Value{}, sqlerr.New(codeSubstringError, "negative substring length not allowed")
			}
			if from < to-n {
				to = from + n
			}
		}
		return strValue(bytes, sliceChars(s, bytes, from, to)), nil
	}), nil
}

// sm64 reads an integer argument, clamping unsigned values above int64.
func sm64(v types.Value) int64 {
	if v.Family().IsUnsigned() && v.Uint() > 1<<62 {
		return 1 << 62
	}
	return max(min(v.Int(), 1<<62), -(1 << 62))
}

// buildTrim removes the characters of the second argument (default a
// space) from the start and/or end, as PostgreSQL's btrim/ltrim/rtrim.
func buildTrim(left, right bool) func(b *Builder, name string, args []Expr) (Expr, error) {
	return func(b *Builder, name string, args []Expr) (Expr, error) {
		for i := range args {
			if err := b.textArg(args, i); err != nil {
				return nil, err
			}
		}
		return newFunc(name, strType(args[0].Type()), args, true, func(_ *Context, a []types.Value) (types.Value, error) {
			s, bytes := a[0].Str(), isBytes(a[0])
			cut := " "
			if len(a) == 2 {
				cut = a[1].Str()
			}
			if bytes {
				if left {
					for len(s) > 0 && strings.IndexByte(cut, s[0]) >= 0 {
						s = s[1:]
					}
				}
				if right {
					for len(s) > 0 && strings.IndexByte(cut, s[len(s)-1]) >= 0 {
						s = s[:len(s)-1]
					}
				}
				return types.NewString(s), nil
			}
			if left {
				s = strings.TrimLeft(s, cut)
			}
			if right {
				s = strings.TrimRight(s, cut)
			}
			return types.NewUtf8(s), nil
		}), nil
	}
}

func buildReplace(b *Builder, name string, args []Expr) (Expr, error) {
	for i := range args {
		if err := b.textArg(args, i); err != nil {
			return nil, err
		}
	}
	return newFunc(name, strType(args[0].Type()), args, true, func(_ *Context, a []types.Value) (types.Value, error) {
		s, from, to := a[0].Str(), a[1].Str(), a[2].Str()
		if from == "" {
			return strValue(isBytes(a[0]), s), nil
		}
		n := strings.Count(s, from)
		if n > 0 && len(to) > len(from) && int64(len(s))+int64(n)*int64(len(to)-len(from)) > maxStringLen {
			return types.Value{}, tooLong()
		}
		return strValue(isBytes(a[0]), strings.ReplaceAll(s, from, to)), nil
	}), nil
}

func tooLong() error {
	return sqlerr.New(codeProgramLimitExceeded, "requested length too large")
}

// concatType resolves untyped arguments to text and returns Utf8, or
// String when some argument is String.
func (b *Builder) concatArgs(args []Expr) (types.Type, error) {
	t := types.TypeUtf8
	for i := range args {
		e, err := b.resolve(args[i], types.TypeUtf8)
		if err != nil {
			return t, err
		}
		args[i] = e
		if e.Type().Family == types.String {
			t = types.TypeString
		}
	}
	return t, nil
}

// buildConcat is PostgreSQL's concat(): NULL arguments are skipped (use
// || for NULL-propagating concatenation), others rendered as text.
func buildConcat(b *Builder, name string, args []Expr) (Expr, error) {
	t, err := b.concatArgs(args)
	if err != nil {
		return nil, err
	}
	return newFunc(name, t, args, false, func(_ *Context, a []types.Value) (types.Value, error) {
		var sb strings.Builder
		for _, v := range a {
			if !v.IsNull() {
				sb.WriteString(textOf(v))
			}
		}
		return strValue(t.Family == types.String, sb.String()), nil
	}), nil
}

func buildConcatWS(b *Builder, name string, args []Expr) (Expr, error) {
	t, err := b.concatArgs(args)
	if err != nil {
		return nil, err
	}
	return newFunc(name, t, args, false, func(_ *Context, a []types.Value) (types.Value, error) {
		if a[0].IsNull() {
			return types.NullValue, nil
		}
		sep := textOf(a[0])
		var sb strings.Builder
		first := true
		for _, v := range a[1:] {
			if v.IsNull() {
				continue
			}
			if !first {
				sb.WriteString(sep)
			}
			first = false
			sb.WriteString(textOf(v))
		}
		return strValue(t.Family == types.String, sb.String()), nil
	}), nil
}

// buildStrpos returns the 1-based character position of a substring, 0
// when absent. position(sub IN s) reaches here as position(sub, s).
func buildStrpos(needleFirst bool) func(b *Builder, name string, args []Expr) (Expr, error) {
	return func(b *Builder, name string, args []Expr) (Expr, error) {
		for i := range args {
			if err := b.textArg(args, i); err != nil {
				return nil, err
			}
		}
		return newFunc(name, types.TypeInt64, args, true, func(_ *Context, a []types.Value) (types.Value, error) {
			hay, needle := a[0], a[1]
			if needleFirst {
				hay, needle = needle, hay
			}
			i := strings.Index(hay.Str(), needle.Str())
			if i < 0 {
				return types.NewInt64(0), nil
			}
			return types.NewInt64(charLen(hay.Str()[:i], isBytes(hay)) + 1), nil
		}), nil
	}
}

// buildLeftRight: left(s, n) is the first n characters, or all but the
// last -n when n is negative; right mirrors it.
func buildLeftRight(left bool) func(b *Builder, name string, args []Expr) (Expr, error) {
	return func(b *Builder, name string, args []Expr) (Expr, error) {
		if err := b.textArg(args, 0); err != nil {
			return nil, err
		}
		if err := b.intArg(args, 1); err != nil {
			return nil, err
		}
		return newFunc(name, strType(args[0].Type()), args, true, func(_ *Context, a []types.Value) (types.Value, error) {
			s, bytes := a[0].Str(), isBytes(a[0])
			n, l := sm64(a[1]), charLen(s, bytes)
			var from, to int64
			switch {
			case left && n >= 0:
				from, to = 0, n
			case left:
				from, to = 0, l+n
			case n >= 0:
				from, to = l-n, l
			default:
				from, to = -n, l
			}
			return strValue(bytes, sliceChars(s, bytes, from, to)), nil
		}), nil
	}
}

func buildRepeat(b *Builder, name string, args []Expr) (Expr, error) {
	if err := b.textArg(args, 0); err != nil {
		return nil, err
	}
	if err := b.intArg(args, 1); err != nil {
		return nil, err
	}
	return newFunc(name, strType(args[0].Type()), args, true, func(_ *Context, a []types.Value) (types.Value, error) {
		s, n := a[0].Str(), sm64(a[1])
		if n <= 0 || s == "" {
			return strValue(isBytes(a[0]), ""), nil
		}
		if n > maxStringLen/int64(len(s)) {
			return types.Value{}, tooLong()
		}
		return strValue(isBytes(a[0]), strings.Repeat(s, int(n))), nil
	}), nil
}

// buildPad is PostgreSQL's lpad/rpad: fill to n characters, truncating a
// longer string to n.
func buildPad(left bool) func(b *Builder, name string, args []Expr) (Expr, error) {
	return func(b *Builder, name string, args []Expr) (Expr, error) {
		if err := b.textArg(args, 0); err != nil {
			return nil, err
		}
		if err := b.intArg(args, 1); err != nil {
			return nil, err
		}
		if len(args) == 3 {
			if err := b.textArg(args, 2); err != nil {
				return nil, err
			}
		}
		return newFunc(name, strType(args[0].Type()), args, true, func(_ *Context, a []types.Value) (types.Value, error) {
			s, bytes := a[0].Str(), isBytes(a[0])
			n := sm64(a[1])
			fill := " "
			if len(a) == 3 {
				fill = a[2].Str()
			}
			if n > maxStringLen {
				return types.Value{}, tooLong()
			}
			l := charLen(s, bytes)
			if n <= l || fill == "" {
				return strValue(bytes, sliceChars(s, bytes, 0, n)), nil
			}
			fc := chars(fill, bytes)
			var pad strings.Builder
			for i := int64(0); i < n-l; i++ {
				pad.WriteString(fc[i%int64(len(fc))])
			}
			if left {
				return strValue(bytes, pad.String()+s), nil
			}
			return strValue(bytes, s+pad.String()), nil
		}), nil
	}
}

func buildStartsWith(b *Builder, name string, args []Expr) (Expr, error) {
	for i := range args {
		if err := b.textArg(args, i); err != nil {
			return nil, err
		}
	}
	return newFunc(name, types.TypeBool, args, true, func(_ *Context, a []types.Value) (types.Value, error) {
		return types.NewBool(strings.HasPrefix(a[0].Str(), a[1].Str())), nil
	}), nil
}

func buildASCII(b *Builder, name string, args []Expr) (Expr, error) {
	if err := b.textArg(args, 0); err != nil {
		return nil, err
	}
	return newFunc(name, types.TypeInt64, args, true, func(_ *Context, a []types.Value) (types.Value, error) {
		s := a[0].Str()
		if s == "" {
			return types.NewInt64(0), nil
		}
		if isBytes(a[0]) {
			return types.NewInt64(int64(s[0])), nil
		}
		r, _ := utf8.DecodeRuneInString(s)
		return types.NewInt64(int64(r)), nil
	}), nil
}

func buildChr(b *Builder, name string, args []Expr) (Expr, error) {
	if err := b.intArg(args, 0); err != nil {
		return nil, err
	}
	return newFunc(name, types.TypeUtf8, args, true, func(_ *Context, a []types.Value) (types.Value, error) {
		// PostgreSQL's checks and codes (oracle_compat.c chr, UTF8).
		n := sm64(a[0])
		switch {
		case n < 0:
			return types.Value{}, sqlerr.New(codeInvalidParameterValue, "character number must be positive")
		case n == 0:
			return types.Value{}, sqlerr.New(codeProgramLimitExceeded, "null character not permitted")
		case n > utf8.MaxRune:
			return types.Value{}, sqlerr.New(codeProgramLimitExceeded, "requested character too large for encoding: %d", n)
		case !utf8.ValidRune(rune(n)): // a UTF-16 surrogate
			return types.Value{}, sqlerr.New(codeProgramLimitExceeded, "requested character not valid for encoding: %d", n)
		}
		return types.NewUtf8(string(rune(n))), nil
	}), nil
}

func buildMD5(b *Builder, name string, args []Expr) (Expr, error) {
	if err := b.textArg(args, 0); err != nil {
		return nil, err
	}
	return newFunc(name, types.TypeUtf8, args, true, func(_ *Context, a []types.Value) (types.Value, error) {
		sum := md5.Sum([]byte(a[0].Str()))
		return types.NewUtf8(hex.EncodeToString(sum[:])), nil
	}), nil
}
