package parser

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// insertOr rewrites SQLite's INSERT OR REPLACE INTO, which is REPLACE INTO
// (overwrite the whole row, design.md §3.3). The other conflict actions
// (OR IGNORE, OR ABORT, OR FAIL, OR ROLLBACK) fail with 0A000. ok is false
// for other statements.
func (r *rewriter) insertOr() (ok bool, err error) {
	s := r.s
	if !s.isWord(0, "insert") || !s.isWord(1, "or") || !s.isKind(2, tkIdent) {
		return false, nil
	}
	action := strings.ToUpper(s.text(2))
	if action != "REPLACE" {
		return true, sqlerr.NotSupported("INSERT OR %s", action)
	}
	r.emit(0, "REPLACE")
	return true, r.seq(3, r.hi)
}
