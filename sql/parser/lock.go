package parser

import "github.com/pivotdb/pivotdb/sql/sqlerr"

// Lock is PostgreSQL's LOCK [TABLE] [ONLY] name [*] [, ...] [IN mode MODE]
// [NOWAIT].
type Lock struct {
	// Tables are the names as written, each [schema.]name.
	Tables [][]string
	// Mode is the lock mode's words in lower case ("access share",
	// "row exclusive", ...); ACCESS EXCLUSIVE when no IN ... MODE is given.
	Mode string
	// NoWait fails at once instead of waiting for a conflicting lock.
	NoWait bool
}

// lockModes are the mode spellings LOCK accepts, as PostgreSQL's grammar
// has them.
var lockModes = [][]string{
	{"access", "share"}, {"row", "share"}, {"row", "exclusive"}, {"share", "update", "exclusive"},
	{"share", "row", "exclusive"}, {"share"}, {"exclusive"}, {"access", "exclusive"},
}

// parseLock parses LOCK; the first token is LOCK.
func (s *stmtToks) parseLock() (*Lock, error) {
	l := &Lock{Mode: "access exclusive"}
	i := 1
	if s.isWord(i, "table") {
		i++
	}
	i, tables, err := s.relationList(i)
	if err != nil {
		return nil, err
	}
	l.Tables = tables
	if s.isWord(i, "in") {
		i++
		found := false
		for _, m := range lockModes {
			match := true
			for k, w := range m {
				if !s.isWord(i+k, w) {
					match = false
					break
				}
			}
			// "share" alone must not take the first word of "share row
			// exclusive" or "share update exclusive": those come first.
			if match && s.isWord(i+len(m), "mode") {
				l.Mode = ""
				for k, w := range m {
					if k > 0 {
						l.Mode += " "
					}
					l.Mode += w
				}
				i += len(m) + 1
				found = true
				break
			}
		}
		if !found {
			return nil, s.errAtTok(i)
		}
	}
	if s.isWord(i, "nowait") {
		l.NoWait = true
		i++
	}
	if i < s.n() {
		return nil, s.errAtTok(i)
	}
	if len(l.Tables) == 0 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "LOCK needs a table")
	}
	return l, nil
}
