package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pivotdb/pivotdb/activity"
	"github.com/pivotdb/pivotdb/cluster/node"
	"github.com/pivotdb/pivotdb/cluster/shardrepl"
	"github.com/pivotdb/pivotdb/console"
	"github.com/pivotdb/pivotdb/metrics"
	"github.com/pivotdb/pivotdb/panics"
	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/server"
	"github.com/pivotdb/pivotdb/sql"
	"github.com/pivotdb/pivotdb/sql/memory"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/tests/logictest"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "serve":
		return serve(args[1:], stderr)
	case "logictest":
		return logictest.Main(args[1:], stdout, stderr)
	case "node":
		return nodeCommand(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "pivotdb: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage:
  pivotdb serve [--data-dir DIR] [--listen HOST:PORT] [--max-message-size BYTES] [--unsafe-no-sync]
                [--balancer-interval DURATION] [--load-split-ops N] [--load-merge-quiet DURATION]
                [--ttl-run-interval DURATION]
                [--tls-cert FILE --tls-key FILE [--tls-required]] [--auth trust|scram|password] [--initial-password PASSWORD]
                [--startup-timeout DURATION] [--auth-failure-delay DURATION] [--auth-failure-max-delay DURATION]
                [--max-connections N] [--statement-timeout DURATION] [--idle-in-transaction-timeout DURATION]
                [--max-memory BYTES] [--max-query-memory BYTES] [--disk-reserve BYTES] [--cache-size BYTES] [--gc-ttl DURATION]
                [--http-listen HOST:PORT [--console-sample-interval DURATION]] [--slow-query-threshold DURATION] [--log-level debug|info|warn|error]
                [--one-node-cluster [--cluster-listen HOST:PORT] [--raft-listen HOST:PORT]]
                [--join HOST:PORT,... --cluster-listen HOST:PORT --raft-listen HOST:PORT [--cluster-start-timeout DURATION]
                 [--dead-node-timeout DURATION] [--rebalance=false] [--locality KEY=VALUE,...]
                 [--snapshot-rate MB_PER_SECOND] [--snapshot-rate-elastic] [--max-offset DURATION] [--closed-timestamp-target DURATION]
                 [--follower-read-max-staleness DURATION]
                 [--shard-group-per-shard=false]]
  pivotdb node decommission NODE_ID [--host HOST:PORT] [--user NAME]
  pivotdb node recommission NODE_ID [--host HOST:PORT] [--user NAME]
  pivotdb node status [--host HOST:PORT] [--user NAME]
  pivotdb logictest --addr HOST:PORT [-v] [--known-failures FILE] FILE...
`)
}

func serve(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", "./data", "data directory")
	listen := fs.String("listen", server.DefaultListen, "address to listen on")
	maxMsg := fs.Int("max-message-size", server.DefaultMaxMessageSize, "largest protocol message accepted, in bytes")
	noSync := fs.Bool("unsafe-no-sync", false, "do not fsync commits (a crash may lose acknowledged writes)")
	shutdownGrace := fs.Duration("shutdown-timeout", 30*time.Second, "how long SIGINT/SIGTERM waits for running statements")
	balancerInterval := fs.Duration("balancer-interval", partition.DefaultBalancerInterval,
		"how often automatic partitioning checks shard sizes and loads (0 disables it)")
	loadSplitOps := fs.Float64("load-split-ops", partition.DefaultLoadSplitOpsPerSec,
		"operations per second above which a shard of a table with AUTO_PARTITIONING_BY_LOAD splits")
	loadMergeQuiet := fs.Duration("load-merge-quiet", partition.DefaultLoadMergeQuiet,
		"how long shards made by a split by load must stay quiet before they may merge back")
	ttlInterval := fs.Duration("ttl-run-interval", partition.DefaultTTLInterval,
		"how often the TTL runner erases expired rows of tables with a TTL (0 disables erasing; reads hide expired rows regardless)")
	tlsCert := fs.String("tls-cert", "", "PEM certificate (chain) for TLS; with --tls-key, SSLRequest is answered 'S'")
	tlsKey := fs.String("tls-key", "", "PEM private key of --tls-cert")
	tlsRequired := fs.Bool("tls-required", false, "refuse clients that do not use TLS (FATAL 28000); needs --tls-cert and --tls-key")
	startupTimeout := fs.Duration("startup-timeout", server.DefaultStartupTimeout,
		"how long a new connection may take to finish its startup and authentication before it is dropped")
	authDelay := fs.Duration("auth-failure-delay", server.DefaultAuthFailureDelay,
		"wait before answering a failed login; doubles with each further failure from the same client address (0: no delay)")
	authMaxDelay := fs.Duration("auth-failure-max-delay", server.DefaultAuthFailureMaxDelay,
		"the longest wait before answering a failed login")
	authName := fs.String("auth", "trust", "client authentication: trust (loopback addresses only), scram (SCRAM-SHA-256 passwords) "+
		"or password (passwords sent in the clear, for clients without SCRAM; use TLS)")
	initialPassword := fs.String("initial-password", "",
		"first password of the built-in user pivotdb, set only while it has none (default: $PIVOTDB_PASSWORD)")
	maxConns := fs.Int("max-connections", 100, "connections served at once; more get FATAL 53300 (0: unlimited)")
	stmtTimeout := fs.Duration("statement-timeout", 0, "default statement_timeout of every session (0: none)")
	idleTxTimeout := fs.Duration("idle-in-transaction-timeout", 0,
		"default idle_in_transaction_session_timeout: sessions idle that long inside a transaction are ended (0: never)")
	maxMem := fs.Int64("max-memory", defaultMaxMemory(),
		"bytes all statements together may reserve (messages, parsing, IN lists, values, held and sent rows); more fails with 53200 (default: a quarter of RAM; 0: unlimited)")
	maxQueryMem := fs.Int64("max-query-memory", 1<<30,
		"bytes one statement may reserve of --max-memory (its message, parsing, IN lists, values, rows held for sorting, grouping, DISTINCT, joins or an INSERT's source, rows sent); more fails with 53200 (0: unlimited)")
	diskReserve := fs.Int64("disk-reserve", 0,
		"free disk space writes must leave in the data directory's filesystem; below it they fail with 53100 until space is freed "+
			"(0: 1/16 of the disk, at least 8 MiB and at most 1 GiB)")
	cacheSize := fs.Int64("cache-size", 0,
		"bytes of the storage engine's block cache of uncompressed table blocks (beside it, room for two memtables), taken out of --max-memory; "+
			"reads of data that does not fit decompress its blocks from the files again "+
			"(default: a quarter of --max-memory, or 64 MiB when --max-memory is 0)")
	gcTTL := fs.Duration("gc-ttl", storage.DefaultGCTTL,
		"how long row versions replaced or deleted by later commits are kept before garbage collection removes them")
	debugListen := fs.String("debug-listen", "", "serve Go's pprof profiles at http://HOST:PORT/debug/pprof/ (loopback only; off when empty)")
	httpListen := fs.String("http-listen", "",
		"serve Prometheus metrics at /metrics, a health check at /health and the web console at / on HOST:PORT (loopback only; off when empty)")
	consoleSample := fs.Duration("console-sample-interval", console.DefaultSampleInterval,
		"how often the console samples shards, splits and merges for its chart and rates")
	slowQuery := fs.Duration("slow-query-threshold", 0, "log statements that run at least this long, with their text, at level WARN (0: none)")
	logLevel := fs.String("log-level", "info", "least severe log messages written: debug, info, warn or error")
	cluster := addClusterFlags(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := cluster.check(fs); err != nil {
		return badServeFlag(stderr, "%v", err)
	}
	if *loadMergeQuiet <= 0 {
		return badServeFlag(stderr, "--load-merge-quiet must be positive")
	}
	if *ttlInterval < 0 {
		return badServeFlag(stderr, "--ttl-run-interval must not be negative")
	}
	if fs.NArg() > 0 {
		return badServeFlag(stderr, "unexpected argument %q", fs.Arg(0))
	}
	if *startupTimeout <= 0 || *authMaxDelay <= 0 || *authDelay < 0 {
		return badServeFlag(stderr, "--startup-timeout and --auth-failure-max-delay must be positive, --auth-failure-delay not negative")
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return badServeFlag(stderr, "--log-level %q: want debug, info, warn or error", *logLevel)
	}
	if *consoleSample <= 0 {
		return badServeFlag(stderr, "--console-sample-interval must be positive")
	}
	if *slowQuery < 0 {
		return badServeFlag(stderr, "--slow-query-threshold must not be negative")
	}
	if *httpListen != "" {
		if err := console.CheckAddr(*httpListen); err != nil {
			return badServeFlag(stderr, "%v", err)
		}
	}
	if *gcTTL <= 0 {
		return badServeFlag(stderr, "--gc-ttl must be positive")
	}
	if *maxConns < 0 || *stmtTimeout < 0 || *idleTxTimeout < 0 || *maxQueryMem < 0 || *maxMem < 0 || *diskReserve < 0 {
		return badServeFlag(stderr, "--max-connections, --max-memory, --max-query-memory, --disk-reserve and the timeouts must not be negative")
	}
	if *cacheSize < 0 {
		return badServeFlag(stderr, "--cache-size must not be negative")
	}
	// The block cache is part of --max-memory; statements get the rest.
	blockCache, statementMem, err := splitMemory(*maxMem, *cacheSize)
	if err != nil {
		return badServeFlag(stderr, "%v", err)
	}
	setMemoryLimit(statementMem)
	setGCPercent()
	authMethod, err := server.ParseAuthMethod(*authName)
	if err != nil {
		return badServeFlag(stderr, "--auth: %v", err)
	}
	if *initialPassword == "" {
		*initialPassword = os.Getenv("PIVOTDB_PASSWORD")
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	panics.SetLogger(log)

	if authMethod == server.AuthTrust {
		if err := checkTrustedListen(*listen); err != nil {
			log.Error("refusing to start", "err", err)
			return 1
		}
	}
	tlsConfig, err := loadTLS(*tlsCert, *tlsKey)
	if err != nil {
		log.Error("refusing to start", "err", err)
		return 1
	}
	if *tlsRequired && tlsConfig == nil {
		log.Error("refusing to start: --tls-required needs --tls-cert and --tls-key")
		return 1
	}
	if *authDelay == 0 {
		*authDelay = -1 // server.Config: negative turns the delay off
	}

	if *debugListen != "" {
		if err := serveDebug(*debugListen, log); err != nil {
			log.Error("cannot serve profiles", "addr", *debugListen, "err", err)
			return 1
		}
	}

	opts := sql.Options{DataDir: *dataDir, NoSync: *noSync, Logger: storage.SlogLogger{L: log}, Events: log,
		Balancer: partition.BalancerOptions{Interval: *balancerInterval, LoadSplitOpsPerSec: *loadSplitOps,
			LoadMergeQuiet: *loadMergeQuiet, Logger: log},
		TTLInterval: *ttlInterval, InitialPassword: *initialPassword,
		StatementTimeout: *stmtTimeout, IdleInTransactionTimeout: *idleTxTimeout, MaxQueryMemory: *maxQueryMem,
		DiskReserveBytes: *diskReserve, GCTTL: *gcTTL, CacheSizeBytes: blockCache}
	// SIGINT and SIGTERM are caught from here on, before the data
	// directory opens: one that arrives while the server starts is handled
	// once it serves (a clean shutdown), instead of killing the process
	// with writes still in Pebble's buffers (CI: TestLockRecordsAfterKill
	// stopped a server right after "ready" and found the lock records its
	// start had removed). With --join, a signal while the node waits for a
	// quorum stops the start and exits cleanly.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	var eng *sql.Engine
	var cl *shardrepl.Cluster // with --join (cluster.go)
	if cluster.enabled() {
		// The SQL port is taken before the start, which may wait a while
		// for a quorum: connections meanwhile wait in its backlog.
		sqlLn, err := net.Listen("tcp", *listen)
		if err != nil {
			log.Error("cannot listen", "addr", *listen, "err", err)
			return 1
		}
		startCtx, cancelStart := context.WithCancel(context.Background())
		var interrupted atomic.Bool
		watching := make(chan struct{})
		go func() {
			defer close(watching)
			select {
			case <-sigs:
				interrupted.Store(true)
				cancelStart()
			case <-startCtx.Done():
			}
		}()
		if *noSync {
			log.Warn("--unsafe-no-sync: neither the Raft log nor the storage engine fsyncs; " +
				"if a machine (not only the process) stops, acknowledged commits may be lost and the cluster's Raft groups " +
				"may be left inconsistent; for tests and benchmarks only")
		}
		opts.FollowerReads = &sql.FollowerReads{MaxStaleness: followerMaxStalenessOption(*cluster.followerMaxStaleness)}
		cl, err = startCluster(startCtx, cluster, *dataDir, *listen,
			storage.Options{Logger: opts.Logger, DiskReserveBytes: *diskReserve, GCTTL: *gcTTL, NoSync: *noSync,
				CacheSizeBytes: blockCache, GCWaitsForPolicy: true}, level <= slog.LevelDebug, log)
		cancelStart()
		<-watching
		if interrupted.Load() {
			sqlLn.Close()
			if err == nil {
				err = closeCluster(cl, nil)
			}
			log.Info("stopped by a signal while starting", "err", err)
			return 0
		}
		if err != nil {
			sqlLn.Close()
			log.Error("cannot start the cluster node", "dir", *dataDir, "err", err)
			return 1
		}
		mem := memory.NewMonitor("--max-memory less the block cache", statementMem)
		sessions := activity.NewRegistry()
		return serveCluster(cl, sqlLn, sigs, server.Config{Listen: *listen, MaxMessageSize: *maxMsg, Logger: log,
			TLS: tlsConfig, TLSRequired: *tlsRequired, Auth: authMethod, MaxConnections: *maxConns,
			StartupTimeout: *startupTimeout, AuthFailureDelay: *authDelay, AuthFailureMaxDelay: *authMaxDelay,
			Memory: mem, MaxStatementMemory: *maxQueryMem, Activity: sessions, SlowQueryThreshold: *slowQuery}, opts, *shutdownGrace,
			clusterHTTPConfig{addr: *httpListen, sample: *consoleSample, mem: mem, sessions: sessions}, log)
	} else {
		// The engine without Raft on a data directory a cluster node used
		// would miss the commits its Raft logs hold and make writes its
		// replicas never see.
		if used, err := node.HasIdentity(filepath.Join(*dataDir, "cluster")); err != nil || used {
			log.Error("refusing to start: the engine without Raft on a data directory a cluster node used; "+
				"start it with --"+oneNodeClusterFlag+" (or --join)", "dir", *dataDir, "err", err)
			return 1
		}
		eng, err = sql.Open(opts)
	}
	if err != nil {
		log.Error("cannot open data directory", "dir", *dataDir, "err", err)
		return 1
	}
	if authMethod.NeedsPasswords() && !eng.HasPasswords() {
		log.Error("refusing to start: --auth " + authMethod.String() + " but no user has a password; " +
			"give the built-in user pivotdb one with --initial-password or PIVOTDB_PASSWORD")
		closeEngine(cl, eng)
		return 1
	}
	mem := memory.NewMonitor("--max-memory less the block cache", statementMem)
	sessions := activity.NewRegistry()
	mets := metrics.New(metrics.Sources{Engine: eng, Memory: mem, Log: log})
	srv := server.New(server.Config{Listen: *listen, MaxMessageSize: *maxMsg, Logger: log,
		TLS: tlsConfig, TLSRequired: *tlsRequired, Auth: authMethod, MaxConnections: *maxConns,
		StartupTimeout: *startupTimeout, AuthFailureDelay: *authDelay, AuthFailureMaxDelay: *authMaxDelay,
		Memory: mem, MaxStatementMemory: *maxQueryMem,
		Activity: sessions, Observer: mets, SlowQueryThreshold: *slowQuery}, server.FromSQL(eng))
	if err := srv.Listen(); err != nil {
		log.Error("cannot listen", "addr", *listen, "err", err)
		closeEngine(cl, eng)
		return 1
	}
	var hs *console.Server
	if *httpListen != "" {
		var err error
		hs, err = console.Start(console.Config{Addr: *httpListen, Engine: eng, Metrics: mets, Activity: sessions,
			ShuttingDown: srv.ShuttingDown, SampleInterval: *consoleSample, Log: log})
		if err != nil {
			log.Error("cannot listen", "http_addr", *httpListen, "err", err)
			closeEngine(cl, eng)
			return 1
		}
		log.Info("serving metrics, health and the console", "url", "http://"+hs.Addr().String()+"/")
	}
	log.Info("PivotDB is ready", "addr", srv.Addr().String(), "data_dir", *dataDir,
		"auth", authMethod.String(), "tls", tlsConfig != nil)

	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background()) }()

	code := 0
	select {
	case sig := <-sigs:
		log.Info("shutting down", "signal", sig.String())
		ctx, cancel := context.WithTimeout(context.Background(), *shutdownGrace)
		go func() {
			// A second signal stops waiting for running statements.
			<-sigs
			cancel()
		}()
		if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
			log.Warn("shutdown", "err", err)
		}
		cancel()
		<-done
	case err := <-done:
		if err != nil && !errors.Is(err, server.ErrServerClosed) {
			log.Error("server stopped", "err", err)
			code = 1
		}
	}
	if hs != nil {
		// Before the engine: the console's sampler runs statements on it.
		hs.Close()
	}
	if err := closeEngine(cl, eng); err != nil {
		log.Error("closing storage", "err", err)
		return 1
	}
	log.Info("stopped cleanly")
	return code
}

// badServeFlag reports a command-line mistake of pivotdb serve and gives
// the exit status for one (2, as flag's own parse errors).
func badServeFlag(stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "pivotdb serve: %s\n", fmt.Sprintf(format, args...))
	return 2
}

// loadTLS reads the certificate and key of --tls-cert/--tls-key; nil
// without either. One without the other is an error rather than a server
// that silently runs without TLS.
func loadTLS(certFile, keyFile string) (*tls.Config, error) {
	if certFile == "" && keyFile == "" {
		return nil, nil
	}
	if certFile == "" || keyFile == "" {
		return nil, errors.New("--tls-cert and --tls-key must be given together")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("loading TLS certificate: %w", err)
	}
	// TLS 1.2 is the oldest version PostgreSQL 15 accepts by default
	// (ssl_min_protocol_version).
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// checkTrustedListen refuses trust authentication on a non-loopback address
// (design.md §2): without passwords, only local clients may connect.
func checkTrustedListen(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("bad --listen address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("listening on %q needs password authentication: use --auth scram (or --auth password), or listen on a loopback address", addr)
	}
	return nil
}
