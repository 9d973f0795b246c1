package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	bin := flag.String("bin", "bin/pivotdb", "pivotdb binary")
	duration := flag.Duration("duration", 2*time.Second, "time per measured run")
	reps := flag.Int("reps", 3, "repetitions of each run; the median is reported")
	clientsFlag := flag.String("clients", "1,4,16", "client connection counts")
	rows := flag.Int("rows", 100000, "rows in the point/range/IN-list tables")
	bulkRows := flag.Int("bulk-rows", 1000000, "rows of the bulk load")
	copyRows := flag.Int("copy-rows", 1000000, "rows of the COPY FROM load")
	copyOnly := flag.Bool("copy-only", false, "run only the COPY FROM load (after loading the tables)")
	only := flag.String("only", "", "run only the workloads whose name contains `TEXT` (case-insensitive; e.g. \"correlated EXISTS\"), "+
		"without the COPY and raw Pebble rows; the bulk load's row when TEXT is part of \"bulk load\" (e.g. \"bulk\"); "+
		"with --cluster-only, the cluster section's workloads whose name contains TEXT (e.g. \"UPSERT\")")
	withPgbench := flag.Bool("pgbench", true, "also run each workload through pgbench -M prepared")
	out := flag.String("out", "", "also write the results as Markdown to this file (e.g. docs/benchmarks.md)")
	profile := flag.String("profile", "", "WORKLOAD@CLIENTS: take a 10 s CPU profile of PivotDB running it (pgx) and write it to pivotdb.cpu.pprof "+
		"(right after the load; see --profile-after-workloads)")
	profileAfter := flag.Bool("profile-after-workloads", false, "with --profile: first run, against PivotDB only, every workload that comes before the profiled one "+
		"as the full bench runs them (each client count, --reps times, pgx and pgbench), so that the profile sees the data they leave behind")
	growth := flag.Bool("growth", false, "also run the cost-as-data-grows rows (PivotDB only): point SELECT and range scan on --growth-rows rows against --rows rows, "+
		"UPSERT throughput on 1,000 shards against 16 (loads --growth-rows rows: minutes)")
	growthOnly := flag.Bool("growth-only", false, "run only the cost-as-data-grows rows (no PostgreSQL; with --only, those whose name contains TEXT)")
	growthRows := flag.Int("growth-rows", 10000000, "rows of the big table of the growth rows")
	pgoOut := flag.String("pgo", "", "write a CPU profile of PivotDB alone running the --pgo-workloads, merged, to `FILE` "+
		"(make pgo: cmd/pivotdb/default.pgo, which go build uses for profile-guided optimisation)")
	pgoWorkloads := flag.String("pgo-workloads", defaultPGOWorkloads, "with --pgo: `WORKLOAD@CLIENTS` specs, separated by ';'")
	pgoSeconds := flag.Int("pgo-seconds", 8, "with --pgo: seconds of profile per workload")
	pivotFlags := flag.String("pivot-flags", "", "extra `FLAGS` for pivotdb serve, space-separated (e.g. \"--cache-size 536870912\"); the report names them")
	withCluster := flag.Bool("cluster", true, "also run the cluster section (cluster.go): three nodes against one node")
	clusterOnly := flag.Bool("cluster-only", false, "run only the cluster section (no PostgreSQL) and print it")
	clusterProfile := flag.String("cluster-profile", "", "after the cluster section, write a 10 s CPU profile of each node under single-row UPSERTs "+
		"at 16 clients to `DIR`/{serving,follower-1,follower-2}.pprof")
	flag.Parse()
	if *clusterOnly {
		defer runCleanups()
		rs, err := runClusterSection(context.Background(), *bin, *duration, *reps, *rows, *clusterProfile, *only)
		if err != nil {
			fatalf("%v", err)
		}
		fmt.Print(renderCluster(rs, *duration, *reps))
		return
	}

	clients, err := parseClients(*clientsFlag)
	if err != nil {
		fatalf("%v", err)
	}
	ctx := context.Background()
	started := time.Now()

	debugAddr := ""
	if *profile != "" || *pgoOut != "" {
		debugAddr = freeAddr()
	}
	pivot, err := startPivot(*bin, debugAddr, strings.Fields(*pivotFlags))
	if err != nil {
		fatalf("%v", err)
	}
	atExit(pivot.stop)
	defer runCleanups()
	if *pgoOut != "" {
		go exitOnSignal()
		if err := pivot.connect(ctx, 16); err != nil {
			fatalf("%s: %v", pivot.name, err)
		}
		if err := loadTables(ctx, pivot, *rows); err != nil {
			fatalf("%v", err)
		}
		if err := runPGO(ctx, pivot, debugAddr, *pgoWorkloads, *pgoOut, *pgoSeconds, *rows); err != nil {
			fatalf("%v", err)
		}
		return
	}
	if *growthOnly {
		go exitOnSignal()
		if err := pivot.connect(ctx, max(16, maxOf(clients))); err != nil {
			fatalf("%s: %v", pivot.name, err)
		}
		if err := loadTables(ctx, pivot, *rows); err != nil {
			fatalf("%v", err)
		}
		g, err := runGrowth(ctx, pivot, clients, *reps, *rows, *growthRows, *duration, *only)
		if err != nil {
			fatalf("%v", err)
		}
		fmt.Print(renderGrowth(g, *duration, *reps, *pivotFlags))
		return
	}
	pg, err := startPostgres()
	if err != nil {
		fatalf("%v", err)
	}
	atExit(pg.stop)
	go exitOnSignal()
	servers := []*instance{pg, pivot}
	for _, in := range servers {
		if err := in.connect(ctx, max(16, maxOf(clients))); err != nil {
			fatalf("%s: %v", in.name, err)
		}
		if err := loadTables(ctx, in, *rows); err != nil {
			fatalf("%v", err)
		}
	}
	progress("loaded %d rows into kv and hkv on both servers", *rows)

	if *profile != "" {
		if *profileAfter {
			if err := runWorkloadsBefore(ctx, pivot, *profile, clients, *reps, *rows, *duration, *withPgbench); err != nil {
				fatalf("%v", err)
			}
		}
		if err := runProfile(ctx, pivot, debugAddr, *profile, *rows, "pivotdb.cpu.pprof", 10); err != nil {
			fatalf("%v", err)
		}
		return
	}

	var results []row
	add := func(r row) {
		results = append(results, r)
		progress("%-24s %-8s %2d clients: PivotDB %10.0f/s  PostgreSQL %10.0f/s  ratio %.2f",
			r.workload, r.harness, r.clients, r.pivot.ops, r.pg.ops, r.ratio())
	}
	// COPY FROM STDIN of copyRows rows into an empty table, one
	// connection; the median of reps runs (each a full load).
	copyRow := func() {
		r, err := measure(*reps, servers, func(in *instance, rep int) (measurement, error) {
			return runCopyLoad(ctx, in, *copyRows)
		})
		if err != nil {
			fatalf("%v", err)
		}
		add(row{workload: fmt.Sprintf("COPY FROM %s rows", humanCount(*copyRows)), harness: "pgx", clients: 1, pg: r[0], pivot: r[1], rowsPerSec: true})
	}
	if *copyOnly {
		copyRow()
		return
	}
	for _, w := range workloads {
		if *only != "" && !strings.Contains(strings.ToLower(w.name), strings.ToLower(*only)) {
			continue
		}
		for _, c := range clients {
			r, err := measure(*reps, servers, func(in *instance, rep int) (measurement, error) {
				return runPgx(ctx, in, w, c, *rows, *duration, uint64(rep*1000+c))
			})
			if err != nil {
				fatalf("%v", err)
			}
			add(row{workload: w.name, harness: "pgx", clients: c, pg: r[0], pivot: r[1]})
		}
		if *withPgbench {
			for _, c := range clients {
				r, err := measure(*reps, servers, func(in *instance, rep int) (measurement, error) {
					return runPgbench(in, w.pgbench(in.dialect), c, *rows, *duration)
				})
				if err != nil {
					fatalf("%v", err)
				}
				add(row{workload: w.name, harness: "pgbench", clients: c, pg: r[0], pivot: r[1]})
			}
		}
	}
	// The bulk load with multi-row INSERTs: one repetition per client
	// count, as each is a million-row load; alternation across client
	// counts still interleaves the two servers.
	bulkRun := func() {
		for _, c := range clients {
			r, err := measure(1, servers, func(in *instance, rep int) (measurement, error) {
				return runBulkLoad(ctx, in, c, *bulkRows)
			})
			if err != nil {
				fatalf("%v", err)
			}
			add(row{workload: fmt.Sprintf("bulk load %s rows", humanCount(*bulkRows)), harness: "pgx", clients: c, pg: r[0], pivot: r[1], rowsPerSec: true})
		}
	}
	if *only != "" {
		if strings.Contains("bulk load", strings.ToLower(*only)) {
			bulkRun()
		}
		if len(results) == 0 {
			fatalf("no workload's name contains %q", *only)
		}
		fmt.Print(renderMarkdown(describeMachine(pg.version, pivot.version, time.Since(started)), *duration, *reps, *rows, results, nil))
		return
	}
	bulkRun()
	copyRow()
	var raw []row
	for _, c := range clients {
		m, err := runRawPebble(c, *duration)
		if err != nil {
			fatalf("%v", err)
		}
		raw = append(raw, row{workload: "raw Pebble synced commit", harness: "Go", clients: c, pivot: m})
	}

	var growthRep string
	if *growth {
		g, err := runGrowth(ctx, pivot, clients, *reps, *rows, *growthRows, *duration, "")
		if err != nil {
			fatalf("%v", err)
		}
		growthRep = renderGrowth(g, *duration, *reps, *pivotFlags)
	}
	var clusterReport string
	if *withCluster {
		rs, err := runClusterSection(ctx, *bin, *duration, *reps, *rows, *clusterProfile, "")
		if err != nil {
			fatalf("%v", err)
		}
		clusterReport = renderCluster(rs, *duration, *reps)
	}
	env := describeMachine(pg.version, pivot.version, time.Since(started))
	if *pivotFlags != "" {
		env += fmt.Sprintf("* PivotDB started with `%s`.\n", *pivotFlags)
	}
	report := renderMarkdown(env, *duration, *reps, *rows, results, raw) + growthRep + clusterReport
	fmt.Print(report)
	if *out != "" {
		if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
			fatalf("%v", err)
		}
		if err := os.WriteFile(*out, []byte(report), 0o644); err != nil {
			fatalf("%v", err)
		}
		progress("wrote %s", *out)
	}
}

