package sql

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pivotdb/pivotdb/jobs"
	"github.com/pivotdb/pivotdb/meta"
	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/sql/acl"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/rowenc"
	"github.com/pivotdb/pivotdb/sql/sessionvars"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/txn"
	"github.com/pivotdb/pivotdb/storage"
)

// Options configure an Engine.
type Options struct {
	DataDir string
	// Storage, when set, is the storage engine to run on instead of
	// opening DataDir (with NoSync, Logger, DiskReserveBytes and GCTTL
	// ignored): a cluster node's engine, whose commits go through its
	// shards' Raft groups (storage.SetReplicator, cluster/shardrepl). The
	// Engine owns it from then on: Close closes it, and so does a failed
	// Open.
	Storage *storage.Engine
	// NoSync skips fsync on commit (--unsafe-no-sync): faster, and a crash
	// may lose the last acknowledged commits.
	NoSync bool
	// Now is the clock (tests inject one); nil means time.Now.
	Now func() time.Time
	// Logger receives storage log lines; nil means Pebble's default.
	Logger storage.Logger
	// Events receives the shard manager's events (repairs, reshapes); nil
	// discards them.
	Events *slog.Logger
	// Balancer configures automatic partitioning (issue 5; sql/balancer.go).
	// A zero Interval runs no balancer: shards then change only by SQL
	// statements. The server sets it from --balancer-interval.
	Balancer partition.BalancerOptions
	// TTLInterval is the time between runs of the TTL runner, which erases
	// rows expired under their table's TTL (sql/ttl_runner.go). Zero runs
	// none: expired rows then stay hidden from reads but are not erased.
	// The server sets it from --ttl-run-interval.
	TTLInterval time.Duration
	// InitialPassword is the first password of the built-in user pivotdb
	// (--initial-password / PIVOTDB_PASSWORD): set when that user has no
	// password yet, ignored once it has one.
	InitialPassword string
	// StatementTimeout and IdleInTransactionTimeout are the defaults of
	// the statement_timeout and idle_in_transaction_session_timeout
	// settings of every session (--statement-timeout and
	// --idle-in-transaction-timeout); RESET returns to them. Zero: none.
	StatementTimeout         time.Duration
	IdleInTransactionTimeout time.Duration
	// MaxQueryMemory bounds the bytes of rows one statement may hold for
	// sorting, grouping, DISTINCT and an INSERT's source (exec.Context's
	// MemLimit; --max-query-memory); beyond it the statement fails with
	// 53200. Zero: no limit.
	MaxQueryMemory int64
	// DiskReserveBytes is the free disk space commits must leave
	// (--disk-reserve; storage/diskspace.go): below it a statement's
	// commit fails with 53100. Zero: a default scaled to the disk.
	DiskReserveBytes int64
	// GCTTL is how long replaced row versions are kept (--gc-ttl;
	// storage.Options.GCTTL); 0 means storage.DefaultGCTTL.
	GCTTL time.Duration
	// CacheSizeBytes is the storage engine's block cache
	// (storage.Options.CacheSizeBytes, --cache-size); 0 means
	// storage.DefaultCacheSizeBytes.
	CacheSizeBytes int64
	// Cluster is the cluster this node serves SQL for (sys.nodes, ALTER
	// CLUSTER DECOMMISSION NODE; cluster.go); nil: a server without
	// --join.
	Cluster ClusterAdmin
	// FollowerReads configures follower reads (follower.go): the closed
	// target follower_read_timestamp() reads behind, and, for an engine
	// opened with OpenFollower, the replica's closed timestamp.
	FollowerReads *FollowerReads
}

