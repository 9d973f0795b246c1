package parser

import (
	"strconv"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// Table settings: CREATE TABLE ... WITH (k = v, ...) and YQL's ALTER TABLE
// t SET (k = v, ...) / SET k v / RESET (k, ...). Settings are parsed here,
// never by TiDB: their values (Interval("PT1H") ON ts, tuples of keys) are
// not MySQL. This package checks only their shape (see Value); names and
// value ranges are the catalog's business.

// settingList parses "(name = value, ...)" opening at open.
func (s *stmtToks) settingList(open int) ([]Setting, error) {
	close := int(s.match[open])
	var out []Setting
	for _, el := range s.split(open+1, close) {
		st, err := s.setting(el[0], el[1], true)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	if len(out) == 0 {
		return nil, s.errAtTok(close)
	}
	return out, nil
}

// setting parses "name = value" in [a, b); with needEq false the '=' may
// be left out (ALTER TABLE t SET name value).
func (s *stmtToks) setting(a, b int, needEq bool) (Setting, error) {
	if a >= b || !s.isKind(a, tkIdent) {
		return Setting{}, s.errAtTok(a)
	}
	j := a + 1
	if s.isOp(j, "=") && j < b {
		j++
	} else if needEq {
		return Setting{}, s.errAtTok(j)
	}
	v, err := s.valueOn(j, b, true)
	if err != nil {
		return Setting{}, err
	}
	return Setting{Name: s.text(a), Pos: s.rp.pos(s.start(a)), Value: v}, nil
}

// value parses a setting value that must fill [a, b).
func (s *stmtToks) value(a, b int) (Value, error) { return s.valueOn(a, b, false) }

// valueOn is value; with on set, TTL's "ON col [AS unit]" may follow a
// scalar (only a setting's whole value, never a tuple's element).
func (s *stmtToks) valueOn(a, b int, on bool) (Value, error) {
	v, next, err := s.valueAt(a, b, on)
	if err != nil {
		return Value{}, err
	}
	if next != b {
		return Value{}, s.errAtTok(next)
	}
	return v, nil
}

// valueAt parses the value at i (bounded by hi) and returns the index after
// it. With on set, "ON col [AS unit]" may follow any scalar: only an
// Interval literal makes sense there, but parsing the clause after any
// value lets the settings layer say so ("Literal of Interval type is
// expected for TTL") instead of a bare syntax error at ON.
func (s *stmtToks) valueAt(i, hi int, on bool) (Value, int, error) {
	if i >= hi {
		return Value{}, i, s.errAtTok(i)
	}
	v := Value{Pos: s.rp.pos(s.start(i))}
	end := i + 1
	switch t := s.toks[i]; {
	case t.kind == tkIdent:
		lit, ok, err := s.typedLiteralAt(i, hi)
		if err != nil {
			return Value{}, i, err
		}
		if !ok {
			v.Kind, v.Str = ValueIdent, s.text(i)
			break
		}
		v.Kind, v.Type, v.Str = ValueTyped, lit.name, s.strs[s.toks[lit.strTok].aux]
		end = lit.end
	case t.kind == tkNumber:
		v.Kind, v.Str = ValueNumber, s.text(i)
	case (s.isOp(i, "-") || s.isOp(i, "+")) && i+1 < hi && s.isKind(i+1, tkNumber):
		v.Kind, v.Str = ValueNumber, s.text(i+1)
		if s.isOp(i, "-") {
			v.Str = "-" + v.Str
		}
		end = i + 2
	case t.kind == tkString:
		v.Kind, v.Str = ValueString, s.strs[t.aux]
		v.SingleQuoted = s.src[t.start] == '\''
	case s.isOp(i, "("):
		close := int(s.match[i])
		v.Kind = ValueTuple
		for _, el := range s.split(i+1, close) {
			item, err := s.value(el[0], el[1])
			if err != nil {
				return Value{}, i, err
			}
			v.Items = append(v.Items, item)
		}
		end = close + 1
	default:
		return Value{}, i, s.errAtTok(i)
	}
	if on && v.Kind != ValueTuple && s.isWord(end, "on") && end < hi {
		if end+1 >= hi || !s.isKind(end+1, tkIdent) && !s.isKind(end+1, tkQuotedIdent) {
			return Value{}, i, s.errAtTok(end + 1)
		}
		v.On = s.unquoteIdent(end + 1)
		end += 2
		if s.isWord(end, "as") && end < hi {
			if end+1 >= hi || !s.isKind(end+1, tkIdent) {
				return Value{}, i, s.errAtTok(end + 1)
			}
			v.Unit = s.text(end + 1)
			end += 2
		}
	}
	v.Text = s.src[s.start(i):s.toks[end-1].end]
	return v, end, nil
}

// tableName parses a table name (name or schema.name) at i.
func (s *stmtToks) tableName(i int) (*ast.TableName, int, error) {
	end, parts, ok := s.nameChain(i)
	if !ok {
		return nil, i, s.errAtTok(i)
	}
	switch len(parts) {
	case 1:
		return &ast.TableName{Name: ast.NewCIStr(parts[0])}, end, nil
	case 2:
		return &ast.TableName{Schema: ast.NewCIStr(parts[0]), Name: ast.NewCIStr(parts[1])}, end, nil
	}
	return nil, i, s.errAtTok(i + 4)
}

// alterSettings parses YQL's ALTER TABLE name SET ... / RESET ...; ok is
// false for every other statement.
func (s *stmtToks) alterSettings() (as *AlterSettings, ok bool, err error) {
	if !s.isWord(0, "alter") || !s.isWord(1, "table") {
		return nil, false, nil
	}
	end, _, named := s.nameChain(2)
	if !named || !s.isWord(end, "set") && !s.isWord(end, "reset") {
		return nil, false, nil
	}
	tn, _, err := s.tableName(2)
	if err != nil {
		return nil, true, err
	}
	as = &AlterSettings{Table: tn}
	j, n := end+1, s.n()
	whole := s.isOp(j, "(") && int(s.match[j]) == n-1
	if s.isOp(j, "(") && !whole {
		// Only one parenthesised list may follow: ALTER TABLE t SET (...),
		// ADD COLUMN ... is not supported.
		return nil, true, s.errAtTok(int(s.match[j]) + 1)
	}
	if s.isWord(end, "set") {
		if whole {
			as.Set, err = s.settingList(j)
		} else {
			var st Setting
			st, err = s.setting(j, n, false)
			as.Set = []Setting{st}
		}
		if err != nil {
			return nil, true, err
		}
		return as, true, nil
	}
	names := [][2]int{{j, n}}
	if whole {
		names = s.split(j+1, n-1)
		if len(names) == 0 {
			return nil, true, s.errAtTok(n - 1)
		}
	}
	for _, el := range names {
		if el[1]-el[0] != 1 || !s.isKind(el[0], tkIdent) {
			bad := el[0]
			if el[1] > el[0] && s.isKind(el[0], tkIdent) {
				bad = el[0] + 1
			}
			return nil, true, s.errAtTok(bad)
		}
		as.Reset = append(as.Reset, SettingName{Name: s.text(el[0]), Pos: s.rp.pos(s.start(el[0]))})
	}
	return as, true, nil
}

// reshard parses ALTER TABLE name RESHARD AT (...) | RESHARD INTO n [BY
// SIZE | UNIFORM]; ok is false for every other statement.
func (s *stmtToks) reshard() (r *Reshard, ok bool, err error) {
	if !s.isWord(0, "alter") || !s.isWord(1, "table") {
		return nil, false, nil
	}
	end, _, named := s.nameChain(2)
	if !named || !s.isWord(end, "reshard") {
		return nil, false, nil
	}
	tn, _, err := s.tableName(2)
	if err != nil {
		return nil, true, err
	}
	r = &Reshard{Table: tn, Pos: s.rp.pos(s.start(end))}
	j, n := end+1, s.n()
	switch {
	case s.isWord(j, "at"):
		if !s.isOp(j+1, "(") {
			return nil, true, s.errAtTok(j + 1)
		}
		r.Mode = ReshardAtKeys
		if r.Keys, err = s.value(j+1, n); err != nil {
			return nil, true, err
		}
		if r.Keys.Kind != ValueTuple {
			return nil, true, s.errAtTok(j + 1)
		}
	case s.isWord(j, "into"):
		if !s.isKind(j+1, tkNumber) {
			return nil, true, s.errAtTok(j + 1)
		}
		count, perr := strconv.ParseInt(s.text(j+1), 10, 64)
		if perr != nil || count < 1 {
			return nil, true, &sqlerr.Error{Code: sqlerr.InvalidParameterValue,
				Message: "RESHARD INTO needs a positive shard count", Position: s.rp.pos(s.start(j + 1))}
		}
		r.Count = count
		k := j + 2
		switch {
		case k == n:
			r.Mode = ReshardBySize
		case s.isWord(k, "uniform") && k+1 == n:
			r.Mode = ReshardUniform
		case s.isWord(k, "by") && s.isWord(k+1, "size") && k+2 == n:
			r.Mode = ReshardBySize
		default:
			return nil, true, s.errAtTok(k)
		}
	default:
		return nil, true, s.errAtTok(j)
	}
	return r, true, nil
}

// ParseSettingValue parses text as a whole setting value, as it would
// stand after "name =" in CREATE TABLE ... WITH (...) (TTL's ON clause
// allowed). pg_dump writes the table settings PivotDB lists in
// pg_class.reloptions back as string literals (uniform_partitions = '4');
// the settings layer reads such a string's content with this. Positions
// in the result and in errors count from the start of text.
func ParseSettingValue(text string) (Value, error) {
	sc := &scanner{lex: lexer{src: text}, rp: runePos{src: text}}
	s, err := sc.next()
	if err != nil {
		return Value{}, err
	}
	if s == nil || s.n() == 0 {
		return Value{}, sqlerr.New(sqlerr.SyntaxError, "empty setting value")
	}
	if s.semi >= 0 {
		return Value{}, s.errAtTok(s.n())
	}
	return s.valueOn(0, s.n(), true)
}
