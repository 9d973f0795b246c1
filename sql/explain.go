package sql

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/types"
)

// explain renders the plan of a query: one row per line (FORMAT TEXT) or
// one row holding the same tree as JSON. The lines are built when the
// statement runs, so that they show the shard maps, shard statistics and
// the range_expansion_limit of that moment.
func (s *Session) explain(st *bind.Explain) (Result, error) {
	var detailErr error
	tree := planner.ExplainTree(st.Node, func(n planner.Node) []string {
		var out []string
		if scan, ok := n.(*planner.Scan); ok {
			lines, err := s.explainScan(scan, st.Verbose, st.Costs)
			if err != nil && detailErr == nil {
				detailErr = err
			}
			out = append(out, lines...)
		}
		if st.Verbose {
			out = append(out, "output: "+outputColumns(n.Columns()))
		}
		return out
	})
	if detailErr != nil {
		return nil, detailErr
	}
	var rows [][]types.Value
	if st.JSON {
		rows = [][]types.Value{{types.NewUtf8(tree.JSON())}}
	} else {
		for _, l := range tree.Lines() {
			rows = append(rows, []types.Value{types.NewUtf8(l)})
		}
	}
	return staticRows(resultColumns(st.Columns()), rows, "EXPLAIN"), nil
}

// outputColumns lists an operator's output columns for EXPLAIN (VERBOSE):
// name and type, hidden ones (carried for sorting) marked.
func outputColumns(cols []planner.Column) string {
	if len(cols) == 0 {
		return "(none)"
	}
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = c.Name + " " + c.Type.String()
		if c.Hidden {
			parts[i] += " (hidden)"
		}
	}
	return strings.Join(parts, ", ")
}

// explainScan describes a table read for EXPLAIN (design.md §6): the access
// path, `ranges=N partitions=K/T`, the ranges one per line, and the filter
// still applied to the rows read. Parameters are unknown at EXPLAIN time,
// so ranges that depend on them print unnarrowed. verbose adds the shards
// read, by id; costs the rows the read can return at most: the row_count
// of the shards it reads.
func (s *Session) explainScan(scan *planner.Scan, verbose, costs bool) ([]string, error) {
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
	var shardIDs []string
	estimate, estimated := int64(0), false
	if sm := s.e.shards.Map(read.ID); sm != nil {
		total = sm.Len()
		starts := make([][]byte, sm.Len())
		for i := range starts {
			starts[i] = sm.Shard(i).Span.Start
		}
		hit := planner.Prune(spans, starts)
		touched = len(hit)
		if len(rs) == 0 {
			hit = nil
		}
		for _, k := range hit {
			shardIDs = append(shardIDs, strconv.FormatUint(uint64(sm.Shard(k).ID), 10))
		}
		if costs {
			stats, err := s.e.shards.Stats(sm)
			if err != nil {
				return nil, err
			}
			estimated = true
			for _, k := range hit {
				if !stats[k].Pending {
					estimate += max(stats[k].Rows, 0)
				}
			}
		}
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
	if verbose {
		out = append(out, "shards: "+strings.Join(shardIDs, ", "))
	}
	if estimated && scan.Index == nil && access == "point lookup" {
		estimate = min(estimate, int64(len(rs))) // one row per key at most
	}
	if estimated {
		out = append(out, fmt.Sprintf("estimated rows read: at most %d (row_count of the shards read)", estimate))
	}
	return out, nil
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
