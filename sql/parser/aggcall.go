package parser

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// Aggregate calls. PostgreSQL's aggregate syntax goes beyond what TiDB's
// grammar takes: ORDER BY inside the call (TiDB: group_concat only),
// DISTINCT and OVER after aggregates TiDB parses as plain function calls
// (array_agg, string_agg, bool_and, ...), and FILTER. The rewriter
// spells them with marker calls the binder (expr.BuildAgg, bind/window.go)
// takes apart again:
//
//	agg(x, y ORDER BY k1 DESC, k2 NULLS FIRST)
//	        agg(pivot_agg_order((x), (k1), 1, (k2), 2), y)
//	array_agg(x) FILTER (WHERE c)
//	        array_agg(pivot_agg_filter((x), (c)))
//	array_agg(x) OVER (...)
//	        group_concat(pivot_window_agg('array_agg'), x) OVER (...)
//
// The ORDER BY wraps the first argument, so the call keeps the argument
// count TiDB's grammar wants (sum(x ORDER BY k) is still sum of one
// expression). FILTER of the other aggregates stays CASE WHEN (c) THEN
// (x) END: they ignore NULL inputs, array_agg keeps them.
// group_concat is the one TiDB aggregate whose grammar takes a list of
// expressions and OVER, so it carries the window calls of the others; TiDB
// appends its SEPARATOR (',') as a last argument, which the binder drops.
const (
	AggOrderFunc  = "pivot_agg_order"
	AggFilterFunc = "pivot_agg_filter"
	WindowAggFunc = "pivot_window_agg"
)

// The flags of an ORDER BY key in AggOrderFunc: DESC, and NULLS FIRST or
// NULLS LAST when written (otherwise the dialect's default applies).
const (
	AggOrderDesc       = 1
	AggOrderNullsFirst = 2
	AggOrderNullsLast  = 4
)

// genericAggs are PivotDB's aggregates that TiDB's grammar reads as plain
// function calls: their DISTINCT and OVER need the markers.
var genericAggs = map[string]bool{
	"array_agg": true, "string_agg": true, "bool_and": true, "bool_or": true, "every": true,
	"count_if": true, "total": true,
}

// sampleAggs renames PostgreSQL's stddev and variance (see operand).
var sampleAggs = map[string]string{"stddev": "stddev_samp", "variance": "var_samp"}

// tidbAggs are the aggregates TiDB's grammar knows (SumExpr), which take
// DISTINCT and OVER themselves.
var tidbAggs = map[string]bool{
	"count": true, "sum": true, "avg": true, "min": true, "max": true, "group_concat": true,
	"bit_and": true, "bit_or": true, "bit_xor": true, "std": true, "stddev": true, "stddev_pop": true,
	"stddev_samp": true, "variance": true, "var_pop": true, "var_samp": true, "json_arrayagg": true,
	"json_objectagg": true,
}

// aggCallName is the lower-case name of the function whose "(" is at call,
// or "" when the callee is not a plain word.
func (s *stmtToks) aggCallName(call int) string {
	if call < 1 || !s.isKind(call-1, tkIdent) {
		return ""
	}
	return strings.ToLower(s.text(call - 1))
}

// nextTop returns the index after the element at k: a parenthesised or
// bracketed group as a whole, otherwise the token (hi when a bracket is
// not closed before it).
func (s *stmtToks) nextTop(k, hi int) int {
	switch {
	case s.isOp(k, "("):
		return int(s.match[k]) + 1
	case s.isOp(k, "["):
		if c := s.closeBracket(k, hi); c >= 0 {
			return c + 1
		}
		return hi
	}
	return k + 1
}

// needsAggCall reports whether the call whose "(" is at call (of name)
// must go through aggCall: it has an ORDER BY (other than group_concat's,
// which TiDB parses), a FILTER, DISTINCT of a generic aggregate, or is a
// generic aggregate with OVER.
func (s *stmtToks) needsAggCall(name string, call, filter, over int) bool {
	if filter >= 0 || s.windowAgg(name, call, over) {
		return true
	}
	if genericAggs[name] && s.isWord(call+1, "distinct") {
		return true
	}
	return name != "group_concat" && s.orderByIn(call) >= 0
}

// windowAgg reports whether the call whose "(" is at call, with OVER at
// over (or -1), goes to TiDB as a group_concat window call: a generic
// aggregate, or one of TiDB's with DISTINCT, which its grammar takes
// without OVER only (the binder's error is PostgreSQL's 0A000).
func (s *stmtToks) windowAgg(name string, call, over int) bool {
	return over >= 0 && (genericAggs[name] || tidbAggs[name] && name != "group_concat" && s.isWord(call+1, "distinct"))
}

