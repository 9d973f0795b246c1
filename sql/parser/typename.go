package parser

import (
	"fmt"
	"strings"

	"github.com/pivotdb/pivotdb/sql/types"
)

// typeContinuation are the words that continue a multiword type name
// ("double precision", "character varying").
var typeContinuation = map[string]bool{"precision": true, "varying": true}

// parseTypeAt reads a type name starting at token i, bounded by hi:
//
//	word [word...] [(n [, n])] [with|without time zone] [[] | [n] | ARRAY [[n]]]...
//
// such as Uint64, varchar(20), double precision, character varying(10),
// timestamp(3) with time zone, pg_catalog.int4, int[], text[][],
// integer ARRAY[3]. The name is checked with types.ParseTypeName; as in
// PostgreSQL, array bounds are accepted and ignored (int[3] is int[]).
// It returns the type and the index after the name.
func (s *stmtToks) parseTypeAt(i, hi int) (types.Type, int, error) {
	if s.isWord(i, "list") && s.isOp(i+1, "<") {
		// YQL's List<T>.
		t, next, err := s.parseElemTypeAt(i+2, hi)
		if err != nil {
			return t, next, err
		}
		if next >= hi || !s.isOp(next, ">") {
			return types.Type{}, i, s.errAtTok(next)
		}
		return types.ArrayOf(t), next + 1, nil
	}
	t, next, err := s.parseElemTypeAt(i, hi)
	if err != nil {
		return t, next, err
	}
	arr := false
	for next < hi {
		switch {
		case s.isWord(next, "array"):
			arr = true
			next++
			if next < hi && s.isOp(next, "[") {
				continue
			}
		case s.isOp(next, "["):
			close := next + 1
			if close < hi && s.isKind(close, tkNumber) {
				close++
			}
			if close >= hi || !s.isOp(close, "]") {
				return types.Type{}, i, s.errAtTok(close)
			}
			arr = true
			next = close + 1
			continue
		}
		break
	}
	if arr {
		t = types.ArrayOf(t)
	}
	return t, next, nil
}

func (s *stmtToks) parseElemTypeAt(i, hi int) (types.Type, int, error) {
	if i < hi && s.isQuotedName(i) {
		// A quoted type name ('s'::"char", as pg_dump writes it): taken
		// as written, without continuation words or arguments.
		name := s.strs[s.toks[i].aux]
		if s.toks[i].kind == tkQuotedIdent {
			name = s.unquoteIdent(i)
		}
		t, err := types.ParseTypeName(name)
		if err != nil {
			return types.Type{}, i, withOffset(err, s.start(i))
		}
		return t, i + 1, nil
	}
	if i >= hi || s.toks[i].kind != tkIdent {
		return types.Type{}, i, s.errAtTok(i)
	}
	words := []string{s.text(i)}
	j := i + 1
	if s.isOp(j, ".") && j+1 < hi && s.isKind(j+1, tkIdent) {
		words[0] += "." + s.text(j+1)
		j += 2
	}
	// pg_catalog.text is text: psql qualifies every type it casts to.
	if w := strings.ToLower(words[0]); strings.HasPrefix(w, "pg_catalog.") {
		words[0] = words[0][len("pg_catalog."):]
	}
	args := ""
	words, j = s.typeWords(words, j, hi)
	if len(words) == 1 && strings.EqualFold(words[0], "interval") {
		// INTERVAL DAY TO SECOND(3): the qualifier, then SECOND's
		// precision below.
		words, j = s.intervalQualAt(words, j, hi)
		if len(words) > 1 && !strings.EqualFold(words[len(words)-1], "second") && j < hi && s.isOp(j, "(") {
			// A precision belongs to SECOND only: INTERVAL DAY(2) is
			// PostgreSQL's syntax error.
			return types.Type{}, i, s.errAtTok(j)
		}
	}
	if j < hi && s.isOp(j, "(") {
		close := int(s.match[j])
		if close >= hi {
			return types.Type{}, i, s.errAtTok(j)
		}
		var nums []string
		wantNum := true
		for k := j + 1; k < close; k++ {
			if wantNum && !s.isKind(k, tkNumber) || !wantNum && !s.isOp(k, ",") {
				return types.Type{}, i, s.errAtTok(k)
			}
			if wantNum {
				nums = append(nums, s.text(k))
			}
			wantNum = !wantNum
		}
		if wantNum {
			return types.Type{}, i, s.errAtTok(close)
		}
		args = "(" + strings.Join(nums, ",") + ")"
		j = close + 1
		words, j = s.typeWords(words, j, hi)
	}
	t, err := types.ParseTypeName(strings.Join(words, " ") + args)
	if err != nil {
		return types.Type{}, i, withOffset(err, s.start(i))
	}
	return t, j, nil
}

