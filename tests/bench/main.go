package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

func main() {
	bin := flag.String("bin", "bin/pivotdb", "pivotdb binary")
	duration := flag.Duration("duration", 3*time.Second, "time per workload and client count")
	clientsFlag := flag.String("clients", "1,4,16", "client counts")
	rows := flag.Int("rows", 100000, "rows loaded for point reads and the range scan")
	noSync := flag.Bool("unsafe-no-sync", false, "run the server without fsync")
	flag.Parse()

	var clients []int
	for _, s := range strings.Split(*clientsFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fatalf("bad --clients %q", *clientsFlag)
		}
		clients = append(clients, n)
	}

	dir, err := os.MkdirTemp("", "pivotdb-bench")
	if err != nil {
		fatalf("%v", err)
	}
	defer os.RemoveAll(dir)
	addr := freeAddr()
	args := []string{"serve", "--data-dir", dir, "--listen", addr}
	if *noSync {
		args = append(args, "--unsafe-no-sync")
	}
	srv := exec.Command(*bin, args...)
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		fatalf("starting %s: %v", *bin, err)
	}
	defer func() {
		srv.Process.Signal(syscall.SIGTERM)
		srv.Wait()
	}()
	waitListening(addr)

	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig("postgres://pivotdb@" + addr + "/pivotdb?sslmode=disable")
	if err != nil {
		fatalf("%v", err)
	}
	cfg.MaxConns = int32(maxOf(clients))
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheStatement
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		fatalf("%v", err)
	}
	defer pool.Close()

	load(ctx, pool, *rows)

	fmt.Printf("PivotDB over the wire (pgx, extended protocol), %d rows, %v per run, sync=%v\n\n", *rows, *duration, !*noSync)
	fmt.Printf("%-26s %8s %14s %10s %10s\n", "workload", "clients", "rows/s", "p50", "p99")
	n := *rows
	workloads := []struct {
		name string
		rows int // rows per operation
		op   func(ctx context.Context, c *pgxpool.Conn, r *rand.Rand) error
	}{
		{"point SELECT by key", 1, func(ctx context.Context, c *pgxpool.Conn, r *rand.Rand) error {
			var v string
			return c.QueryRow(ctx, "SELECT v FROM bench WHERE k = $1", r.IntN(n)).Scan(&v)
		}},
		{"single-row UPSERT", 1, func(ctx context.Context, c *pgxpool.Conn, r *rand.Rand) error {
			_, err := c.Exec(ctx, "UPSERT INTO bench (k, v) VALUES ($1, $2)", r.IntN(n), "updated-value")
			return err
		}},
		{"range scan 100k rows", n, func(ctx context.Context, c *pgxpool.Conn, r *rand.Rand) error {
			rs, err := c.Query(ctx, "SELECT k, v FROM bench WHERE k >= $1", 0)
			if err != nil {
				return err
			}
			got := 0
			for rs.Next() {
				got++
			}
			rs.Close()
			if got != n {
				return fmt.Errorf("range scan returned %d rows, want %d", got, n)
			}
			return rs.Err()
		}},
	}
	for _, w := range workloads {
		for _, c := range clients {
			res := run(ctx, pool, c, *duration, w.op)
			fmt.Printf("%-26s %8d %14.0f %10s %10s\n", w.name, c, res.ops*float64(w.rows), res.p50.Round(time.Microsecond), res.p99.Round(time.Microsecond))
		}
	}
}

type result struct {
	ops      float64 // operations per second
	p50, p99 time.Duration
}

func run(ctx context.Context, pool *pgxpool.Pool, clients int, d time.Duration,
	op func(context.Context, *pgxpool.Conn, *rand.Rand) error) result {
	var count atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, seed*7+1))
			conn, err := pool.Acquire(ctx)
			if err != nil {
				fatalf("%v", err)
			}
			defer conn.Release()
			var local []time.Duration
			for time.Now().Before(deadline) {
				start := time.Now()
				if err := op(ctx, conn, r); err != nil {
					fatalf("%v", err)
				}
				local = append(local, time.Since(start))
				count.Add(1)
			}
			mu.Lock()
			lat = append(lat, local...)
			mu.Unlock()
		}(uint64(i + 1))
	}
	wg.Wait()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	res := result{ops: float64(count.Load()) / d.Seconds()}
	if len(lat) > 0 {
		res.p50 = lat[len(lat)/2]
		res.p99 = lat[len(lat)*99/100]
	}
	return res
}

func load(ctx context.Context, pool *pgxpool.Pool, n int) {
	if _, err := pool.Exec(ctx, "CREATE TABLE bench (k Int64, v Utf8, PRIMARY KEY (k))"); err != nil {
		fatalf("%v", err)
	}
	const batch = 1000
	for start := 0; start < n; start += batch {
		var sb strings.Builder
		sb.WriteString("INSERT INTO bench (k, v) VALUES ")
		for k := start; k < start+batch && k < n; k++ {
			if k > start {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "(%d, 'value-%d')", k, k)
		}
		if _, err := pool.Exec(ctx, sb.String()); err != nil {
			fatalf("load: %v", err)
		}
	}
}

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatalf("%v", err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func waitListening(addr string) {
	for i := 0; i < 300; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	fatalf("server did not start on %s", addr)
}

func maxOf(xs []int) int {
	m := 1
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
	os.Exit(1)
}
