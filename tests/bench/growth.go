package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// The rows of issue 23's "cost as data grows" (--growth), PivotDB only,
// each a ratio of PivotDB against itself:
//
//   - the point SELECT and the 1,000-row range scan of the main table, on
//     kv (--rows rows, 100k by default) and on kvbig (--growth-rows, 10M
//     by default, loaded with COPY): cost at 10M rows over cost at 100k
//     rows, target at most 1.3×;
//   - single-row UPSERTs on a hash-keyed table of 16 shards and on one of
//     1,000 (the key layout of hkv, so writes spread over every shard):
//     throughput on 1,000 over throughput on 16, target at least 0.9×.
//
// The two sides of a row alternate which goes first in each repetition,
// as the main rows alternate the servers. The rows are behind a flag
// because loading 10M rows takes minutes.

// growthRow is one line of the growth table: one operation at one client
// count on the small and the big side.
type growthRow struct {
	what         string
	small, big   string // the two sides' names
	clients      int
	smallM, bigM measurement
	costRatio    bool    // ratio is cost (small ops/s ÷ big ops/s), else throughput (big ÷ small)
	target       float64 // at most (costRatio) or at least
}

func (g growthRow) ratio() float64 {
	if g.costRatio {
		return g.smallM.ops / g.bigM.ops
	}
	return g.bigM.ops / g.smallM.ops
}

func (g growthRow) meets() bool {
	if g.costRatio {
		return g.ratio() <= g.target
	}
	return g.ratio() >= g.target
}

const (
	createBig        = "CREATE TABLE kvbig (k Int64, v Utf8, PRIMARY KEY (k))"
	createUp16       = "CREATE TABLE up16 (h Uint64 AS (farm_hash(k)), k Int64, v Utf8, PRIMARY KEY (h, k)) WITH (UNIFORM_PARTITIONS = 16)"
	createUp1k       = "CREATE TABLE up1000 (h Uint64 AS (farm_hash(k)), k Int64, v Utf8, PRIMARY KEY (h, k)) WITH (UNIFORM_PARTITIONS = 1000)"
	growthUpsertKeys = 1000000 // keys the UPSERT rows draw from
)