// intervalQualAt appends an interval field qualifier at j to words
// (["interval"]): YEAR, DAY TO SECOND ..., as PostgreSQL's grammar takes
// them (types.IntervalQualWords). Other words are left alone.
func (s *stmtToks) intervalQualAt(words []string, j, hi int) ([]string, int) {
	if j >= hi || s.toks[j].kind != tkIdent || !types.IntervalQualWords(strings.ToLower(s.text(j))) {
		return words, j
	}
	if j+2 < hi && s.isWord(j+1, "to") && s.toks[j+2].kind == tkIdent &&
		types.IntervalQualWords(strings.ToLower(s.text(j)+" to "+s.text(j+2))) {
		return append(words, s.text(j), "to", s.text(j+2)), j + 3
	}
	return append(words, s.text(j)), j + 1
}

// typeWords appends the continuation words of a type name at j.
func (s *stmtToks) typeWords(words []string, j, hi int) ([]string, int) {
	for j < hi && s.toks[j].kind == tkIdent {
		w := strings.ToLower(s.text(j))
		switch {
		case typeContinuation[w]:
			words = append(words, s.text(j))
			j++
			continue
		case (w == "with" || w == "without") && j+2 < hi && s.isWord(j+1, "time") && s.isWord(j+2, "zone"):
			words = append(words, s.text(j), s.text(j+1), s.text(j+2))
			j += 3
			continue
		}
		break
	}
	return words, j
}

// markerPrefix starts the text that carries a YQL type through TiDB: the
// COMMENT of a rewritten column type and the type argument of pivot_cast.
const markerPrefix = "pivot:"

// typeText spells t so that types.ParseTypeName reads it back exactly:
// YQL names, with varchar(n) for a bounded Utf8 (which YQL cannot spell).
func typeText(t types.Type) string {
	if t.Family == types.Array {
		return typeText(t.ElemType()) + "[]"
	}
	if t.Family == types.Utf8 && t.Blank {
		if t.Width > 0 {
			return fmt.Sprintf("char(%d)", t.Width)
		}
		return "bpchar"
	}
	if t.Family == types.Utf8 && t.Width > 0 {
		return fmt.Sprintf("varchar(%d)", t.Width)
	}
	return t.String()
}

// yqlLiteralTypes are the YQL type names that form typed literals such as
// Date("2024-01-01") when called with a string.
var yqlLiteralTypes = map[string]bool{
	"bool": true, "int8": true, "int16": true, "int32": true, "int64": true, "uint8": true, "uint16": true,
	"uint32": true, "uint64": true, "float": true, "double": true, "decimal": true, "string": true, "utf8": true,
	"json": true, "date": true, "datetime": true, "timestamp": true, "interval": true,
}

// pgLiteralTypes are the type names that form PostgreSQL's typed literals
// such as DATE '2024-01-01' (a type name followed by a string). The list is
// short on purpose: in MySQL a string after a word can be an alias.
var pgLiteralTypes = map[string]bool{
	"date": true, "time": true, "timetz": true, "timestamp": true, "timestamptz": true, "interval": true,
}

// intervalUnits follow the string of MySQL's INTERVAL '1' DAY, which TiDB
// parses itself.
var intervalUnits = map[string]bool{
	"year": true, "quarter": true, "month": true, "week": true, "day": true, "hour": true, "minute": true,
	"second": true, "microsecond": true, "day_hour": true, "day_minute": true, "day_second": true,
	"hour_minute": true, "hour_second": true, "minute_second": true, "year_month": true,
	"day_microsecond": true, "hour_microsecond": true, "minute_microsecond": true, "second_microsecond": true,
}

// pgIntervalFields are the fields of PostgreSQL's interval qualifiers
// (INTERVAL '1' DAY TO HOUR), which MySQL's INTERVAL '1' DAY shares.
var pgIntervalFields = map[string]bool{"year": true, "month": true, "day": true, "hour": true, "minute": true, "second": true}

// typedLiteral is a typed literal found at some token.
type typedLiteral struct {
	name   string     // the type name as written, with "(p,s)" for Decimal
	t      types.Type // its type
	strTok int        // the token of the string argument
	end    int        // the index after the closing parenthesis
}

