package parser

import (
	"strconv"
)

// Cursor statements in PostgreSQL's syntax: DECLARE, FETCH, MOVE, CLOSE.
// TiDB's grammar has none of them. DECLARE's query is handed to TiDB on
// its own (the tokens after FOR), so it may use everything a SELECT may.

// CursorKind says which cursor statement a CursorStmt is.
type CursorKind int

const (
	CursorDeclare CursorKind = iota
	CursorFetch
	CursorMove
	CursorClose
)

// ScrollMode is DECLARE's [NO] SCROLL option.
type ScrollMode int

const (
	// ScrollDefault: neither SCROLL nor NO SCROLL was written. PostgreSQL
	// then allows backward moves only when the plan can run backward;
	// PivotDB's plans cannot, so this behaves as NO SCROLL.
	ScrollDefault ScrollMode = iota
	ScrollYes
	ScrollNo
)

// FetchDir is the direction of FETCH and MOVE.
type FetchDir int

const (
	// FetchForward moves Count rows forward (Count < 0: backward),
	// returning the rows passed; All: to the end.
	FetchForward FetchDir = iota
	// FetchBackward moves Count rows backward; All: to the start.
	FetchBackward
	// FetchAbsolute goes to row Count (1-based; negative counts from the
	// end, 0 is before the first row) and returns it.
	FetchAbsolute
	// FetchRelative goes Count rows from the current one and returns the
	// row there (0: the current row again).
	FetchRelative
)

// CursorStmt is DECLARE name [BINARY] [NO SCROLL | SCROLL] CURSOR
// [WITH HOLD | WITHOUT HOLD] FOR query, FETCH/MOVE [direction] [FROM | IN]
// name, or CLOSE name | ALL. For DECLARE, the query is the Statement's
// AST (with its parameters), the one case where AST and a YQL-only field
// are both set.
type CursorStmt struct {
	Kind CursorKind
	// Name is the cursor's name: a bare word lowercased, a quoted one as
	// written. Empty for CLOSE ALL.
	Name string

	Binary bool
	Scroll ScrollMode
	Hold   bool

	Dir   FetchDir
	Count int64
	All   bool // FETCH ALL / FORWARD ALL / BACKWARD ALL, CLOSE ALL
}

// parseDeclare parses DECLARE; the query after FOR goes to TiDB.
func (s *stmtToks) parseDeclare(stmt Statement) (Statement, error) {
	name, ok := s.objectName(1)
	if !ok {
		return Statement{}, s.errAtTok(1)
	}
	c := &CursorStmt{Kind: CursorDeclare, Name: name}
	i := 2
	for {
		switch {
		case s.isWord(i, "binary"):
			c.Binary = true
			i++
			continue
		case s.isWord(i, "insensitive"):
			// PivotDB's cursors always read the snapshot they were
			// declared in, which is what INSENSITIVE asks for.
			i++
			continue
		case s.isWord(i, "scroll"):
			c.Scroll = ScrollYes
			i++
			continue
		case s.isWord(i, "no") && s.isWord(i+1, "scroll"):
			c.Scroll = ScrollNo
			i += 2
			continue
		}
		break
	}
	if !s.isWord(i, "cursor") {
		return Statement{}, s.errAtTok(i)
	}
	i++
	switch {
	case s.isWord(i, "with") && s.isWord(i+1, "hold"):
		c.Hold = true
		i += 2
	case s.isWord(i, "without") && s.isWord(i+1, "hold"):
		i += 2
	}
	if !s.isWord(i, "for") {
		return Statement{}, s.errAtTok(i)
	}
	i++
	if s.atEnd(i) {
		return Statement{}, s.errAtTok(i)
	}
	if !s.isWord(i, "select") && !s.isWord(i, "values") && !s.isWord(i, "with") && !s.isOp(i, "(") && !s.isWord(i, "table") {
		return Statement{}, s.errAtTok(i)
	}
	q, err := tidbStatement(s.tail(i), Statement{})
	if err != nil {
		return Statement{}, err
	}
	q.Text, q.Offset = stmt.Text, stmt.Offset
	q.Cursor = c
	return q, nil
}

// tail is the statement made of the tokens from i on.
func (s *stmtToks) tail(i int) *stmtToks {
	t := *s
	t.toks = s.toks[i:]
	t.match = make([]int32, len(t.toks))
	for k := range t.match {
		t.match[k] = -1
		if m := s.match[i+k]; m >= 0 {
			t.match[k] = m - int32(i)
		}
	}
	return &t
}

// parseFetch parses FETCH or MOVE (move is true).
func (s *stmtToks) parseFetch(move bool) (*CursorStmt, error) {
	c := &CursorStmt{Kind: CursorFetch, Dir: FetchForward, Count: 1}
	if move {
		c.Kind = CursorMove
	}
	i := 1
	// A name right away (FETCH c, FETCH FROM c) keeps the default NEXT.
	count := func(j int) (int64, int, bool) {
		neg := false
		if s.isOp(j, "-") || s.isOp(j, "+") {
			neg = s.isOp(j, "-")
			j++
		}
		if !s.isKind(j, tkNumber) {
			return 0, j, false
		}
		n, err := strconv.ParseInt(s.text(j), 10, 64)
		if err != nil {
			return 0, j, false
		}
		if neg {
			n = -n
		}
		return n, j + 1, true
	}
	switch {
	case s.isWord(i, "next"):
		i++
	case s.isWord(i, "prior"):
		c.Dir = FetchBackward
		i++
	case s.isWord(i, "first"):
		c.Dir = FetchAbsolute
		i++
	case s.isWord(i, "last"):
		c.Dir, c.Count = FetchAbsolute, -1
		i++
	case s.isWord(i, "absolute"), s.isWord(i, "relative"):
		c.Dir = FetchAbsolute
		if s.isWord(i, "relative") {
			c.Dir = FetchRelative
		}
		n, next, ok := count(i + 1)
		if !ok {
			return nil, s.errAtTok(next)
		}
		c.Count, i = n, next
	case s.isWord(i, "all"):
		c.All = true
		i++
	case s.isWord(i, "forward"), s.isWord(i, "backward"):
		if s.isWord(i, "backward") {
			c.Dir = FetchBackward
		}
		i++
		if s.isWord(i, "all") {
			c.All = true
			i++
		} else if n, next, ok := count(i); ok {
			c.Count, i = n, next
		}
	default:
		if n, next, ok := count(i); ok {
			c.Count, i = n, next
		}
	}
	if s.isWord(i, "from") || s.isWord(i, "in") {
		i++
	}
	name, ok := s.objectName(i)
	if !ok {
		return nil, s.errAtTok(i)
	}
	c.Name = name
	if !s.atEnd(i + 1) {
		return nil, s.errAtTok(i + 1)
	}
	return c, nil
}

// parseClose parses CLOSE name | ALL.
func (s *stmtToks) parseClose() (*CursorStmt, error) {
	c := &CursorStmt{Kind: CursorClose}
	if s.isWord(1, "all") {
		c.All = true
	} else {
		name, ok := s.objectName(1)
		if !ok {
			return nil, s.errAtTok(1)
		}
		c.Name = name
	}
	if !s.atEnd(2) {
		return nil, s.errAtTok(2)
	}
	return c, nil
}
