package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// row is one line of the results table: the medians of one workload at one
// client count on both servers.
type row struct {
	workload   string
	harness    string // "pgx", "pgbench" or "Go"
	clients    int
	pivot, pg  measurement
	rowsPerSec bool // ops are rows (bulk load), latencies not measured
}

func (r row) ratio() float64 {
	if r.pg.ops == 0 {
		return 0
	}
	return r.pivot.ops / r.pg.ops
}

// renderMarkdown renders the whole report: machine, method, results.
func renderMarkdown(env string, d time.Duration, reps, rows int, results, raw []row) string {
	var sb strings.Builder
	sb.WriteString("# PivotDB and PostgreSQL 15, side by side\n\n")
	sb.WriteString("Produced by `make bench` (tests/bench): one throw-away PostgreSQL 15 (initdb in a temporary\n")
	sb.WriteString("directory, loopback, default durability: fsync and synchronous_commit on) and one throw-away\n")
	sb.WriteString("PivotDB (default durability: synced commits), the same data loaded into both, the same\n")
	sb.WriteString("workloads run by the same clients in the same run. Each figure is the median of the\n")
	fmt.Fprintf(&sb, "repetitions (%d × %v per workload and client count, alternating which server goes first);\n", reps, d)
	sb.WriteString("the bulk load runs once per client count. Ratio = PivotDB ops/s ÷ PostgreSQL ops/s.\n\n")
	fmt.Fprintf(&sb, "Tables: `kv(k, v)` with %d rows keyed by k; `hkv(k, v)` with the same rows, hash-sharded in\n", rows)
	sb.WriteString("PivotDB (`h Uint64 AS (farm_hash(k))` leading the key, 16 uniform shards) and a btree primary\n")
	sb.WriteString("key in PostgreSQL. UPSERT is `INSERT ... ON CONFLICT (k) DO UPDATE` in PostgreSQL. pgx runs\n")
	sb.WriteString("the extended protocol with its statement cache; pgbench runs `-n -M prepared` custom scripts.\n\n")
	sb.WriteString(env)
	sb.WriteString("\n## Results\n\n")
	sb.WriteString("| workload | client | conns | PivotDB ops/s | p50 | p99 | PostgreSQL ops/s | p50 | p99 | ratio |\n")
	sb.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		unit := ""
		if r.rowsPerSec {
			unit = " rows"
		}
		fmt.Fprintf(&sb, "| %s | %s | %d | %s%s | %s | %s | %s%s | %s | %s | %.2f× |\n",
			r.workload, r.harness, r.clients,
			fmtOps(r.pivot.ops), unit, fmtLat(r.pivot.p50), fmtLat(r.pivot.p99),
			fmtOps(r.pg.ops), unit, fmtLat(r.pg.p50), fmtLat(r.pg.p99), r.ratio())
	}
	if len(raw) == 0 {
		// A run of selected workloads (-only) measures no raw commits.
		return sb.String()
	}
	sb.WriteString("\n## The physical limit for writes\n\n")
	sb.WriteString("Single-row synced commits straight into PivotDB's storage engine (same Pebble options, no SQL,\n")
	sb.WriteString("no wire), one writer goroutine per client: what single-row UPSERT could reach at best.\n\n")
	sb.WriteString("| writers | commits/s | p50 | p99 |\n|---:|---:|---:|---:|\n")
	for _, r := range raw {
		fmt.Fprintf(&sb, "| %d | %s | %s | %s |\n", r.clients, fmtOps(r.pivot.ops), fmtLat(r.pivot.p50), fmtLat(r.pivot.p99))
	}
	return sb.String()
}

func fmtOps(f float64) string {
	s := fmt.Sprintf("%.0f", f)
	// Thousands separators for readability.
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

func fmtLat(d time.Duration) string {
	switch {
	case d == 0:
		return "—"
	case d < time.Millisecond:
		return fmt.Sprintf("%d µs", d.Microseconds())
	default:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
}

// describeMachine says what the figures were measured on.
func describeMachine(pgVersion, pivotVersion string, elapsed time.Duration) string {
	var sb strings.Builder
	sb.WriteString("## Machine\n\n")
	fmt.Fprintf(&sb, "* Date: %s (run took %v)\n", time.Now().UTC().Format("2006-01-02 15:04 MST"), elapsed.Round(time.Second))
	fmt.Fprintf(&sb, "* CPU: %s, %d logical cores\n", cpuModel(), runtime.NumCPU())
	fmt.Fprintf(&sb, "* Memory: %s\n", memTotal())
	if out, err := exec.Command("uname", "-sr").Output(); err == nil {
		fmt.Fprintf(&sb, "* Kernel: %s\n", strings.TrimSpace(string(out)))
	}
	fmt.Fprintf(&sb, "* Go: %s\n", runtime.Version())
	fmt.Fprintf(&sb, "* PostgreSQL: %s\n", pgVersion)
	fmt.Fprintf(&sb, "* PivotDB: %s", pivotVersion)
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		fmt.Fprintf(&sb, " (commit %s)", strings.TrimSpace(string(out)))
	}
	sb.WriteString("\n* Clients run on the same machine as the servers.\n")
	return sb.String()
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func memTotal() string {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
		}
	}
	return "unknown"
}