// typedLiteralAt recognises Type("string"), Decimal("1.5", p, s) and
// PostgreSQL's DATE 'string' at token i (bounded by hi). ok is false when the tokens have another shape;
// err is set when they have the shape but the type is invalid.
func (s *stmtToks) typedLiteralAt(i, hi int) (lit typedLiteral, ok bool, err error) {
	if s.isKind(i, tkIdent) && i+1 < hi && s.isKind(i+1, tkString) {
		// PostgreSQL's DATE '...', TIMESTAMP '...', INTERVAL '...'.
		w := strings.ToLower(s.text(i))
		if w == "interval" && i+2 < hi && s.isKind(i+2, tkIdent) && pgIntervalFields[strings.ToLower(s.text(i+2))] {
			// PostgreSQL's INTERVAL '1' DAY, '1 2' DAY TO HOUR, '1.5'
			// SECOND(0): the qualifier decides what the text means and
			// which fields it keeps (types.Qual).
			return s.intervalLiteralAt(i, i+2, hi)
		}
		if w == "interval" && i+2 < hi && s.isKind(i+2, tkIdent) && intervalUnits[strings.ToLower(s.text(i+2))] {
			return lit, false, nil
		}
		if !pgLiteralTypes[w] {
			lit, ok := s.genericLiteralAt(i, hi)
			return lit, ok, nil
		}
		t, err := types.ParseTypeName(s.text(i))
		if err != nil {
			return lit, true, withOffset(err, s.start(i))
		}
		return typedLiteral{name: s.text(i), t: t, strTok: i + 1, end: i + 2}, true, nil
	}
	if (s.isWord(i, "interval") || s.isWord(i, "time") || s.isWord(i, "timestamp") || s.isWord(i, "timestamptz")) &&
		s.isOp(i+1, "(") && s.isKind(i+2, tkNumber) &&
		s.isOp(i+3, ")") && i+4 < hi && s.isKind(i+4, tkString) {
		// PostgreSQL's INTERVAL(3) '1.2345', TIME(0) '12:00:00.5' and
		// TIMESTAMP(2) '...'.
		if i+5 < hi && s.isKind(i+5, tkIdent) && pgIntervalFields[strings.ToLower(s.text(i+5))] {
			return lit, true, s.errAtTok(i + 5)
		}
		t, err := types.ParseTypeName(s.text(i) + "(" + s.text(i+2) + ")")
		if err != nil {
			return lit, true, withOffset(err, s.start(i))
		}
		return typedLiteral{name: s.text(i), t: t, strTok: i + 4, end: i + 5}, true, nil
	}
	if s.isKind(i, tkIdent) && !s.isOp(i+1, "(") || s.isKind(i, tkIdent) && !yqlLiteralTypes[strings.ToLower(s.text(i))] {
		// numeric(5,2) '1.5', double precision '2', timestamp(0) with
		// time zone '...', char(3) 'ab'.
		lit, ok := s.genericLiteralAt(i, hi)
		return lit, ok, nil
	}
	if !s.isKind(i, tkIdent) {
		return lit, false, nil
	}
	close := int(s.match[i+1])
	if close >= hi || !s.isKind(i+2, tkString) {
		// timestamp(0) without time zone '...'
		lit, ok := s.genericLiteralAt(i, hi)
		return lit, ok, nil
	}
	name := s.text(i)
	switch {
	case close == i+3:
	case close == i+7 && strings.EqualFold(name, "decimal") && s.isOp(i+3, ",") && s.isKind(i+4, tkNumber) &&
		s.isOp(i+5, ",") && s.isKind(i+6, tkNumber):
		name += "(" + s.text(i+4) + "," + s.text(i+6) + ")"
	default:
		return lit, false, nil
	}
	t, err := types.ParseTypeName(name)
	if err != nil {
		return lit, true, withOffset(err, s.start(i))
	}
	return typedLiteral{name: name, t: t, strTok: i + 2, end: close + 1}, true, nil
}

