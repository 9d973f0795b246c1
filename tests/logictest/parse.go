package logictest

import (
	"fmt"
	"strconv"
	"strings"
)

// RecordKind says what a record does.
type RecordKind int

const (
	// KindStatement is "statement ok" or "statement error".
	KindStatement RecordKind = iota
	// KindQuery is "query TYPES [SORTMODE [LABEL]]".
	KindQuery
	// KindHashThreshold is "hash-threshold N".
	KindHashThreshold
	// KindHalt is "halt".
	KindHalt
	// KindInvalid is a record that could not be understood; Record.Err says why.
	KindInvalid
)

func (k RecordKind) String() string {
	switch k {
	case KindStatement:
		return "statement"
	case KindQuery:
		return "query"
	case KindHashThreshold:
		return "hash-threshold"
	case KindHalt:
		return "halt"
	default:
		return "invalid"
	}
}

// Sort modes of a query record.
const (
	NoSort    = "nosort"
	RowSort   = "rowsort"
	ValueSort = "valuesort"
)

// Guard is one "skipif ENGINE" or "onlyif ENGINE" line.
type Guard struct {
	SkipIf bool   // true for skipif, false for onlyif
	Engine string // as written
}

// Record is one parsed record of a sqllogictest file.
type Record struct {
	// Line is the 1-based line number of the record's command line
	// ("statement ...", "query ...", "halt", ...), after any guard lines.
	// This is the line the reference runner reports and the line that
	// known-failure entries name.
	Line int
	// FirstLine is the line of the record's first line (its first guard, if any).
	FirstLine int
	Kind      RecordKind
	Guards    []Guard

	// Statement.
	ExpectError bool
	// ErrorCode is the SQLSTATE a "statement error CODE" record expects
	// (a PivotDB extension; empty: any error passes, as in the reference
	// runner).
	ErrorCode string

	// Statement and query.
	SQL string

	// Query.
	Types    string // one of I, R, T per column
	SortMode string // NoSort, RowSort or ValueSort
	Label    string
	// Expected holds the lines after "----" (comments removed). It is either
	// the values, one per line, or the single line "N values hashing to MD5".
	Expected []string
	// HasSeparator reports whether the record had a "----" line.
	HasSeparator bool

	// Hash threshold.
	Threshold int

	// Err explains a KindInvalid record.
	Err string
}

// Counted reports whether the record counts as passed, failed or skipped:
// statements, queries, and invalid records (which fail when not skipped).
func (r *Record) Counted() bool {
	return r.Kind == KindStatement || r.Kind == KindQuery || r.Kind == KindInvalid
}

// Skipped reports whether the guards skip the record for the given engine.
// Engine names compare case-insensitively.
func (r *Record) Skipped(engine string) bool {
	for _, g := range r.Guards {
		match := strings.EqualFold(g.Engine, engine)
		if g.SkipIf == match {
			return true
		}
	}
	return false
}

// ExpectedHash returns the result hash the record's expected lines stand
// for: the MD5 of a "N values hashing to MD5" line, or else the MD5 of the
// expected lines each followed by "\n" (as the reference runner computes it
// for a skipped labeled query). ok is false when there are no expected lines.
func (r *Record) ExpectedHash() (hash string, ok bool) {
	if len(r.Expected) == 0 {
		return "", false
	}
	if len(r.Expected) == 1 {
		if _, h, isHash := ParseHashLine(r.Expected[0]); isHash {
			return h, true
		}
	}
	return HashValues(r.Expected), true
}

// ParseHashLine parses "N values hashing to MD5" (also "1 value hashing to
// MD5").
func ParseHashLine(line string) (n int, hash string, ok bool) {
	f := strings.Fields(line)
	if len(f) != 5 || (f[1] != "values" && f[1] != "value") || f[2] != "hashing" || f[3] != "to" {
		return 0, "", false
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n < 0 {
		return 0, "", false
	}
	return n, strings.ToLower(f[4]), true
}

type scriptLine struct {
	num  int
	text string // "" for a blank line
}

// splitLines splits a script into lines the way the reference runner reads
// them: "\r" before "\n" is removed, whitespace-only lines become empty, and
// lines starting with "#" are dropped.
func splitLines(data string) []scriptLine {
	var out []scriptLine
	num := 0
	for len(data) > 0 {
		var line string
		if i := strings.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, ""
		}
		num++
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" {
			line = ""
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, scriptLine{num: num, text: line})
	}
	return out
}