// Engine is one PivotDB instance: a storage engine, its catalog, and the
// transaction manager shared by all sessions.
type Engine struct {
	opts    Options
	storage *storage.Engine
	// meta is where the catalog and the shard maps keep their records
	// (package meta): every DDL batch writes them through it.
	meta    *meta.Store
	catalog *catalog.Catalog
	shards  *partition.Manager
	// jobs is the registry of long statements (sys.jobs; jobs.go).
	jobs *jobs.Registry
	// dropgc keeps the rows of dropped tables and indexes for historical
	// reads until their GC jobs remove them (dropgc.go).
	dropgc *dropGC
	// copyIDs numbers COPY statements; copyProgress is the hook they
	// report to (copy.go).
	copyIDs      atomic.Uint64
	copyProgress atomic.Pointer[func(CopyProgress)]
	// ttlErased counts the rows the TTL runner erased since Open (Stats).
	ttlErased atomic.Int64
	// tableActivity counts scans and row writes per table since Open
	// (pg_stat_user_tables; table_activity.go).
	tableActivity tableActivity
	// balancer splits and merges shards in the background; nil when
	// Options.Balancer.Interval is zero.
	balancer *partition.Balancer
	// ttlRunner erases expired rows in the background; nil when
	// Options.TTLInterval is zero.
	ttlRunner *partition.TTLRunner
	txns      *txn.Manager
	// seqs holds where the sequences stand (sequences.go).
	seqs *sequenceStore
	// creating holds tables whose CREATE TABLE is committing: the shard
	// manager validates their pivots before the catalog installs them.
	creating sync.Map // table id -> *catalog.Table
	// rewrites holds the tables an ALTER TABLE rewrites now, with the keys
	// commits wrote since its snapshot (altertrack.go).
	rewrites sync.Map // table id -> *rewriteTracker
	// ddlApply is held by a transaction committing schema changes from
	// before its commit releases the schema-change lock until its catalog
	// is installed (txnddl.go); ddlHolds are the tables with uncommitted
	// schema changes.
	ddlApply sync.Mutex
	ddlHolds ddlHolds

	// settingDefaults overrides defaults of session settings (Options'
	// timeouts); read-only after Open.
	settingDefaults map[string]string

	mu       sync.Mutex
	sessions map[*Session]struct{}
	// bg tracks background work started by statements (keyfilter.go);
	// bgCtx is cancelled by Close. Guarded by mu.
	bg       sync.WaitGroup
	bgCtx    context.Context
	bgCancel context.CancelFunc
	closed   bool
	nextPID  atomic.Uint32
	// nextTemp numbers sessions for their temporary tables' names.
	nextTemp atomic.Uint64
}

// Open opens (creating if needed) the data directory.
func Open(opts Options) (*Engine, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	st := opts.Storage
	// closeOwn closes st when an open fails, if Open opened it: a storage
	// engine the caller passed (a cluster node's, which its replicas
	// write) stays the caller's. Closing it under the replicas made a
	// node whose sql.Open was fenced by a takeover panic ("pebble:
	// closed") instead of stepping down.
	closeOwn := func() {}
	if st == nil {
		closeOwn = func() { st.Close() }
		var err error
		st, err = storage.Open(opts.DataDir, storage.Options{NoSync: opts.NoSync, Logger: opts.Logger,
			DiskReserveBytes: opts.DiskReserveBytes, GCTTL: opts.GCTTL, CacheSizeBytes: opts.CacheSizeBytes,
			GCWaitsForPolicy: true})
		if err != nil {
			return nil, err
		}
	}
	ms := meta.Open(st)
	cat, err := catalog.Load(ms)
	if err != nil {
		closeOwn()
		return nil, err
	}
	e := &Engine{opts: opts, storage: st, meta: ms, catalog: cat, seqs: newSequenceStore(ms),
		sessions: map[*Session]struct{}{}, settingDefaults: map[string]string{}}
	if d := opts.StatementTimeout; d > 0 {
		e.settingDefaults["statement_timeout"] = strconv.FormatInt(d.Milliseconds(), 10)
	}
	if d := sessionvars.WorkMemDefault(opts.MaxQueryMemory); d != "" {
		e.settingDefaults["work_mem"] = d
	}
	if d := opts.IdleInTransactionTimeout; d > 0 {
		e.settingDefaults["idle_in_transaction_session_timeout"] = strconv.FormatInt(d.Milliseconds(), 10)
	}
	if d := opts.FollowerReads.maxStalenessDefault(); d != "" {
		// Shown here too; only a follower engine's reads fall back.
		e.settingDefaults["follower_read_max_staleness"] = d
	}
	e.shards, err = partition.Load(st, partition.Options{KeyColumns: e.keyColumns, Logger: opts.Events, Meta: ms})
	if err != nil {
		closeOwn()
		return nil, err
	}
	// Jobs that were running when the server stopped are marked failed.
	if e.jobs, err = jobs.Open(ms, opts.Now, opts.Events); err != nil {
		closeOwn()
		return nil, err
	}
	if opts.Cluster != nil {
		opts.Cluster.AttachJobs(e.jobs)
	}
	// GC jobs of dropped tables resume (before dropOrphans, which leaves
	// their rows to them).
	e.dropgc = newDropGC(e)
	if err := e.dropgc.resume(); err != nil {
		closeOwn()
		return nil, err
	}
	// Tables created before shard maps existed get a one-shard map.
	for _, db := range cat.Snapshot().Databases() {
		for _, t := range cat.Snapshot().Tables(db.ID) {
			if err := e.shards.EnsureTable(t.ID); err != nil {
				closeOwn()
				return nil, err
			}
		}
	}
	if err := e.setInitialPassword(opts.InitialPassword); err != nil {
		closeOwn()
		return nil, err
	}
	if err := e.dropLeftoverTempTables(); err != nil {
		closeOwn()
		return nil, err
	}
	if err := e.dropOrphans(); err != nil {
		closeOwn()
		return nil, err
	}
	// The disk holds the catalog's newest version only: its generations
	// are history from now on (AS OF SYSTEM TIME binds against them).
	now, err := st.Clock().Now()
	if err != nil {
		closeOwn()
		return nil, err
	}
	cat.SetHistoryStart(now)
	e.syncKeyFilters()
	e.txns = txn.NewManager(st, e.shards)
	// Lock records of transactions that were open when the process
	// ended are garbage now (issue 16 item 9: locks live in the data).
	locks, records, err := e.txns.Recover()
	if err != nil {
		closeOwn()
		return nil, err
	}
	if (locks > 0 || records > 0) && opts.Events != nil {
		opts.Events.Info("removed the locks of transactions open at the last stop", "lock_records", locks, "txn_records", records)
	}
	e.txns.SetSchemaCheck(e.checkSchemaVersions)
	e.startBalancer()
	e.startTTL()
	e.startGC()
	e.dropgc.run()
	return e, nil
}

