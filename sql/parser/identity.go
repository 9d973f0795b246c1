package parser

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/types"
)

// ColumnIdentity marks a column of CREATE TABLE or ALTER TABLE ... ADD
// whose values come from a sequence it owns: a serial type (serial,
// bigserial, smallserial, YDB's Serial, BigSerial, SmallSerial) or
// GENERATED {ALWAYS | BY DEFAULT} AS IDENTITY [(sequence options)]. The
// column reaches TiDB as an ordinary column of the integer type; the
// binder adds the sequence, the DEFAULT and NOT NULL.
type ColumnIdentity struct {
	Column  string
	Kind    IdentityKind
	Options SequenceOptions
	// Pos is the 1-based character position of the type or of GENERATED.
	Pos int
}

// IdentityKind is how a column takes its sequence's values.
type IdentityKind uint8

// The kinds of identity column.
const (
	// IdentitySerial is a serial type: DEFAULT nextval(...), any value may
	// be written.
	IdentitySerial IdentityKind = iota + 1
	// IdentityAlways refuses written values.
	IdentityAlways
	// IdentityByDefault takes a value only when none is written.
	IdentityByDefault
)

// serialType returns the integer type a serial type name stands for.
func serialType(word string) (types.Type, bool) {
	switch strings.ToLower(word) {
	case "serial", "serial4":
		return types.TypeInt32, true
	case "bigserial", "serial8":
		return types.TypeInt64, true
	case "smallserial", "serial2":
		return types.T(types.Int16), true
	}
	return types.Type{}, false
}

// identityClause finds GENERATED {ALWAYS | BY DEFAULT} AS IDENTITY
// [(options)] in the column options [i, hi): it returns the clause's
// bounds [lo, end) and what it says, or lo = -1.
func (s *stmtToks) identityClause(i, hi int) (lo, end int, id ColumnIdentity, err error) {
	for k := i; k < hi; k = s.skip(k) {
		if !s.isWord(k, "generated") {
			continue
		}
		j := k + 1
		kind := IdentityAlways
		switch {
		case s.isWord(j, "always"):
			j++
		case s.isWord(j, "by") && s.isWord(j+1, "default"):
			kind = IdentityByDefault
			j += 2
		default:
			continue
		}
		if !s.isWord(j, "as") || !s.isWord(j+1, "identity") {
			continue // GENERATED ALWAYS AS (expr): a computed column
		}
		j += 2
		id = ColumnIdentity{Kind: kind, Pos: s.rp.pos(s.start(k))}
		if s.isOp(j, "(") && int(s.match[j]) < hi {
			close := int(s.match[j])
			next, err := s.sequenceOptions(j+1, close, &id.Options, false)
			if err != nil {
				return 0, 0, id, err
			}
			if next != close {
				return 0, 0, id, s.errAtTok(next)
			}
			j = close + 1
		}
		return k, j, id, nil
	}
	return -1, 0, id, nil
}