// Parse splits the text of a sqllogictest file into records. It never fails:
// a record it cannot understand becomes a KindInvalid record with Err set.
func Parse(data string) []Record {
	lines := splitLines(data)
	var recs []Record
	i := 0
	for i < len(lines) {
		// Skip blank lines between records.
		if lines[i].text == "" {
			i++
			continue
		}
		// The record runs up to the next blank line.
		j := i
		for j < len(lines) && lines[j].text != "" {
			j++
		}
		recs = append(recs, parseRecord(lines[i:j]))
		i = j
	}
	return recs
}

func parseRecord(block []scriptLine) Record {
	rec := Record{FirstLine: block[0].num}
	k := 0
	for ; k < len(block); k++ {
		tok := strings.Fields(block[k].text)
		if tok[0] != "skipif" && tok[0] != "onlyif" {
			break
		}
		g := Guard{SkipIf: tok[0] == "skipif"}
		if len(tok) > 1 {
			g.Engine = tok[1]
		}
		rec.Guards = append(rec.Guards, g)
	}
	if k == len(block) {
		rec.Line = block[len(block)-1].num
		rec.Kind = KindInvalid
		rec.Err = "record has guard lines only"
		return rec
	}
	rec.Line = block[k].num
	tok := strings.Fields(block[k].text)
	body := block[k+1:]
	switch tok[0] {
	case "statement":
		rec.Kind = KindStatement
		mode := ""
		if len(tok) > 1 {
			mode = tok[1]
		}
		switch mode {
		case "ok":
		case "error":
			rec.ExpectError = true
			if len(tok) > 2 {
				rec.ErrorCode = tok[2]
			}
		default:
			rec.Kind = KindInvalid
			rec.Err = "statement argument should be 'ok' or 'error'"
			return rec
		}
		rec.SQL = joinLines(body)
	case "query":
		rec.Kind = KindQuery
		if len(tok) < 2 {
			rec.Kind = KindInvalid
			rec.Err = "missing type string"
			return rec
		}
		rec.Types = tok[1]
		for _, c := range rec.Types {
			if c != 'I' && c != 'R' && c != 'T' {
				rec.Kind = KindInvalid
				rec.Err = fmt.Sprintf("unknown type character '%c' in type string", c)
				return rec
			}
		}
		rec.SortMode = NoSort
		if len(tok) > 2 {
			rec.SortMode = tok[2]
		}
		switch rec.SortMode {
		case NoSort, RowSort, ValueSort:
		default:
			rec.Kind = KindInvalid
			rec.Err = fmt.Sprintf("unknown sort method: '%s'", rec.SortMode)
			return rec
		}
		if len(tok) > 3 {
			rec.Label = tok[3]
		}
		sep := len(body)
		for n, l := range body {
			if l.text == "----" {
				sep = n
				break
			}
		}
		rec.SQL = joinLines(body[:sep])
		if sep < len(body) {
			rec.HasSeparator = true
			for _, l := range body[sep+1:] {
				rec.Expected = append(rec.Expected, l.text)
			}
		}
	case "hash-threshold":
		rec.Kind = KindHashThreshold
		if len(tok) < 2 {
			rec.Kind = KindInvalid
			rec.Err = "hash-threshold needs a number"
			return rec
		}
		n, err := strconv.Atoi(tok[1])
		if err != nil || n < 0 {
			rec.Kind = KindInvalid
			rec.Err = fmt.Sprintf("bad hash-threshold %q", tok[1])
			return rec
		}
		rec.Threshold = n
	case "halt":
		rec.Kind = KindHalt
	default:
		rec.Kind = KindInvalid
		rec.Err = fmt.Sprintf("unknown record type: '%s'", tok[0])
	}
	return rec
}

func joinLines(ls []scriptLine) string {
	var b strings.Builder
	for n, l := range ls {
		if n > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l.text)
	}
	return b.String()
}
