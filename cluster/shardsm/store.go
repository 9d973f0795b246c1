package shardsm

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/hlc"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// Store is a node's Pebble store, in the storage engine's key layout,
// holding the shards of all the node's replicas. It makes their state
// machines (NewStateMachine).
type Store struct {
	db         *pebble.DB
	ownsDB     bool
	fs         vfs.FS
	staging    string
	writerOpts sstable.WriterOptions

	onSplit atomic.Pointer[func(SplitEvent)]
	// onServing is called after a Serve applied (SetServingHandler).
	onServing atomic.Pointer[func(raft.GroupID, Serving)]
	// localLocks: lock records are the locking node's, not replicated
	// (SetLocalLocks).
	localLocks atomic.Bool
	// noSync: snapshot points do not fsync the store (SetNoSync).
	noSync atomic.Bool
	// clock is told of the newest commit timestamp replicas hold
	// (SetClock); nil: nobody.
	clock atomic.Pointer[func(hlc.Timestamp) error]

	// snapshotRate bounds the bytes per second the store's snapshots
	// stream, all together (SetSnapshotRate; 0: unbounded); paceNext is
	// when the bytes streamed so far are due at that rate.
	snapshotRate atomic.Int64
	paceMu       sync.Mutex
	paceNext     time.Time
	// elastic scales snapshotRate down while the process's scheduling
	// latency says its CPU is short (snapshotpace.go).
	elastic *elasticShare

	// logf reports each snapshot streamed or installed, with its size and
	// how long its steps took (SetSnapshotLogger); nil: quiet.
	logf atomic.Pointer[func(string, ...any)]
	// tracker follows each snapshot the store streams, as it goes
	// (SetSnapshotTracker); nil: nobody.
	tracker atomic.Pointer[func(raft.GroupID, int64) SnapshotProgress]

	// open counts the state machines NewStateMachine made that are not
	// closed yet (WaitReplicasClosed).
	open atomic.Int64

	snapshotsSaved     atomic.Int64
	snapshotsRecovered atomic.Int64
	snapshotBytesSaved atomic.Int64
	snapshotBytesRecv  atomic.Int64
	writeRuns          atomic.Int64
	runWrites          atomic.Int64
	hintedWrites       atomic.Int64
	duplicateWrites    atomic.Int64
}

// SplitEvent tells the node that a replica applied a split: it must start
// its replica of Child (raft.ReplicaSpec with InitialMembers Members and
// Replica, the parent replica's own id). Seeded is false when the child's
// state was already on this store (it arrived by snapshot first) and the
// split left it alone.
type SplitEvent struct {
	Parent, Child raft.GroupID
	Replica       raft.ReplicaID
	Members       map[raft.ReplicaID]string
	Descriptor    Descriptor // the child's
	Index         uint64     // the split's log index in the parent
	Seeded        bool
}

// OpenStore opens (creating it if needed) a store in dir: Pebble in
// dir/data with the engine's key layout (enginekey.ConfigureOptions),
// snapshot staging files in dir/staging. opts may carry the file system,
// logger and sizes; the comparer and block format are set here.
func OpenStore(dir string, opts *pebble.Options) (*Store, error) {
	o := &pebble.Options{}
	if opts != nil {
		o = opts.Clone()
	}
	if o.FormatMajorVersion < pebble.FormatVirtualSSTables {
		o.FormatMajorVersion = pebble.FormatNewest
	}
	enginekey.ConfigureOptions(o)
	o.EnsureDefaults()
	enginekey.ConfigureOptions(o) // Levels exist now
	db, err := pebble.Open(filepath.Join(dir, "data"), o)
	if err != nil {
		return nil, fmt.Errorf("shardsm: open %s: %w", dir, err)
	}
	s, err := NewStore(db, o, filepath.Join(dir, "staging"))
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	s.ownsDB = true
	return s, nil
}