// measure runs f reps times on each server, alternating which server goes
// first so that drift of the machine (page cache, thermal, compactions)
// does not favour one, and returns the per-server medians.
func measure(reps int, servers []*instance, f func(in *instance, rep int) (measurement, error)) ([]measurement, error) {
	all := make([][]measurement, len(servers))
	for rep := 0; rep < reps; rep++ {
		for i := range servers {
			j := i
			if rep%2 == 1 {
				j = len(servers) - 1 - i
			}
			m, err := f(servers[j], rep)
			if err != nil {
				return nil, err
			}
			all[j] = append(all[j], m)
		}
	}
	med := make([]measurement, len(servers))
	for i, ms := range all {
		med[i] = median(ms)
	}
	return med, nil
}

func median(ms []measurement) measurement {
	pick := func(get func(measurement) float64) float64 {
		v := make([]float64, len(ms))
		for i, m := range ms {
			v[i] = get(m)
		}
		sort.Float64s(v)
		return v[len(v)/2]
	}
	return measurement{
		ops: pick(func(m measurement) float64 { return m.ops }),
		p50: time.Duration(pick(func(m measurement) float64 { return float64(m.p50) })),
		p99: time.Duration(pick(func(m measurement) float64 { return float64(m.p99) })),
	}
}

// runProfile runs one workload against PivotDB while its CPU profile is
// taken through --debug-listen for seconds, and writes it to out, for
// finding where the time goes.
func runProfile(ctx context.Context, pivot *instance, debugAddr, spec string, rows int, out string, seconds int) error {
	name, cs, ok := strings.Cut(spec, "@")
	c, err := strconv.Atoi(cs)
	if !ok || err != nil || c < 1 {
		return fmt.Errorf("--profile wants WORKLOAD@CLIENTS, got %q", spec)
	}
	var w *workload
	for i := range workloads {
		if strings.EqualFold(workloads[i].name, name) {
			w = &workloads[i]
		}
	}
	if w == nil {
		return fmt.Errorf("--profile: no workload %q", name)
	}
	done := make(chan error, 1)
	go func() {
		m, err := runPgx(ctx, pivot, *w, c, rows, time.Duration(seconds+2)*time.Second, 1)
		if err == nil {
			progress("%s at %d clients while profiled: %.0f ops/s", w.name, c, m.ops)
		}
		done <- err
	}()
	time.Sleep(time.Second)
	// The mutex and block profiles are taken over the same seconds as the
	// CPU profile (pprof's delta form, ?seconds=): contention shows there,
	// not in CPU time, when more clients make a workload slower per op.
	base := strings.TrimSuffix(out, ".cpu.pprof")
	outs := map[string]string{
		"profile": out,
		"mutex":   base + ".mutex.pprof",
		"block":   base + ".block.pprof",
	}
	errs := make(chan error, len(outs))
	for kind, file := range outs {
		go func() {
			errs <- fetchProfile(fmt.Sprintf("http://%s/debug/pprof/%s?seconds=%d", debugAddr, kind, seconds), file)
		}()
	}
	for range outs {
		if err := <-errs; err != nil {
			return err
		}
	}
	if err := <-done; err != nil {
		return err
	}
	progress("wrote %s, %s and %s (go tool pprof -top %s %s)", out, outs["mutex"], outs["block"], "bin/pivotdb", out)
	return nil
}

