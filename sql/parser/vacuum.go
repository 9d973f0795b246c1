package parser

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// Vacuum is PostgreSQL's VACUUM [FULL] [FREEZE] [VERBOSE] [ANALYZE]
// [table [(columns)] [, ...]], its parenthesised form VACUUM (option
// [value], ...) [tables], and ANALYZE [VERBOSE] [table [(columns)] [,
// ...]] (Analyze set, Vacuum not).
type Vacuum struct {
	// Vacuum compacts the tables; Analyze refreshes their statistics.
	Vacuum, Analyze bool
	Full, Freeze    bool
	Verbose         bool
	// Tables are the names as written, each [schema.]name; none: every
	// table of the database.
	Tables [][]string
}

// parseVacuum parses VACUUM or ANALYZE (ANALYSE); the first token is the
// command.
func (s *stmtToks) parseVacuum() (*Vacuum, error) {
	v := &Vacuum{Analyze: !s.isWord(0, "vacuum")}
	v.Vacuum = !v.Analyze
	i := 1
	if s.isOp(i, "(") {
		close := int(s.match[i])
		for _, el := range s.split(i+1, close) {
			if el[0] >= el[1] || !s.isKind(el[0], tkIdent) {
				return nil, s.errAtTok(el[0])
			}
			name := strings.ToLower(s.text(el[0]))
			on := true
			if el[1]-el[0] == 2 {
				switch w := strings.ToLower(s.text(el[0] + 1)); w {
				case "true", "on", "1", "yes":
				case "false", "off", "0", "no":
					on = false
				default:
					if name != "index_cleanup" && name != "parallel" {
						return nil, errAt(sqlerr.SyntaxError, s.start(el[0]+1), "%s requires a Boolean value", name)
					}
				}
			} else if el[1]-el[0] > 2 {
				return nil, s.errAtTok(el[0] + 2)
			}
			switch {
			case name == "verbose":
				v.Verbose = on
			case name == "analyze" || name == "analyse":
				v.Analyze = on
			case name == "full" && v.Vacuum:
				v.Full = on
			case name == "freeze" && v.Vacuum:
				v.Freeze = on
			case name == "skip_locked":
				// Nothing is locked: there is nothing to skip.
			default:
				return nil, errAt(sqlerr.FeatureNotSupported, s.start(el[0]), "%s option %s is not supported yet",
					strings.ToUpper(s.text(0)), strings.ToUpper(name))
			}
		}
		i = close + 1
	} else {
	words:
		for ; ; i++ {
			switch {
			case s.isWord(i, "full") && v.Vacuum:
				v.Full = true
			case s.isWord(i, "freeze") && v.Vacuum:
				v.Freeze = true
			case s.isWord(i, "verbose"):
				v.Verbose = true
			case (s.isWord(i, "analyze") || s.isWord(i, "analyse")) && v.Vacuum:
				v.Analyze = true
			default:
				break words
			}
		}
	}
	for i < s.n() {
		end, parts, ok := s.nameChain(i)
		if !ok || len(parts) > 2 {
			return nil, s.errAtTok(i)
		}
		v.Tables = append(v.Tables, parts)
		i = end
		if s.isOp(i, "(") {
			// A column list: the statistics PivotDB keeps are per shard,
			// not per column, so the whole table is analyzed.
			i = int(s.match[i]) + 1
		}
		if !s.isOp(i, ",") {
			break
		}
		i++
	}
	if i < s.n() {
		return nil, s.errAtTok(i)
	}
	return v, nil
}