// genericLiteralAt recognises PostgreSQL's generic typed literal, a
// built-in type name followed by a string: int8 '7', numeric(5,2) '1.5',
// double precision '2', bool 't', uuid '...', varchar(3) 'abc'. The string
// is the type's input, as for '7'::int8. Type names follow
// types.ParseTypeName, so the 8-bit integer is spelled exactly Int8, as in
// casts. Only a '...' (or E'...', $$...$$) string counts: "..." is an
// alias or a string in yql. Names that can only name a user type (enums)
// are not taken, nor arrays: PostgreSQL's grammar has no int[] '{1}', and
// a word that is no type may be followed by a string elsewhere
// (AT TIME ZONE 'UTC', PASSWORD 'x'). ok is false when the tokens
// have another shape; a type name that does not parse is no literal
// either. (char(65) without a string is a syntax error: rewriter.item.)
func (s *stmtToks) genericLiteralAt(i, hi int) (typedLiteral, bool) {
	if !s.isKind(i, tkIdent) || i > 0 && s.isOp(i-1, ".") {
		return typedLiteral{}, false
	}
	if first, err := types.ParseTypeName(s.text(i)); err != nil || first.IsUserTypeRef() {
		return typedLiteral{}, false
	}
	t, next, err := s.parseTypeAt(i, hi)
	if err != nil || t.Family == types.Array || t.IsUserTypeRef() || next >= hi || !s.isKind(next, tkString) ||
		s.src[s.toks[next].start] == '"' {
		return typedLiteral{}, false
	}
	return typedLiteral{name: typeText(t), t: t, strTok: next, end: next + 1}, true
}

// intervalLiteralAt reads INTERVAL 'text' qualifier [(p)] with the
// INTERVAL at i and the qualifier's first word at q.
func (s *stmtToks) intervalLiteralAt(i, q, hi int) (typedLiteral, bool, error) {
	words, j := s.intervalQualAt([]string{"interval"}, q, hi)
	if len(words) == 1 || j < hi && s.isWord(j, "to") {
		// DAY TO DAY, YEAR TO DAY: not a qualifier PostgreSQL knows.
		if len(words) == 1 {
			j = q
		} else if j+1 < hi {
			j++
		}
		return typedLiteral{}, true, s.errAtTok(j)
	}
	args := ""
	if j < hi && s.isOp(j, "(") {
		// SECOND(p): only after SECOND, a plain number.
		close := int(s.match[j])
		if !strings.EqualFold(words[len(words)-1], "second") {
			return typedLiteral{}, true, s.errAtTok(j)
		}
		if close != j+2 || close >= hi || !s.isKind(j+1, tkNumber) {
			return typedLiteral{}, true, s.errAtTok(j + 1)
		}
		args = "(" + s.text(j+1) + ")"
		j = close + 1
	}
	name := strings.Join(words, " ") + args
	t, err := types.ParseTypeName(name)
	if err != nil {
		return typedLiteral{}, true, withOffset(err, s.start(i))
	}
	return typedLiteral{name: name, t: t, strTok: i + 1, end: j}, true, nil
}

// RegCastFunc is the function the rewriter turns casts to PostgreSQL's
// object-identifier types into: x::regclass becomes
// pivot_regcast(x, 'regclass'). The session resolves it against its
// catalog (names to OIDs and back), which the type system cannot.
const RegCastFunc = "pivot_regcast"

// RegNameFunc is x::regclass::text (and the other reg types cast to
// text): the name of the object x names or numbers, as PostgreSQL's output
// function of the type writes it.
const RegNameFunc = "pivot_regname"

// regTypes are the object-identifier types a cast may name.
var regTypes = map[string]bool{
	"oid": true, "regclass": true, "regtype": true, "regnamespace": true, "regproc": true,
	"regprocedure": true, "regrole": true, "regoper": true, "regoperator": true, "regconfig": true,
}

// regTypeAt recognises an object-identifier type name, optionally
// qualified with pg_catalog, at i; it returns the type and the index after
// it.
func (s *stmtToks) regTypeAt(i, hi int) (string, int, bool) {
	if i < hi && s.isWord(i, "pg_catalog") && s.isOp(i+1, ".") && i+2 < hi {
		i += 2
	}
	if i >= hi || s.toks[i].kind != tkIdent {
		return "", i, false
	}
	w := strings.ToLower(s.text(i))
	if !regTypes[w] {
		return "", i, false
	}
	return w, i + 1, true
}

// isQuotedName reports whether token i is a double-quoted name: a quoted
// identifier, or in the yql dialect a "..." string where only a name can
// stand.
func (s *stmtToks) isQuotedName(i int) bool {
	t := s.toks[i]
	return t.kind == tkQuotedIdent || t.kind == tkString && s.src[t.start] == '"'
}
