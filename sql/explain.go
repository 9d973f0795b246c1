package sql

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/exec"
	"github.com/pivotdb/pivotdb/sql/types"
)

// explain renders the plan of a query or a write: one row per line
// (FORMAT TEXT) or one row holding the same tree as JSON. The lines are
// built when the statement runs, so that they show the shard maps, shard
// statistics and the range_expansion_limit of that moment. With ANALYZE the
// statement runs first (a write too, in the session's transaction, as in
// PostgreSQL; its result rows are discarded) and each operator shows what
// it did.
func (s *Session) explain(ctx context.Context, st *bind.Explain, params []types.Value) (Result, error) {
	var (
		a       *exec.Analysis
		elapsed time.Duration
		written int64
	)
	if st.Analyze {
		a = exec.NewAnalysis(st.Timing)
		start := time.Now()
		var err error
		written, err = s.runAnalyzed(exec.WithAnalysis(ctx, a), st, params)
		elapsed = time.Since(start)
		if err != nil {
			return nil, err
		}
	}
	var detailErr error
	detail := func(n planner.Node) []string {
		var out []string
		if scan, ok := n.(*planner.Scan); ok {
			lines, err := s.explainScan(scan, st.Verbose, st.Costs)
			if err != nil && detailErr == nil {
				detailErr = err
			}
			out = append(out, lines...)
			if a != nil {
				out = append(out, s.explainReads(scan, a.Stats(n), st.Verbose)...)
			}
		}
		if st.Verbose {
			out = append(out, "output: "+outputColumns(n.Columns()))
		}
		return out
	}
	var actual func(planner.Node) *planner.ExplainActual
	if a != nil {
		actual = func(n planner.Node) *planner.ExplainActual { return explainActual(a.Stats(n), st.Timing) }
	}
	tree := planner.ExplainTreeAnalyzed(st.Node, detail, actual)
	if detailErr != nil {
		return nil, detailErr
	}
	if st.Write != nil {
		root := &planner.ExplainNode{Operator: writeOperator(st.Write), Plans: []*planner.ExplainNode{tree}}
		if a != nil {
			root.ExplainActual = &planner.ExplainActual{Rows: written, Loops: 1}
			if st.Timing {
				ms := durationMs(elapsed)
				root.TimeMs = &ms
			}
		}
		tree = root
	}
	var planningMs, executionMs *float64
	if st.Summary {
		p, e := durationMs(s.planningTime), durationMs(elapsed)
		planningMs, executionMs = &p, &e
	}
	var rows [][]types.Value
	if st.JSON {
		rows = [][]types.Value{{types.NewUtf8(tree.JSONWithSummary(planningMs, executionMs))}}
	} else {
		for _, l := range tree.Lines() {
			rows = append(rows, []types.Value{types.NewUtf8(l)})
		}
		if st.Summary {
			rows = append(rows, []types.Value{types.NewUtf8(fmt.Sprintf("Planning Time: %.3f ms", *planningMs))},
				[]types.Value{types.NewUtf8(fmt.Sprintf("Execution Time: %.3f ms", *executionMs))})
		}
	}
	return staticRows(resultColumns(st.Columns()), rows, "EXPLAIN"), nil
}

// runAnalyzed runs an EXPLAIN ANALYZE's statement under ctx (which carries
// the analysis) to its end, discarding its rows; for a write it returns the
// rows written (the count of its command tag).
func (s *Session) runAnalyzed(ctx context.Context, st *bind.Explain, params []types.Value) (int64, error) {
	if st.Write == nil {
		it, err := s.iterate(ctx, st.Node, params)
		if err != nil {
			return 0, err
		}
		defer it.Close()
		for {
			row, err := it.Next()
			if err != nil || row == nil {
				return 0, err
			}
		}
	}
	res, err := s.run(ctx, st.Write, params)
	if err != nil {
		return 0, err
	}
	defer res.Close()
	for {
		row, err := res.Next(ctx)
		if err != nil {
			return 0, err
		}
		if row == nil {
			break
		}
	}
	tag := res.Tag()
	n, _ := strconv.ParseInt(tag[strings.LastIndexByte(tag, ' ')+1:], 10, 64)
	return n, nil
}

// writeOperator names the operator of an explained write: "Insert on t",
// "Upsert on t", "Replace on t", "Update on t", "Delete on t".
func writeOperator(w bind.Statement) string {
	switch w := w.(type) {
	case *bind.Insert:
		verb := w.Mode.Verb()
		return verb[:1] + strings.ToLower(verb[1:]) + " on " + w.Table.Name
	case *bind.Modify:
		if w.Update {
			return "Update on " + w.Scan.Table.Name
		}
		return "Delete on " + w.Scan.Table.Name
	}
	return fmt.Sprintf("%T", w)
}

// explainActual is a node's measures as EXPLAIN ANALYZE shows them; a node
// never started shows "(never executed)".
func explainActual(st *exec.NodeStats, timing bool) *planner.ExplainActual {
	if st == nil {
		return &planner.ExplainActual{}
	}
	out := &planner.ExplainActual{Rows: st.Rows(), Loops: st.Loops()}
	if timing {
		ms := durationMs(st.Time())
		out.TimeMs = &ms
	}
	return out
}

// durationMs is d in milliseconds, rounded to microseconds as PostgreSQL
// prints them.
func durationMs(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}

// explainReads describes what an analysed table read took from storage:
// the rows (for an index scan, the index entries) read per shard, the
// shard named by its partition index in the table's shard map as it is
// now (sys.partitions' partition_index; VERBOSE adds the shard id). A
// shard that has been split or merged away since shows by id.
func (s *Session) explainReads(scan *planner.Scan, st *exec.NodeStats, verbose bool) []string {
	if st == nil {
		return nil
	}
	what, read := "rows read", scan.Table
	if scan.Index != nil {
		what, read = "index entries read", scan.IndexEntries
	}
	reads := st.Reads()
	sm := s.e.shards.Map(read.ID)
	type part struct {
		index int
		id    partition.ShardID
		rows  int64
	}
	parts := make([]part, 0, len(reads))
	var total int64
	for _, r := range reads {
		idx := -1
		if sm != nil {
			idx = sm.IndexOf(r.Shard)
		}
		parts = append(parts, part{index: idx, id: r.Shard, rows: r.Rows})
		total += r.Rows
	}
	sort.Slice(parts, func(i, j int) bool {
		if (parts[i].index < 0) != (parts[j].index < 0) {
			return parts[i].index >= 0
		}
		if parts[i].index != parts[j].index {
			return parts[i].index < parts[j].index
		}
		return parts[i].id < parts[j].id
	})
	names := make([]string, len(parts))
	for i, p := range parts {
		switch {
		case p.index < 0:
			names[i] = fmt.Sprintf("shard %d: %d", p.id, p.rows)
		case verbose:
			names[i] = fmt.Sprintf("partition %d (shard %d): %d", p.index, p.id, p.rows)
		default:
			names[i] = fmt.Sprintf("partition %d: %d", p.index, p.rows)
		}
	}
	line := fmt.Sprintf("%s: %d", what, total)
	if len(names) > 0 {
		line += " (" + strings.Join(names, ", ") + ")"
	}
	return []string{line}
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