// runGrowth loads kvbig with bigRows rows and the two UPSERT tables, then
// measures the growth rows.
func runGrowth(ctx context.Context, pivot *instance, clients []int, reps, rows, bigRows int, d time.Duration, only string) ([]growthRow, error) {
	for _, stmt := range []string{createBig, createUp16, createUp1k} {
		if _, err := pivot.pool.Exec(ctx, stmt); err != nil {
			return nil, fmt.Errorf("%s: %w", stmt, err)
		}
	}
	start := time.Now()
	conn, err := pivot.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	tag, err := conn.Conn().PgConn().CopyFrom(ctx, &kvRowsReader{n: bigRows}, "COPY kvbig (k, v) FROM STDIN")
	conn.Release()
	if err != nil {
		return nil, fmt.Errorf("loading kvbig: %w", err)
	}
	if tag.RowsAffected() != int64(bigRows) {
		return nil, fmt.Errorf("loading kvbig: %d rows, want %d", tag.RowsAffected(), bigRows)
	}
	progress("loaded %d rows into kvbig in %v", bigRows, time.Since(start).Round(time.Second))

	var out []growthRow
	pair := func(what, small, big string, c int, cost bool, target float64, ws, wb workload, rowsSmall, rowsBig int) error {
		if only != "" && !strings.Contains(strings.ToLower(what), strings.ToLower(only)) {
			return nil
		}
		g := growthRow{what: what, small: small, big: big, clients: c, costRatio: cost, target: target}
		var sm, bm []measurement
		for rep := 0; rep < reps; rep++ {
			order := []bool{false, true}
			if rep%2 == 1 {
				order = []bool{true, false}
			}
			for _, isBig := range order {
				w, n := ws, rowsSmall
				if isBig {
					w, n = wb, rowsBig
				}
				m, err := runPgx(ctx, pivot, w, c, n, d, uint64(rep*1000+c))
				if err != nil {
					return err
				}
				if isBig {
					bm = append(bm, m)
				} else {
					sm = append(sm, m)
				}
			}
		}
		g.smallM, g.bigM = median(sm), median(bm)
		out = append(out, g)
		progress("%-28s %2d clients: %s %8.0f/s  %s %8.0f/s  ratio %.2f (target %s %.1f)",
			what, c, small, g.smallM.ops, big, g.bigM.ops, g.ratio(), map[bool]string{true: "≤", false: "≥"}[cost], target)
		return nil
	}
	bigName := humanCount(bigRows) + " rows"
	smallName := humanCount(rows) + " rows"
	for _, c := range clients {
		if err := pair("point SELECT", smallName, bigName, c, true, 1.3, pointOn("kv"), pointOn("kvbig"), rows, bigRows); err != nil {
			return nil, err
		}
	}
	for _, c := range clients {
		if err := pair("1,000-row range scan", smallName, bigName, c, true, 1.3, rangeOn("kv"), rangeOn("kvbig"), rows, bigRows); err != nil {
			return nil, err
		}
	}
	for _, c := range clients {
		if err := pair("single-row UPSERT", "16 shards", "1,000 shards", c, false, 0.9,
			upsertOn("up16"), upsertOn("up1000"), growthUpsertKeys, growthUpsertKeys); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func pointOn(table string) workload {
	q := "SELECT v FROM " + table + " WHERE k = $1"
	return workload{name: "point SELECT on " + table, op: func(ctx context.Context, in *instance, c *pgxpool.Conn, r *rand.Rand, rows int) error {
		k := r.IntN(rows)
		var v string
		if err := c.QueryRow(ctx, q, int64(k)).Scan(&v); err != nil {
			return err
		}
		if v != value(k) {
			return fmt.Errorf("point SELECT of %d on %s returned %q", k, table, v)
		}
		return nil
	}}
}

func rangeOn(table string) workload {
	q := "SELECT k, v FROM " + table + " WHERE k >= $1 AND k < $2"
	return workload{name: "range scan on " + table, op: func(ctx context.Context, in *instance, c *pgxpool.Conn, r *rand.Rand, rows int) error {
		from := r.IntN(rows - rangeRows)
		rs, err := c.Query(ctx, q, int64(from), int64(from+rangeRows))
		if err != nil {
			return err
		}
		n := 0
		for rs.Next() {
			n++
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return err
		}
		if n != rangeRows {
			return fmt.Errorf("range scan on %s returned %d rows, want %d", table, n, rangeRows)
		}
		return nil
	}}
}

func upsertOn(table string) workload {
	q := "UPSERT INTO " + table + " (k, v) VALUES ($1, $2)"
	return workload{name: "UPSERT on " + table, op: func(ctx context.Context, in *instance, c *pgxpool.Conn, r *rand.Rand, rows int) error {
		k := r.IntN(rows)
		_, err := c.Exec(ctx, q, int64(k), value(k))
		return err
	}}
}

// kvRowsReader streams the text-format rows k<TAB>value(k) for k in
// [0, n): kv's rows, for COPY.
type kvRowsReader struct {
	k, n int
	buf  []byte
}

func (r *kvRowsReader) Read(p []byte) (int, error) {
	for len(r.buf) < len(p) && r.k < r.n {
		r.buf = fmt.Appendf(r.buf, "%d\t%s\n", r.k, value(r.k))
		r.k++
	}
	if len(r.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.buf)
	r.buf = r.buf[:copy(r.buf, r.buf[n:])]
	return n, nil
}

// renderGrowth renders the growth rows as a Markdown section.
func renderGrowth(rows []growthRow, d time.Duration, reps int, pivotFlags string) string {
	var sb strings.Builder
	sb.WriteString("\n## Cost as data grows (PivotDB only, `--growth`)\n\n")
	if pivotFlags != "" {
		fmt.Fprintf(&sb, "PivotDB started with `%s`.\n\n", pivotFlags)
	}
	fmt.Fprintf(&sb, "The same operation on a small and a big side, pgx, medians of %d × %v alternating which side goes\n", reps, d)
	sb.WriteString("first. Reads: cost ratio = ops/s on the small table ÷ ops/s on the big one (target ≤ 1.3×). Writes:\n")
	sb.WriteString("throughput ratio = ops/s on 1,000 shards ÷ ops/s on 16 shards (target ≥ 0.9×).\n\n")
	sb.WriteString("| operation | conns | small side | ops/s | big side | ops/s | ratio | target |\n")
	sb.WriteString("|---|---:|---|---:|---|---:|---:|---|\n")
	for _, g := range rows {
		cmp := "≥"
		if g.costRatio {
			cmp = "≤"
		}
		ok := "met"
		if !g.meets() {
			ok = "missed"
		}
		fmt.Fprintf(&sb, "| %s | %d | %s | %s | %s | %s | %.2f× | %s %.1f× (%s) |\n",
			g.what, g.clients, g.small, fmtOps(g.smallM.ops), g.big, fmtOps(g.bigM.ops), g.ratio(), cmp, g.target, ok)
	}
	return sb.String()
}