// keyColumns tells the shard manager where each key column of a table's
// key ends (partition.KeyColumnsFunc): pivots must be whole-column prefixes.
func (e *Engine) keyColumns(tableID uint64, key []byte, ends []int) ([]int, error) {
	t, ok := e.catalog.Snapshot().TableByID(tableID)
	if !ok {
		v, pending := e.creating.Load(tableID)
		if !pending {
			return nil, fmt.Errorf("sql: key of unknown table %d", tableID)
		}
		t = v.(*catalog.Table)
	}
	prefix := len(storage.TablePrefix(tableID))
	if len(key) < prefix {
		return nil, fmt.Errorf("sql: key shorter than the table prefix")
	}
	b := key[prefix:]
	for _, k := range t.PrimaryKey {
		if len(b) == 0 {
			break
		}
		_, rest, err := rowenc.DecodeKeyValue(b, t.Columns[k].Type)
		if err != nil {
			return nil, err
		}
		b = rest
		ends = append(ends, len(key)-len(b))
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("sql: %d trailing bytes after the key columns", len(b))
	}
	return ends, nil
}

// Close releases the storage engine. Open sessions are closed (their open
// transactions roll back) first.
func (e *Engine) Close() error {
	e.stopTTL()
	e.stopBalancer()
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	sessions := make([]*Session, 0, len(e.sessions))
	for s := range e.sessions {
		sessions = append(sessions, s)
	}
	e.mu.Unlock()
	for _, s := range sessions {
		s.Close()
	}
	e.stopBackground()
	if e.follower() {
		return nil // the node's engine, which its replicas write (follower.go)
	}
	e.dropgc.close()
	return e.storage.Close()
}

// Storage exposes the storage engine (benchmarks, tests).
func (e *Engine) Storage() *storage.Engine { return e.storage }

// NewSession opens a session on database for user: a role that exists, may
// log in (else FATAL 28000) and holds CONNECT on the database (else FATAL
// 42501). A missing database gives a FATAL 3D000 error.
func (e *Engine) NewSession(database, user string) (*Session, error) {
	snap := e.catalog.Snapshot()
	u, ok := snap.User(user)
	switch {
	case !ok:
		return nil, &sqlerr.Error{Code: sqlerr.InvalidAuthorizationSpec,
			Message: fmt.Sprintf("role %q does not exist", user), Fatal: true}
	case u.NoLogin:
		return nil, &sqlerr.Error{Code: sqlerr.InvalidAuthorizationSpec,
			Message: fmt.Sprintf("role %q is not permitted to log in", user), Fatal: true}
	}
	db, ok := snap.Database(database)
	if !ok {
		return nil, &sqlerr.Error{Code: sqlerr.UndefinedDatabase,
			Message: "database \"" + database + "\" does not exist", Fatal: true}
	}
	if !snap.Access(user).Has(&db.Owned, acl.Database, acl.Connect) {
		return nil, &sqlerr.Error{Code: sqlerr.InsufficientPrivilege,
			Message: fmt.Sprintf("permission denied for database %q", database),
			Detail:  "User does not have CONNECT privilege.", Fatal: true}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, &sqlerr.Error{Code: sqlerr.AdminShutdown, Message: "the database system is shutting down", Fatal: true}
	}
	s := newSession(e, db, user)
	e.sessions[s] = struct{}{}
	return s, nil
}

func (e *Engine) removeSession(s *Session) {
	e.mu.Lock()
	delete(e.sessions, s)
	e.mu.Unlock()
}

// databaseInUse reports whether a session other than self is connected to db.
func (e *Engine) databaseInUse(dbID uint64, self *Session) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for s := range e.sessions {
		if s != self && s.db.ID == dbID {
			n++
		}
	}
	return n
}

func lower(s string) string { return strings.ToLower(s) }
