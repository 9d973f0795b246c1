package memory

import "strings"

// Estimates of the heap that steps hold per input byte or item, measured
// on the server (go test heap profiles of Session.Prepare and Execute):
//
//   - preparing a statement of n bytes allocates up to about 8n before
//     the garbage collector can take anything back (the lexer's tokens,
//     the rewritten text for TiDB's parser, its AST, the bound plan), and
//     a prepared statement holding a 60 MB string literal keeps about 4n;
//   - each item of a list (an IN list, VALUES rows, select lists: counted
//     by their commas) costs about 560 bytes between TiDB's ValueExpr, the
//     expression node and the plan: a 1,000,000-item IN list (6.9 MB of
//     text) held 559 MB once prepared.
const (
	ParseBytesPerByte = 8
	ParseBytesPerItem = 600
	// ConstBytesPerByte is what a long constant costs once built: the
	// literal in the AST and in the expression node.
	ConstBytesPerByte = 2
	// InItemBytes is an IN-list item in the built expression and plan.
	InItemBytes = 160
)

// ParseEstimate is the memory to reserve before parsing and binding the
// statement text: proportional to its length, plus a per-item cost for
// every comma (list items make far more heap than their text).
func ParseEstimate(text string) int64 {
	return ParseBytesPerByte*int64(len(text)) + ParseBytesPerItem*int64(strings.Count(text, ","))
}
