package parser

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// ExplainOptions are PostgreSQL's EXPLAIN options: EXPLAIN (VERBOSE,
// COSTS OFF, FORMAT JSON) stmt, and the older EXPLAIN ANALYZE VERBOSE
// stmt. TiDB's grammar has neither, so explainOptions takes them off the
// statement before the rewrite and the statement carries them here.
type ExplainOptions struct {
	Analyze bool
	Verbose bool
	// Costs, Timing and Summary are the options as written: nil when not
	// given.
	Costs, Timing, Summary *bool
	// Format is "text" or "json".
	Format string
	// Pos is the 1-based character position of EXPLAIN's first option.
	Pos int
}

// explainOptions recognises EXPLAIN followed by a parenthesised option
// list or by ANALYZE / VERBOSE words. It returns the statement's tokens
// without them (EXPLAIN then the statement explained) and the options;
// nil options when the statement has neither.
func (s *stmtToks) explainOptions() (*stmtToks, *ExplainOptions, error) {
	if s.n() < 2 || !s.isWord(0, "explain") {
		return s, nil, nil
	}
	o := &ExplainOptions{Format: "text", Pos: s.rp.pos(s.start(1))}
	end := 0 // the last token taken off
	switch {
	case s.isOp(1, "("):
		close := int(s.match[1])
		for _, part := range s.split(2, close) {
			if err := s.explainOption(o, part[0], part[1]); err != nil {
				return nil, nil, err
			}
		}
		end = close
	default:
		for end+1 < s.n() && (s.isWord(end+1, "analyze") || s.isWord(end+1, "analyse") || s.isWord(end+1, "verbose")) {
			if s.isWord(end+1, "verbose") {
				o.Verbose = true
			} else {
				o.Analyze = true
			}
			end++
		}
		if end == 0 {
			return s, nil, nil
		}
	}
	if end+1 >= s.n() {
		return nil, nil, syntaxErrorAtEnd(s.endOff())
	}
	return s.without(1, end+1), o, nil
}

// explainOption reads one option, tokens [a, b): a name and an optional
// value.
func (s *stmtToks) explainOption(o *ExplainOptions, a, b int) error {
	if a >= b || !s.isKind(a, tkIdent) {
		return s.errAtTok(a)
	}
	name := strings.ToLower(s.text(a))
	val := ""
	if b-a > 2 {
		return s.errAtTok(a + 2)
	}
	if b-a == 2 {
		val = strings.ToLower(s.text(a + 1))
		if s.isKind(a+1, tkString) {
			val = strings.ToLower(s.strs[s.toks[a+1].aux])
		}
	}
	boolean := func() (bool, error) {
		switch val {
		case "", "on", "true", "1", "yes":
			return true, nil
		case "off", "false", "0", "no":
			return false, nil
		}
		return false, errAt(sqlerr.SyntaxError, s.start(a+1), "%s requires a Boolean value", strings.ToUpper(name))
	}
	switch name {
	case "analyze", "analyse":
		v, err := boolean()
		o.Analyze = v
		return err
	case "verbose":
		v, err := boolean()
		o.Verbose = v
		return err
	case "costs":
		v, err := boolean()
		o.Costs = &v
		return err
	case "format":
		switch val {
		case "text", "json":
			o.Format = val
			return nil
		case "xml", "yaml":
			return errAt(sqlerr.FeatureNotSupported, s.start(a+1), "EXPLAIN format %q is not supported yet: use TEXT or JSON", val)
		}
		return errAt(sqlerr.InvalidParameterValue, s.start(a), "unrecognized value for EXPLAIN option \"format\": %q", val)
	case "timing":
		v, err := boolean()
		o.Timing = &v
		return err
	case "summary":
		v, err := boolean()
		o.Summary = &v
		return err
	case "buffers", "wal", "settings", "generic_plan":
		v, err := boolean()
		if err != nil || !v {
			return err
		}
		return errAt(sqlerr.FeatureNotSupported, s.start(a), "EXPLAIN option %s is not supported yet", strings.ToUpper(name))
	}
	return errAt(sqlerr.SyntaxError, s.start(a), "unrecognized EXPLAIN option %q", name)
}

// without returns the statement's tokens with [lo, hi) taken out; the
// byte offsets of the rest are unchanged, so positions still map to the
// script.
func (s *stmtToks) without(lo, hi int) *stmtToks {
	out := *s
	out.toks = append(append([]token(nil), s.toks[:lo]...), s.toks[hi:]...)
	out.match = make([]int32, len(out.toks))
	for i := range out.match {
		out.match[i] = -1
		j := i
		if i >= lo {
			j = i + hi - lo
		}
		if j < len(s.match) && s.match[j] >= 0 {
			m := int(s.match[j])
			if m >= hi {
				m -= hi - lo
			}
			out.match[i] = int32(m)
		}
	}
	return &out
}
