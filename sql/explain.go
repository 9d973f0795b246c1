package sql

import (
	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/types"
)

// explain renders the plan of a query, one row per line. The lines are
// built when the statement runs, so that they show the shard maps and the
// range_expansion_limit of that moment.
func (s *Session) explain(st *bind.Explain) (Result, error) {
	lines := planner.Explain(st.Node, s.explainScan)
	rows := make([][]types.Value, len(lines))
	for i, l := range lines {
		rows[i] = []types.Value{types.NewUtf8(l)}
	}
	return staticRows(resultColumns(st.Columns()), rows, "EXPLAIN"), nil
}

// explainScan describes a table read for EXPLAIN (design.md §6): the access
// path, `ranges=N partitions=K/T`, the ranges one per line, and the filter
// still applied to the rows read. Parameters are unknown at EXPLAIN time,
// so ranges that depend on them print unnarrowed.
func (s *Session) explainScan(scan *planner.Scan) []string {
	var rs planner.Ranges
	filter := scan.Filter
	read, prog := scan.Table, scan.Ranges
	if scan.Index != nil {
		// The ranges are over the index's entries; the rows are then
		// fetched by primary key and the whole condition applies to them.
		read, prog = scan.IndexEntries, scan.IndexRanges
	}
	if prog == nil {
		rs = planner.Ranges{{Upper: planner.Bound{Max: true}}}
	} else {
		res := prog.Evaluate(nil, s.vars.RangeExpansionLimit())
		rs, filter = res.Ranges, res.Filter
	}
	if scan.Index != nil {
		filter = scan.Filter
	}
	spans := rs.ToSpans(read)
	total, touched := 1, 1
	if sm := s.e.shards.Map(read.ID); sm != nil {
		total = sm.Len()
		starts := make([][]byte, sm.Len())
		for i := range starts {
			starts[i] = sm.Shard(i).Span.Start
		}
		touched = len(planner.Prune(spans, starts))
	}
	if len(rs) == 0 {
		touched = 0
	}
	access := accessPath(read, rs)
	if scan.Index != nil {
		access = "index " + scan.Index.Name + " " + access + ", rows by primary key"
	}
	out := []string{"access: " + access, planner.ExplainReadHeader(len(rs), touched, total)}
	out = append(out, planner.ExplainRanges(rs, 0)...)
	if filter != nil {
		out = append(out, "filter: "+filter.String())
	}
	return out
}

// accessPath names how a scan reads: every range a full-key point is a
// point lookup, one range over the whole table a full scan.
func accessPath(t *catalog.Table, rs planner.Ranges) string {
	switch {
	case len(rs) == 0:
		return "none (the condition is never true)"
	case len(rs) == 1 && len(rs[0].Lower.Values) == 0 && rs[0].Upper.Max && len(rs[0].Upper.Values) == 0:
		return "full scan"
	}
	for _, r := range rs {
		n := len(t.PrimaryKey)
		if len(r.Lower.Values) != n || r.Lower.Max || len(r.Upper.Values) != n || !r.Upper.Max ||
			types.CompareRows(r.Lower.Values, r.Upper.Values) != 0 {
			return "range scan"
		}
	}
	return "point lookup"
}
