package sql

import (
	"errors"
	"fmt"
	"time"

	"github.com/pivotdb/pivotdb/jobs"
	"github.com/pivotdb/pivotdb/meta"
	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/txn"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// Follower reads (issue 18 item 6; design §12).
//
// The node that serves SQL publishes closed timestamps through the shard
// group's log (cluster/shardrepl/closedts.go): no commit will ever be at or
// below one. A replica that applied a closed timestamp C holds every
// commit at or below C, so a read at a timestamp ≤ C is complete on any
// node. Two things use that:
//
//   - The stale read-only mode (YDB's StaleReadOnly), the session setting
//     stale_read_only: the session is read-only (writes: 25006), and every
//     statement or transaction without an AS OF SYSTEM TIME of its own
//     reads at follower_read_timestamp(): the clock's now less the closed
//     target plus a margin (FollowerReads.Offset; 4.8 s for the default
//     3 s target, CockroachDB's figure). TTL is judged at that time;
//     now() stays the clock's. The schema is the catalog's of that time
//     (its history on disk).
//   - An engine that serves, given the node's closed timestamp
//     (FollowerReads.LocalClosed): a statement or block AS OF SYSTEM
//     TIME at or below it (follower_read_timestamp(), normally) reads
//     without the read lease (closedBindSnapshot, waitReadable), so it
//     answers while the serving node cannot reach a quorum; it is still
//     the serving node's own replica, in the session's own connection
//     (an ordinary session is forwarded to the serving node as a whole).
//   - A follower engine (FollowerReads.Closed set, OpenFollower): a
//     read-only engine over a node's replica that does not serve. Every
//     session is in the stale read-only mode (SET stale_read_only = off is
//     refused) and every read timestamp, follower_read_timestamp() or an
//     explicit AS OF SYSTEM TIME, must be at or below the replica's closed
//     timestamp: a later one waits up to FollowerReads.Wait for it, then
//     fails with 55000. With the serving node gone the closed timestamp
//     stops. A statement without an AS OF SYSTEM TIME of its own then
//     reads at the replica's closed timestamp, the newest time it is
//     complete at, while that is at most the session's
//     follower_read_max_staleness old (15 s unless serve
//     --follower-read-max-staleness, FollowerReads.MaxStaleness, says
//     otherwise; 0: no fallback) (CockroachDB's bounded-staleness rule,
//     with_max_staleness: read the nearest replica's newest closed time,
//     error past the bound), and fails with 55000 past it; so stale reads keep answering through a
//     takeover (a new serving node closes timestamps again) and stop once
//     no node has served for the bound. An explicit AS OF SYSTEM TIME
//     keeps its time: at or below the closed timestamp it answers, above
//     it waits and fails as said. Open writes nothing (storage.Engine.SetCommitRefusal
//     guards the store), runs no background work, and binds every
//     statement against the catalog's history on disk at its read
//     timestamp, prepares it (the extended protocol's Parse) against the
//     history at the time it will likely read at
//     (followerPrepareCatalog), and reads the shard map of a table it
//     has none of from the store (followerTableCheck): the replica keeps
//     applying the serving node's commits under the engine, so a session
//     reads the tables created after its engine opened, or created before
//     but applied by the replica only after. The catalog in memory is the
//     one at open: its users, databases and settings decide the
//     session's start.

// FollowerReads configures follower reads (Options.FollowerReads).
type FollowerReads struct {
	// Target is the cluster's closed-timestamp target (shardrepl's
	// ClosedTarget); 0: 3 s.
	Target time.Duration
	// Closed, when set, makes the engine a follower engine: it returns
	// the replica's closed timestamp (ok false: none yet).
	Closed func() (hlc.Timestamp, bool)
	// Wait bounds how long a read waits for the closed timestamp to
	// reach its timestamp; 0: defaultFollowerWait.
	Wait time.Duration
	// LocalClosed, on an engine that serves (Closed nil), returns the
	// closed timestamp this node's replicas applied (ok false: none
	// yet): a read AS OF SYSTEM TIME at or below it is complete in the
	// local engine and does not wait for the serving node's read lease
	// (waitReadable), so follower_read_timestamp() and older reads answer
	// while the node cannot reach a quorum.
	LocalClosed func() (hlc.Timestamp, bool)
	// MaxStaleness is the default of the session setting
	// follower_read_max_staleness (serve --follower-read-max-staleness):
	// how old the closed timestamp a follower engine's statement falls
	// back to may be when follower_read_timestamp() is not closed yet (the
	// serving node stopped). 0: sessionvars.DefaultFollowerReadMaxStaleness
	// (15 s); negative: no fallback (the setting's 0).
	MaxStaleness time.Duration
}

const (
	defaultClosedTarget = 3 * time.Second
	defaultFollowerWait = time.Second
)

// maxStalenessDefault is the engine's default of
// follower_read_max_staleness, in the setting's milliseconds, or "" for
// the built-in one.
func (f *FollowerReads) maxStalenessDefault() string {
	switch {
	case f == nil || f.MaxStaleness == 0:
		return ""
	case f.MaxStaleness < 0:
		return "0"
	}
	return fmt.Sprint(f.MaxStaleness.Milliseconds())
}

// Offset is how far back follower_read_timestamp() reads: the target and
// three fifths of it (CockroachDB's 4.8 s for its 3 s default), so that
// the closed timestamp, published every 200 ms, is normally past it.
func (f *FollowerReads) Offset() time.Duration {
	t := defaultClosedTarget
	if f != nil && f.Target > 0 {
		t = f.Target
	}
	return t + t*3/5
}

func (e *Engine) follower() bool {
	return e.opts.FollowerReads != nil && e.opts.FollowerReads.Closed != nil
}

// OpenFollower opens a follower engine (opts.FollowerReads.Closed set)
// over opts.Storage, a cluster node's engine that its replicas write: it
// reads the catalog, shard maps and jobs and writes nothing. Close leaves
// the storage engine open (it is the node's).
func OpenFollower(opts Options) (*Engine, error) {
	if !(&Engine{opts: opts}).follower() || opts.Storage == nil {
		return nil, errors.New("sql: a follower engine needs Options.Storage and FollowerReads.Closed")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	st := opts.Storage
	st.SetCommitRefusal(sqlerr.New(sqlerr.ReadOnlySQLTransaction,
		"cannot write on a node that does not serve SQL (a follower-read session is read-only)"))
	ms := meta.Open(st)
	cat, err := catalog.Load(ms)
	if err != nil {
		return nil, err
	}
	e := &Engine{opts: opts, storage: st, meta: ms, catalog: cat, seqs: newSequenceStore(ms),
		sessions: map[*Session]struct{}{}, settingDefaults: map[string]string{"stale_read_only": "on"}}
	if d := opts.StatementTimeout; d > 0 {
		e.settingDefaults["statement_timeout"] = fmt.Sprint(d.Milliseconds())
	}
	if d := opts.FollowerReads.maxStalenessDefault(); d != "" {
		e.settingDefaults["follower_read_max_staleness"] = d
	}
	if e.shards, err = partition.Load(st, partition.Options{KeyColumns: e.keyColumns, Logger: opts.Events, Meta: ms, ReadOnly: true}); err != nil {
		return nil, err
	}
	if e.jobs, err = jobs.Load(ms, opts.Now, opts.Events); err != nil {
		return nil, err
	}
	// Every read binds against the history on disk at its timestamp:
	// the generation in memory is the newest at open, and schema changes
	// the replica applies later do not reach it.
	cat.SetHistoryStart(hlc.MaxTimestamp)
	e.txns = txn.NewManager(st, e.shards)
	e.txns.SetSchemaCheck(e.checkSchemaVersions)
	return e, nil
}

// staleReadOnly reports whether the session is in the stale read-only
// mode.
func (s *Session) staleReadOnly() bool {
	return s.e.follower() || s.vars.Enabled("stale_read_only")
}

// staleSetting refuses changing the stale read-only mode inside a block,
// and leaving it on a follower engine.
func (s *Session) staleSetting(name, value string) error {
	if name == "stale_read_only" && s.vars.InTxn() {
		// A block reads at one kind of timestamp from start to end.
		return sqlerr.New(sqlerr.ActiveSQLTransaction, "stale_read_only cannot be changed inside a transaction block")
	}
	if s.e.follower() && name == "stale_read_only" && value != "on" {
		return sqlerr.New(sqlerr.FeatureNotSupported,
			"stale_read_only cannot be turned off in a follower-read session: this node does not serve SQL")
	}
	return nil
}

// staleReadTimestamp is the read timestamp of a statement in the stale
// read-only mode: follower_read_timestamp(), once it is readable here.
func (s *Session) staleReadTimestamp() (hlc.Timestamp, error) {
	now, err := s.e.storage.Clock().Now()
	if err != nil {
		return hlc.Timestamp{}, err
	}
	ts := hlc.Timestamp{WallTime: now.WallTime - int64(s.e.opts.FollowerReads.Offset())}
	if s.e.follower() {
		// Bounded staleness: the closed timestamp stopped short of ts
		// (no node serves now); read at it while it is recent enough
		// (follower_read_max_staleness; 0: never).
		bound := s.vars.FollowerReadMaxStaleness()
		if closed, ok := s.e.opts.FollowerReads.Closed(); ok && bound > 0 && closed.Less(ts) && now.WallTime-closed.WallTime <= int64(bound) {
			return closed, nil
		}
	}
	return ts, s.waitReadable(ts)
}

// waitReadable waits until a read at ts sees every commit at or below
// it: on a follower engine until the replica's closed timestamp reaches
// ts (55000 after FollowerReads.Wait), else until the commits in flight
// at or below it landed: at or below the node's closed timestamp
// (FollowerReads.LocalClosed) without the read gate, else through it (a
// cluster node's read lease: the read waits for it, 57P01 when the node
// cannot renew it).
func (s *Session) waitReadable(ts hlc.Timestamp) error {
	f := s.e.opts.FollowerReads
	if !s.e.follower() {
		if f != nil && f.LocalClosed != nil {
			if closed, ok := f.LocalClosed(); ok && ts.LessEq(closed) {
				s.e.storage.WaitClosed(ts)
				return nil
			}
		}
		return s.e.storage.WaitCommitted(ts)
	}
	wait := f.Wait
	if wait <= 0 {
		wait = defaultFollowerWait
	}
	deadline := time.Now().Add(wait)
	for {
		closed, ok := f.Closed()
		if ok && ts.LessEq(closed) {
			return nil
		}
		if time.Now().After(deadline) {
			e := sqlerr.New(sqlerr.ObjectNotInPrerequisiteState,
				"follower read at %s: this node's replica is complete only up to its closed timestamp %s", ts, closed)
			if !ok {
				e.Message = fmt.Sprintf("follower read at %s: this node's replica has no closed timestamp yet", ts)
			}
			e.Detail = "A node that does not serve SQL answers reads at or below the closed timestamp the serving node publishes; " +
				"it trails the serving node's clock by the closed-timestamp target and stops while no node serves."
			e.Hint = "Read at follower_read_timestamp() or an older time, or connect without stale_read_only to be served by the serving node."
			return e
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// staleSnapshot is takeSnapshot's case for the stale read-only mode: a
// statement (or a REPEATABLE READ block's first one) without an AS OF
// SYSTEM TIME of its own reads at follower_read_timestamp(), with the
// catalog of then.
func (s *Session) staleSnapshot(fix bool) error {
	var ts hlc.Timestamp
	var err error
	if (s.ownAsOf || s.settingOnly) && s.txn == nil && s.e.follower() {
		// The statement's own time replaces this one (asOfSnapshot, which
		// waits for it), or it reads no table (SET, SHOW, RESET: a
		// session past its staleness bound can still change the bound):
		// bind at the closed timestamp, readable now.
		if closed, ok := s.e.opts.FollowerReads.Closed(); ok {
			ts = closed
		}
	}
	if ts.IsEmpty() {
		if ts, err = s.staleReadTimestamp(); err != nil {
			return err
		}
	}
	if err := s.holdReads(ts); err != nil {
		return err
	}
	s.snap = s.e.storage.At(ts)
	cat, exact := s.e.catalog.At(ts)
	if exact {
		s.snap = s.snap.CheckingTables(func(id uint64) error {
			if s.e.follower() {
				return s.followerTableCheck(id, ts)
			}
			if s.e.shards.Map(id) == nil {
				return s.noShardMapError(ts)
			}
			return nil
		})
	} else {
		s.snap = s.snap.Historical()
	}
	s.stmtCatalog = cat
	s.snapTime = time.Unix(0, ts.WallTime)
	s.txnSnapTime = s.snapTime
	if s.txn != nil {
		s.txn.SetReadTimestamp(ts)
		if fix {
			s.txn.SetIsolation(s.isolation())
			s.txn.StartStatement()
		}
	}
	return nil
}

// noShardMapError is the error of a read of a table the catalog of its
// time names but the engine has no shard map of: dropped (truncated,
// rewritten) since, its rows gone with it.
func (s *Session) noShardMapError(ts hlc.Timestamp) *sqlerr.Error {
	e := droppedSinceError(ts)
	if s.e.follower() {
		e.Detail = "The table was dropped, truncated or rewritten since the read's time; a follower-read connection " +
			"does not read the rows of such a table."
	}
	return e
}

// followerTableCheck is a follower engine's check of a table its
// statement at ts reads (storage.View.CheckingTables): the table needs a
// shard map. The engine loaded the maps of when it opened, and its
// replica may have applied the table's creation only since (the replica
// lags the serving node, and a new connection may get an engine opened
// up to followerRefresh before: cmd/pivotdb/follower.go), so a map it
// lacks is read from the store (partition's ReadMap): a read at ts is at
// or below the replica's closed timestamp, so the creation of a table the
// catalog of ts names is applied there. A table with no map in the store
// either was dropped since.
func (s *Session) followerTableCheck(id uint64, ts hlc.Timestamp) error {
	sm, err := s.e.shards.ReadMap(id)
	if err != nil {
		return err
	}
	if sm == nil {
		return s.noShardMapError(ts)
	}
	return nil
}

// asOfCatalogAt is catalog.At for asOfCatalog's AS OF SYSTEM TIME ts. A
// follower engine first waits for its replica's closed timestamp to reach
// ts (waitReadable, as asOfSnapshot does before it reads): the history
// read above it could miss a schema change the replica has not applied
// yet, and the catalog keeps what it read by timestamp (a statement
// repeated with the same literal time would bind against it for good).
// Past the wait, not exact: asOfSnapshot fails with the wait's 55000.
func (s *Session) asOfCatalogAt(ts hlc.Timestamp) (*catalog.Snapshot, bool) {
	if s.e.follower() && s.waitReadable(ts) != nil {
		return nil, false
	}
	return s.e.catalog.At(ts)
}

// followerPrepareCatalog is the catalog a follower engine's session
// prepares a statement against (prepareCatalog): the catalog's history at
// the time the statement will likely read at, follower_read_timestamp()
// or, when that is not closed yet, the replica's closed timestamp (what
// staleReadTimestamp picks without waiting); nil (the catalog in memory,
// of when the engine opened) while the replica has no closed timestamp
// or the history does not know the time. Not the catalog in memory: a
// table created after the engine opened (or before, but applied by the
// replica only after: it lags the serving node) would be unknown to every
// statement the session prepares (the extended protocol's Parse: 42P01),
// for as long as the session lasts, although Execute reads at a time
// whose catalog names it. Execute binds again against the catalog of its
// read time when that is another.
func (s *Session) followerPrepareCatalog() *catalog.Snapshot {
	f := s.e.opts.FollowerReads
	ts, ok := f.Closed()
	if !ok {
		return nil
	}
	if now, err := s.e.storage.Clock().Now(); err == nil {
		if stale := (hlc.Timestamp{WallTime: now.WallTime - int64(f.Offset())}); stale.Less(ts) {
			ts = stale
		}
	}
	if cat, exact := s.e.catalog.At(ts); exact {
		return cat
	}
	return nil
}

// closedBindSnapshot is takeSnapshot's case for a statement with an AS OF
// SYSTEM TIME of its own outside a transaction on an engine that serves,
// while the node's closed timestamp is known (FollowerReads.LocalClosed):
// a SELECT whose time resolves at or below the closed timestamp, or BEGIN
// or SET TRANSACTION ... AS OF SYSTEM TIME (which read nothing). The
// snapshot the statement binds against is taken at the closed timestamp,
// which is complete without the read lease, instead of at a fresh read
// timestamp, which waits for it; the statement's own time replaces it
// before it reads (asOfCatalog, asOfSnapshot). So a serving node that
// cannot reach a quorum still answers SELECT ... AS OF SYSTEM TIME
// follower_read_timestamp() and BEGIN READ ONLY AS OF SYSTEM TIME ...
// A SELECT at a later time, or one whose time does not resolve (its error
// comes from binding, against the newest catalog as before), takes the
// usual snapshot. ok is false when the case does not apply.
func (s *Session) closedBindSnapshot() (ok bool, err error) {
	f, st := s.e.opts.FollowerReads, s.runningStmt
	if !s.ownAsOf || st == nil || s.txn != nil || s.e.follower() || f == nil || f.LocalClosed == nil {
		return false, nil
	}
	closed, known := f.LocalClosed()
	if !known {
		return false, nil
	}
	if st.Txn == nil {
		a := bind.StatementAsOf(st, s.bindEnv())
		if a == nil {
			return false, nil
		}
		ts, err := s.asOfTimestamp(a)
		if err != nil || closed.Less(ts) {
			return false, nil
		}
	}
	if err := s.holdReads(closed); err != nil {
		return true, err
	}
	s.snap = s.e.storage.At(closed)
	s.snapTime = time.Unix(0, closed.WallTime)
	s.txnSnapTime = s.snapTime
	s.stmtCatalog, _ = s.e.catalog.At(closed)
	return true, nil
}