// NewStore makes a store over an open Pebble instance shared with the
// storage engine, opened with opts (which must carry enginekey's
// comparer). Staging files go to stagingDir, on db's file system.
func NewStore(db *pebble.DB, opts *pebble.Options, stagingDir string) (*Store, error) {
	if opts == nil || opts.Comparer == nil || opts.Comparer.Name != enginekey.ComparerName {
		return nil, errors.New("shardsm: the store must be opened with the engine's key layout (enginekey.ConfigureOptions)")
	}
	o := opts.Clone()
	o.EnsureDefaults()
	if err := o.FS.RemoveAll(stagingDir); err != nil {
		return nil, fmt.Errorf("shardsm: clearing %s: %w", stagingDir, err)
	}
	if err := o.FS.MkdirAll(stagingDir, 0o755); err != nil {
		return nil, fmt.Errorf("shardsm: %w", err)
	}
	s := &Store{db: db, fs: o.FS, staging: stagingDir, writerOpts: o.MakeWriterOptions(0, db.TableFormat()), elastic: newElasticShare()}
	s.snapshotRate.Store(DefaultSnapshotRate)
	return s, nil
}

// DB returns the Pebble instance.
func (s *Store) DB() *pebble.DB { return s.db }

// Close closes Pebble if OpenStore opened it. Close the raft.Host first.
func (s *Store) Close() error {
	if !s.ownsDB {
		return nil
	}
	return s.db.Close()
}

// SetLocalLocks says that the lock records in this store are the state of
// the node that holds the locks rather than replicated shard data: the
// storage engine writes them outside any command (storage.LocalBatch), and
// cluster/shardrepl keeps their deletions local. Snapshots then neither
// carry nor clear them, Check leaves them out of its recount and
// fingerprint, and Write commands do not count them in the stats. Set it
// before starting any replica, and on every node of a cluster alike.
func (s *Store) SetLocalLocks() { s.localLocks.Store(true) }

// SetNoSync makes the replicas' Sync (dragonboat's call at a snapshot
// point, before it may compact the log below it) do nothing: the store of
// an engine that does not fsync (`serve --unsafe-no-sync`), whose Raft log
// is not fsynced either (raft.HostConfig.NoSync).
func (s *Store) SetNoSync() { s.noSync.Store(true) }

// SetClock sets the function told of every commit timestamp a replica of
// this store holds (Write.Timestamp, at apply and when a replica opens or
// installs a snapshot): the storage engine's clock (hlc.Clock.Update), so
// that the node, should it commit itself later, never takes a timestamp
// below a version it holds. An error from it stops the replica (it fails
// only when it cannot persist its high-water mark).
func (s *Store) SetClock(f func(hlc.Timestamp) error) { s.clock.Store(&f) }

func (s *Store) observe(ts hlc.Timestamp) error {
	if f := s.clock.Load(); f != nil && !ts.IsEmpty() {
		return (*f)(ts)
	}
	return nil
}

// SetSplitHandler sets the function told of each split a replica of this
// store applies. It runs on the parent's apply path: it must not block
// (start the child replica from another goroutine).
func (s *Store) SetSplitHandler(f func(SplitEvent)) { s.onSplit.Store(&f) }

// NewStateMachine is a raft.CreateStateMachine for this store.
func (s *Store) NewStateMachine(g raft.GroupID, r raft.ReplicaID) raft.StateMachine {
	s.open.Add(1)
	return &stateMachine{store: s, group: g, replica: r}
}