// runWorkloadsBefore runs, on one server, the workloads that the full bench
// runs before the one spec names, as often and as long as the bench does:
// what they write (the UPSERT and mixed rows leave versions of kv's rows
// behind) changes what the later rows read.
func runWorkloadsBefore(ctx context.Context, in *instance, spec string, clients []int, reps, rows int, duration time.Duration, withPgbench bool) error {
	name, _, _ := strings.Cut(spec, "@")
	for _, w := range workloads {
		if strings.EqualFold(w.name, name) {
			return nil
		}
		for _, c := range clients {
			for rep := 0; rep < reps; rep++ {
				if _, err := runPgx(ctx, in, w, c, rows, duration, uint64(rep*1000+c)); err != nil {
					return err
				}
			}
		}
		if withPgbench {
			for _, c := range clients {
				for rep := 0; rep < reps; rep++ {
					if _, err := runPgbench(in, w.pgbench(in.dialect), c, rows, duration); err != nil {
						return err
					}
				}
			}
		}
		progress("ran %s on %s before the profile", w.name, in.name)
	}
	return fmt.Errorf("--profile: no workload %q", name)
}

func exitOnSignal() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	fatalf("interrupted by %v", <-sigs)
}

func parseClients(s string) ([]int, error) {
	var cs []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad --clients %q", s)
		}
		cs = append(cs, n)
	}
	return cs, nil
}

func maxOf(xs []int) int {
	m := 1
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

func humanCount(n int) string {
	switch {
	case n >= 1000000 && n%1000000 == 0:
		return fmt.Sprintf("%dM", n/1000000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return strconv.Itoa(n)
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

var (
	cleanupMu sync.Mutex
	cleanups  []func()
)

// atExit registers f to run when the benchmark ends, normally or through
// fatalf, so that no throw-away server outlives it.
func atExit(f func()) {
	cleanupMu.Lock()
	defer cleanupMu.Unlock()
	cleanups = append(cleanups, f)
}

func runCleanups() {
	cleanupMu.Lock()
	fs := cleanups
	cleanups = nil
	cleanupMu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
	runCleanups()
	os.Exit(1)
}