// aggCall emits the parenthesised arguments of the aggregate call whose
// "(" is at call, with its ORDER BY, FILTER (at filter, or -1) and DISTINCT
// spelled as described above. window is set for a generic aggregate with
// OVER, whose name the caller wrote as group_concat.
func (r *rewriter) aggCall(name string, call, filter int, window bool) error {
	s := r.s
	close := int(s.match[call])
	order := -1
	if name != "group_concat" {
		order = s.orderByIn(call)
	}
	if order >= 0 && !tidbAggs[name] && !genericAggs[name] {
		return errAt(sqlerr.WrongObjectType, s.start(order), "ORDER BY specified, but %s is not an aggregate function", name)
	}
	argsEnd := close
	if order >= 0 {
		argsEnd = order
	}
	r.plain(call)
	sep := false // a "," is due before the next argument
	if window {
		r.syn(WindowAggFunc+"("+sqlQuote(name)+")", call, false, false)
		sep = true
	}
	comma := func(tok int) {
		if sep {
			r.syn(",", tok, true, false)
		}
		sep = false
	}
	first := call + 1
	switch {
	case s.isWord(first, "distinct") && (genericAggs[name] || window):
		comma(first)
		r.syn(AggDistinctFunc+"(),", first, false, true)
		first++
	case s.isWord(first, "distinct"):
		comma(first)
		r.plain(first)
		first++
	case s.isWord(first, "all"):
		// ALL is the default; TiDB's grammar takes it only for some
		// aggregates.
		first++
	}
	argEnd := first
	for argEnd < argsEnd && !s.isOp(argEnd, ",") {
		argEnd = s.nextTop(argEnd, argsEnd)
	}
	if argEnd == first {
		switch {
		case order >= 0:
			return s.errAtTok(order)
		case filter >= 0 && first == argsEnd:
			return s.errAtTok(filter)
		case first < argsEnd:
			return s.errAtTok(first)
		}
		r.plain(close)
		return nil
	}
	star := argEnd == first+1 && s.isOp(first, "*")
	if star && order >= 0 {
		return s.errAtTok(order)
	}
	comma(first)
	if order >= 0 {
		r.syn(AggOrderFunc+"(", first, !window && first == call+1, true)
	}
	// The first argument, filtered.
	switch {
	case filter >= 0 && name == "array_agg":
		cond := filter + 1
		r.syn(AggFilterFunc+"((", filter, false, true)
		if err := r.seq(first, argEnd); err != nil {
			return err
		}
		r.syn("), (", argEnd-1, true, true)
		if err := r.seq(cond+2, int(s.match[cond])); err != nil {
			return err
		}
		r.syn("))", int(s.match[cond]), true, false)
	case filter >= 0:
		cond := filter + 1
		r.syn("CASE WHEN (", filter, false, true)
		if err := r.seq(cond+2, int(s.match[cond])); err != nil {
			return err
		}
		r.syn(") THEN", int(s.match[cond]), true, false)
		if star {
			r.syn("1", first, false, false)
		} else {
			r.syn("(", first, false, true)
			if err := r.seq(first, argEnd); err != nil {
				return err
			}
			r.syn(")", argEnd-1, true, false)
		}
		r.syn("END", argEnd-1, false, false)
	default:
		if err := r.seq(first, argEnd); err != nil {
			return err
		}
	}
	if order >= 0 {
		if err := r.aggOrder(order, close); err != nil {
			return err
		}
		r.syn(")", order, true, false)
	}
	if err := r.seq(argEnd, argsEnd); err != nil {
		return err
	}
	r.plain(close)
	return nil
}

// aggOrder emits the keys of the ORDER BY at order (up to close) as
// ", (key), flags" for each.
func (r *rewriter) aggOrder(order, close int) error {
	s := r.s
	lo := order + 2
	if lo >= close {
		return s.errAtTok(lo)
	}
	for a := lo; a < close; {
		b := a
		for b < close && !s.isOp(b, ",") {
			b = s.nextTop(b, close)
		}
		if b == a {
			return s.errAtTok(a)
		}
		end, flags := b, 0
		if end-2 > a && s.isWord(end-2, "nulls") {
			switch {
			case s.isWord(end-1, "first"):
				flags |= AggOrderNullsFirst
			case s.isWord(end-1, "last"):
				flags |= AggOrderNullsLast
			default:
				return s.errAtTok(end - 1)
			}
			end -= 2
		}
		if end-1 > a {
			switch {
			case s.isWord(end-1, "desc"):
				flags |= AggOrderDesc
				end--
			case s.isWord(end-1, "asc"):
				end--
			}
		}
		for k := a; k < end; k = s.nextTop(k, end) {
			if s.isWord(k, "using") {
				return errAt(sqlerr.FeatureNotSupported, s.start(k), "ORDER BY ... USING is not supported yet")
			}
		}
		r.syn(", (", a, true, true)
		if err := r.seq(a, end); err != nil {
			return err
		}
		r.syn(")", end-1, true, false)
		r.syn(", "+string(rune('0'+flags)), end-1, true, false)
		a = b
		if b < close {
			a = b + 1
			if a == close {
				return s.errAtTok(close)
			}
		}
	}
	return nil
}
