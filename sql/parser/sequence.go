package parser

import (
	"strconv"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// SequenceStmt is CREATE SEQUENCE, ALTER SEQUENCE or DROP SEQUENCE
// (PostgreSQL's syntax), which TiDB's grammar lacks:
//
//	CREATE SEQUENCE [IF NOT EXISTS] name [options]
//	ALTER SEQUENCE [IF EXISTS] name [options] [RESTART [[WITH] n]]
//	DROP SEQUENCE [IF EXISTS] name [, ...] [CASCADE | RESTRICT]
//
// options: AS type, INCREMENT [BY] n, MINVALUE n | NO MINVALUE, MAXVALUE
// n | NO MAXVALUE, START [WITH] n, CACHE n, [NO] CYCLE, OWNED BY t.c |
// OWNED BY NONE.
type SequenceStmt struct {
	Kind SequenceKind
	// Names are the sequences named, each [schema.]name; one for CREATE
	// and ALTER.
	Names       [][]string
	IfExists    bool
	IfNotExists bool
	Options     SequenceOptions
}

// SequenceKind tells the sequence statements apart.
type SequenceKind uint8

// The sequence statements.
const (
	SequenceCreate SequenceKind = iota + 1
	SequenceAlter
	SequenceDrop
)

// SequenceOptions are the options of CREATE and ALTER SEQUENCE and of an
// identity column's (...) list; nil pointers were not given.
type SequenceOptions struct {
	// Type is the AS type (Int16, Int32 or Int64 are accepted by the
	// binder); nil when not given.
	Type                   *types.Type
	Increment              *int64
	MinValue, MaxValue     *int64
	NoMinValue, NoMaxValue bool
	Start                  *int64
	Cache                  *int64
	Cycle                  *bool
	// Restart is ALTER's RESTART; RestartWith its value (nil: START).
	Restart     bool
	RestartWith *int64
	// OwnedBy is OWNED BY [table.]column as written; OwnedByNone is
	// OWNED BY NONE.
	OwnedBy     []string
	OwnedByNone bool
	// Pos is the 1-based character position of the first option.
	Pos int
}

// sequenceStatement parses the sequence statements; ok is false for
// other statements.
func (s *stmtToks) sequenceStatement() (*SequenceStmt, bool, error) {
	if !s.isWord(1, "sequence") {
		if s.isWord(0, "create") && (s.isWord(1, "temp") || s.isWord(1, "temporary") || s.isWord(1, "unlogged")) && s.isWord(2, "sequence") {
			return nil, true, sqlerr.NotSupported("CREATE TEMPORARY SEQUENCE")
		}
		return nil, false, nil
	}
	st := &SequenceStmt{}
	i := 2
	switch {
	case s.isWord(0, "create"):
		st.Kind = SequenceCreate
		if s.isWord(i, "if") && s.isWord(i+1, "not") && s.isWord(i+2, "exists") {
			st.IfNotExists = true
			i += 3
		}
	case s.isWord(0, "alter"):
		for j := 2; j+1 < s.n(); j++ {
			if s.isWord(j, "owner") && s.isWord(j+1, "to") {
				return nil, false, nil // ALTER SEQUENCE ... OWNER TO: parseAlterOwner
			}
		}
		st.Kind = SequenceAlter
		if s.isWord(i, "if") && s.isWord(i+1, "exists") {
			st.IfExists = true
			i += 2
		}
	case s.isWord(0, "drop"):
		st.Kind = SequenceDrop
		if s.isWord(i, "if") && s.isWord(i+1, "exists") {
			st.IfExists = true
			i += 2
		}
	default:
		return nil, false, nil
	}
	for {
		end, parts, ok := s.nameChain(i)
		if !ok || len(parts) > 2 {
			return nil, true, s.errAtTok(i)
		}
		st.Names = append(st.Names, parts)
		i = end
		if st.Kind != SequenceDrop || !s.isOp(i, ",") {
			break
		}
		i++
	}
	if st.Kind == SequenceDrop {
		if s.isWord(i, "cascade") || s.isWord(i, "restrict") {
			i++
		}
		if i < s.n() {
			return nil, true, s.errAtTok(i)
		}
		return st, true, nil
	}
	next, err := s.sequenceOptions(i, s.n(), &st.Options, st.Kind == SequenceAlter)
	if err != nil {
		return nil, true, err
	}
	if next < s.n() {
		return nil, true, s.errAtTok(next)
	}
	return st, true, nil
}

// sequenceOptions reads sequence options in [i, hi) into o and returns
// where they end; restart allows ALTER's RESTART.
func (s *stmtToks) sequenceOptions(i, hi int, o *SequenceOptions, restart bool) (int, error) {
	o.Pos = s.rp.pos(s.start(i))
	for i < hi {
		var err error
		switch {
		case s.isWord(i, "as"):
			var t types.Type
			t, i, err = s.parseTypeAt(i+1, hi)
			o.Type = &t
		case s.isWord(i, "increment"):
			i++
			if s.isWord(i, "by") {
				i++
			}
			o.Increment, i, err = s.seqNumber(i, hi)
		case s.isWord(i, "minvalue"):
			o.MinValue, i, err = s.seqNumber(i+1, hi)
		case s.isWord(i, "maxvalue"):
			o.MaxValue, i, err = s.seqNumber(i+1, hi)
		case s.isWord(i, "no") && s.isWord(i+1, "minvalue"):
			o.NoMinValue, i = true, i+2
		case s.isWord(i, "no") && s.isWord(i+1, "maxvalue"):
			o.NoMaxValue, i = true, i+2
		case s.isWord(i, "no") && s.isWord(i+1, "cycle"):
			f := false
			o.Cycle, i = &f, i+2
		case s.isWord(i, "cycle"):
			t := true
			o.Cycle, i = &t, i+1
		case s.isWord(i, "start"):
			i++
			if s.isWord(i, "with") {
				i++
			}
			o.Start, i, err = s.seqNumber(i, hi)
		case s.isWord(i, "cache"):
			o.Cache, i, err = s.seqNumber(i+1, hi)
		case restart && s.isWord(i, "restart"):
			o.Restart = true
			i++
			if s.isWord(i, "with") {
				i++
				o.RestartWith, i, err = s.seqNumber(i, hi)
			} else if s.isKind(i, tkNumber) || s.isOp(i, "-") || s.isOp(i, "+") {
				o.RestartWith, i, err = s.seqNumber(i, hi)
			}
		case s.isWord(i, "owned") && s.isWord(i+1, "by"):
			i += 2
			if s.isWord(i, "none") {
				o.OwnedByNone, i = true, i+1
				break
			}
			end, parts, ok := s.nameChain(i)
			if !ok || len(parts) < 2 || len(parts) > 3 {
				return 0, s.errAtTok(i)
			}
			o.OwnedBy, i = parts, end
		default:
			return i, nil
		}
		if err != nil {
			return 0, err
		}
	}
	return i, nil
}

// seqNumber reads a signed integer at i.
func (s *stmtToks) seqNumber(i, hi int) (*int64, int, error) {
	neg := false
	j := i
	if s.isOp(j, "-") || s.isOp(j, "+") {
		neg = s.isOp(j, "-")
		j++
	}
	if j >= hi || !s.isKind(j, tkNumber) {
		return nil, 0, s.errAtTok(j)
	}
	text := s.text(j)
	if neg {
		text = "-" + text
	}
	v, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return nil, 0, errAt(sqlerr.NumericValueOutOfRange, s.start(j), "value %q is out of range for type bigint", text)
	}
	return &v, j + 1, nil
}