// WaitReplicasClosed waits until every state machine made by
// NewStateMachine has been closed, up to timeout; it reports how many are
// still open. raft.Host.StopReplica returns before the replica's apply
// and snapshot workers let go of it (dragonboat closes the state machine
// once they have), so whoever closes the store's Pebble after stopping
// its replicas waits here first: an Apply or a snapshot still streaming
// would otherwise hold an iterator of a closed database (Pebble panics,
// or its Close reports leaked iterators).
func (s *Store) WaitReplicasClosed(timeout time.Duration) int64 {
	deadline := time.Now().Add(timeout)
	for {
		n := s.open.Load()
		if n <= 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Descriptor reads g's descriptor as the store holds it; ok is false if the
// store has none (no replica here, or one not initialized yet).
func (s *Store) Descriptor(g raft.GroupID) (d Descriptor, ok bool, err error) {
	return readDescriptor(s.db, g)
}

// AppliedIndex reads g's applied index as the store holds it.
func (s *Store) AppliedIndex(g raft.GroupID) (uint64, error) {
	return readApplied(s.db, g)
}

// FoundingMembers returns the founding replicas of g if g is a split child
// seeded on this store: what a restarted node starts it with when its log
// store has no data of it yet (raft.Host.HasReplicaData false).
func (s *Store) FoundingMembers(g raft.GroupID) (map[raft.ReplicaID]string, bool, error) {
	v, ok, err := get(s.db, stateKey(g, stateMembers))
	if err != nil || !ok {
		return nil, false, err
	}
	m, err := decodeMembers(v)
	return m, err == nil, err
}

// DropGroup deletes, durably, g's state and the data of its shard from the
// store: for a replica removed from its group (after raft.Host.StopReplica).
func (s *Store) DropGroup(g raft.GroupID) error {
	d, ok, err := readDescriptor(s.db, g)
	if err != nil {
		return err
	}
	var dp *Descriptor
	if ok {
		dp = &d
	}
	b := s.db.NewBatch()
	defer b.Close()
	for _, sp := range dataSpans(g, dp, false) { // the node's own locks go too
		if err := b.DeleteRange(sp[0], sp[1], nil); err != nil {
			return err
		}
	}
	return b.Commit(pebble.Sync)
}

// DefaultSnapshotRate is the bytes per second a store streams snapshots
// at unless SetSnapshotRate says otherwise (CockroachDB's default for
// rebalancing snapshots, kv.snapshot_rebalance.max_rate, is 32 MiB/s).
// Streaming a snapshot costs the sender and the receiver CPU (reading the
// shard, framing, checksums, writing the received file, building the
// staging sstable) that the group's writes need too; unpaced, a 64 MB
// snapshot took both for about a second each on a loaded two-core
// machine, and the receiver fell so far behind the sender that the leader
// gave up waiting for it and streamed the snapshot a second time
// (BenchmarkClusterReplicaMove in tests/).
const DefaultSnapshotRate = 32 << 20

// SetSnapshotRate bounds the bytes per second all of the store's
// snapshots stream at together; 0 leaves them unbounded.
func (s *Store) SetSnapshotRate(bytesPerSecond int64) { s.snapshotRate.Store(bytesPerSecond) }

// SetSnapshotRateElastic turns the scaling of the snapshot rate by the
// process's scheduling latency on or off (the default; snapshotpace.go).
func (s *Store) SetSnapshotRateElastic(on bool) { s.elastic.on.Store(on) }

// paceSnapshot waits until n more bytes of a snapshot stream are due under
// the store's snapshot rate, scaled by its elastic share (snapshotpace.go),
// or stop closes (raft.ErrStopped). Streams share the rate: each write
// reserves its time after those of the others.
func (s *Store) paceSnapshot(n int, stop <-chan struct{}) error {
	configured := s.snapshotRate.Load()
	if configured <= 0 {
		return nil
	}
	now := time.Now()
	rate := float64(configured) * s.elastic.current(now)
	s.paceMu.Lock()
	if s.paceNext.Before(now) {
		s.paceNext = now
	}
	due := s.paceNext
	s.paceNext = s.paceNext.Add(time.Duration(float64(n) / rate * float64(time.Second)))
	s.paceMu.Unlock()
	wait := due.Sub(now)
	if wait < paceSlack {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-stop:
		return raft.ErrStopped
	}
}

// paceSlack: a write due this soon goes at once (a timer per 64 KB write
// would cost more than the pacing saves).
const paceSlack = 5 * time.Millisecond

// SnapshotProgress follows one snapshot stream (SetSnapshotTracker): a
// replica move's copy, as a job of sys.jobs (cluster/placement).
type SnapshotProgress interface {
	// Progress reports the bytes streamed so far of about total (an
	// estimate from the replica's stats counter; never below sent).
	Progress(sent, total int64)
	// Finish ends the stream: err nil when all of it was sent.
	Finish(err error)
}

// SetSnapshotTracker makes the store call start when it begins streaming
// a snapshot of group g, with the stream's estimated bytes; the
// SnapshotProgress it returns (nil: none) is told how the stream goes,
// about every snapshotProgressEvery bytes and at its end.
func (s *Store) SetSnapshotTracker(start func(g raft.GroupID, estimate int64) SnapshotProgress) {
	s.tracker.Store(&start)
}

// trackSnapshot is the tracker's SnapshotProgress for a new stream of g,
// or nil.
func (s *Store) trackSnapshot(g raft.GroupID, estimate int64) SnapshotProgress {
	if f := s.tracker.Load(); f != nil {
		return (*f)(g, estimate)
	}
	return nil
}

// SetSnapshotLogger makes the store report each snapshot it streams or
// installs (its group, keys, bytes and the time its steps took) to logf:
// the steps of a replica move, for the logs.
func (s *Store) SetSnapshotLogger(logf func(format string, args ...any)) { s.logf.Store(&logf) }

func (s *Store) logSnapshot(format string, args ...any) {
	if f := s.logf.Load(); f != nil {
		(*f)(format, args...)
	}
}

// Stats counts snapshot work since the store was opened.
type Stats struct {
	SnapshotsSaved     int64
	SnapshotsRecovered int64
	// SnapshotBytesSaved and SnapshotBytesRecovered count the bytes of the
	// snapshots' streams (keys, values and framing) streamed and installed.
	SnapshotBytesSaved, SnapshotBytesRecovered int64
	// WriteRuns counts the batches of Writes Apply committed together
	// (applyrun.go), RunWrites the Writes in them.
	WriteRuns, RunWrites int64
	// HintedWrites counts the Writes applied with the stats change they
	// carried (statshint.go), without reading their keys.
	HintedWrites int64
	// DuplicateWrites counts the repeated Writes answered as applied
	// without applying them again (writeonce.go).
	DuplicateWrites int64
}

// Stats returns the store's counters.
func (s *Store) Stats() Stats {
	return Stats{SnapshotsSaved: s.snapshotsSaved.Load(), SnapshotsRecovered: s.snapshotsRecovered.Load(),
		SnapshotBytesSaved: s.snapshotBytesSaved.Load(), SnapshotBytesRecovered: s.snapshotBytesRecv.Load(),
		WriteRuns: s.writeRuns.Load(), RunWrites: s.runWrites.Load(), HintedWrites: s.hintedWrites.Load(),
		DuplicateWrites: s.duplicateWrites.Load()}
}

func readApplied(r mvcc.Reader, g raft.GroupID) (uint64, error) {
	v, ok, err := get(r, stateKey(g, stateApplied))
	if err != nil || !ok {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("shardsm: group %d: applied index of %d bytes", g, len(v))
	}
	return beUint64(v), nil
}

func readDescriptor(r mvcc.Reader, g raft.GroupID) (Descriptor, bool, error) {
	v, ok, err := get(r, stateKey(g, stateDescriptor))
	if err != nil || !ok {
		return Descriptor{}, false, err
	}
	d, err := decodeDescriptor(v)
	return d, err == nil, err
}

func readStats(r mvcc.Reader, g raft.GroupID) (mvcc.Stats, error) {
	v, ok, err := get(r, stateKey(g, stateStats))
	if err != nil || !ok {
		return mvcc.Stats{}, err
	}
	return decodeStats(v)
}

// get reads a bare key's value (a copy).
func get(r mvcc.Reader, key []byte) ([]byte, bool, error) {
	v, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	out := slices.Clone(v)
	return out, true, closer.Close()
}

func beUint64(b []byte) uint64 {
	return uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
		uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
}

func sortedReplicas(m map[raft.ReplicaID]string) []raft.ReplicaID {
	out := make([]raft.ReplicaID, 0, len(m))
	for r := range m {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

// Groups lists the groups whose state is on this store (a descriptor, an
// applied index or stats), ascending: the replicas a restarted node runs,
// together with the split children it seeded but had not started yet.
func (s *Store) Groups() ([]raft.GroupID, error) {
	lo := mvcc.AppendBareKey(nil, []byte{mvcc.LocalPrefix, mvcc.LocalReplicaState})
	hi := mvcc.AppendBareKey(nil, []byte{mvcc.LocalPrefix, mvcc.LocalReplicaState + 1})
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, err
	}
	var out []raft.GroupID
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		if len(k) < 2+8 {
			continue
		}
		g := raft.GroupID(beUint64(k[2:10]))
		if len(out) == 0 || out[len(out)-1] != g {
			out = append(out, g)
		}
	}
	return out, it.Close()
}

func readMaxTimestamp(r mvcc.Reader, g raft.GroupID) (hlc.Timestamp, error) {
	v, ok, err := get(r, stateKey(g, stateMaxTimestamp))
	if err != nil || !ok {
		return hlc.Timestamp{}, err
	}
	rd := reader{b: v}
	ts := rd.timestamp()
	if err := rd.done(); err != nil {
		return hlc.Timestamp{}, fmt.Errorf("shardsm: group %d: newest timestamp: %w", g, err)
	}
	return ts, nil
}
