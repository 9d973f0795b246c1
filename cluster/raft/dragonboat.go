package raft

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/lni/dragonboat/v4"
	"github.com/lni/dragonboat/v4/config"
	pb "github.com/lni/dragonboat/v4/raftpb"
	sm "github.com/lni/dragonboat/v4/statemachine"
)

// dragonboatHost is Host over one dragonboat NodeHost.
type dragonboatHost struct {
	nh       *dragonboat.NodeHost
	cfg      HostConfig
	snapSend *snapshotSendHook // snapshotsend.go
	keeper   *logKeeper        // logkeeper.go
	// busyRefusals counts the proposal tries dragonboat refused as
	// ErrSystemBusy (BusyRefusals).
	busyRefusals atomic.Int64
	// local is the transport's receive path and campaigns the founding
	// single voters' early campaigns (campaign.go); local is nil with
	// dragonboat's transport.
	local     *localDelivery
	campaigns *campaigns
}

var _ Host = (*dragonboatHost)(nil)

// defaultRequestTimeout bounds a request whose ctx has no deadline:
// dragonboat needs one for every synchronous request.
const defaultRequestTimeout = 30 * time.Second

// Start opens the log store in cfg.Dir and starts listening on
// cfg.RaftAddress. No replica runs until StartReplica.
func Start(cfg HostConfig) (Host, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	nhc := config.NodeHostConfig{
		NodeHostDir:    filepath.Join(cfg.Dir, "nodehost"),
		RTTMillisecond: uint64(cfg.RTT / time.Millisecond),
		RaftAddress:    cfg.RaftAddress,
		DeploymentID:   cfg.DeploymentID,
		// Bound what a slow peer can pin in memory; past the limit the
		// messages are dropped and Raft resends them.
		MaxSendQueueSize:    64 << 20,
		MaxReceiveQueueSize: 64 << 20,
		Expert: config.ExpertConfig{
			LogDB:  logStoreConfig(cfg.LogStoreMemTableBytes),
			Engine: engineConfig(),
		},
	}
	keeper := newLogKeeper(cfg)
	snapSend := &snapshotSendHook{keeper: keeper}
	var local *localDelivery
	if !useDragonboatTransport {
		// dragonboat's wire format in fewer system calls (transport.go).
		local = &localDelivery{}
		nhc.Expert.TransportFactory = transportFactory{snapSend: snapSend, local: local}
	}
	if cfg.NoSync {
		nhc.Expert.FS = noSyncHostFS()
	}
	if cfg.TLS != nil {
		nhc.MutualTLS = true
		nhc.CAFile, nhc.CertFile, nhc.KeyFile = cfg.TLS.CAFile, cfg.TLS.CertFile, cfg.TLS.KeyFile
	}
	nh, err := dragonboat.NewNodeHost(nhc)
	if err != nil {
		return nil, fmt.Errorf("raft: starting the node host at %s: %w", cfg.RaftAddress, err)
	}
	keeper.start(nh)
	return &dragonboatHost{nh: nh, cfg: cfg, snapSend: snapSend, keeper: keeper, local: local, campaigns: newCampaigns()}, nil
}

func (h *dragonboatHost) RaftAddress() string { return h.nh.RaftAddress() }

func (h *dragonboatHost) Close() error {
	h.campaigns.close()
	h.keeper.close()
	h.nh.Close()
	return nil
}

func (h *dragonboatHost) StartReplica(spec ReplicaSpec, create CreateStateMachine) error {
	if spec.Group == 0 || spec.Replica == 0 {
		return fmt.Errorf("raft: group and replica ids must be non-zero (group %d, replica %d)", spec.Group, spec.Replica)
	}
	if spec.Join && len(spec.InitialMembers) > 0 {
		return errors.New("raft: a joining replica takes no initial members")
	}
	rc := config.Config{
		ShardID:      uint64(spec.Group),
		ReplicaID:    uint64(spec.Replica),
		CheckQuorum:  true,
		PreVote:      true,
		ElectionRTT:  h.cfg.ElectionTicks,
		HeartbeatRTT: h.cfg.HeartbeatTicks,
		// The host's log keeper takes the snapshots that bound the log
		// (logkeeper.go): dragonboat's own would compact the log after a
		// snapshot still on its way.
		SnapshotEntries:    0,
		CompactionOverhead: h.cfg.CompactionOverhead,
		MaxInMemLogSize:    h.cfg.MaxInMemLogBytes,
		IsNonVoting:        spec.NonVoter,
		Quiesce:            h.cfg.Quiesce != nil && h.cfg.Quiesce(spec.Group),
		// Every membership change names the membership it was decided
		// on (changeMembership), so two concurrent changes cannot both
		// apply against the same state.
		OrderedConfigChange: true,
	}
	members := make(map[uint64]dragonboat.Target, len(spec.InitialMembers))
	for r, addr := range spec.InitialMembers {
		members[uint64(r)] = addr
	}
	err := h.nh.StartOnDiskReplica(members, spec.Join,
		func(shardID, replicaID uint64) sm.IOnDiskStateMachine {
			return &onDiskAdapter{
				sm:     create(GroupID(shardID), ReplicaID(replicaID)),
				keeper: h.keeper,
				log:    h.keeper.register(GroupID(shardID), ReplicaID(replicaID)),
			}
		}, rc)
	if err == nil && h.cfg.CampaignAlone && mayCampaignAlone(spec) {
		h.campaignAlone(spec.Group, spec.Replica) // campaign.go
	}
	return mapError(spec.Group, err)
}

func (h *dragonboatHost) StopReplica(g GroupID) error {
	h.keeper.forget(g, nil)
	return mapError(g, h.nh.StopShard(uint64(g)))
}

func (h *dragonboatHost) HasReplicaData(g GroupID, r ReplicaID) bool {
	return h.nh.HasNodeInfo(uint64(g), uint64(r))
}

func (h *dragonboatHost) RemoveReplicaData(ctx context.Context, g GroupID, r ReplicaID) error {
	ctx, cancel := withDeadline(ctx)
	defer cancel()
	h.keeper.forget(g, nil)
	return mapError(g, h.nh.SyncRemoveData(ctx, uint64(g), uint64(r)))
}

func (h *dragonboatHost) Propose(ctx context.Context, g GroupID, cmd []byte) (Result, error) {
	ctx, cancel := withDeadline(ctx)
	defer cancel()
	session := h.nh.GetNoOPSession(uint64(g))
	var res sm.Result
	err := retryDropped(ctx, func() error {
		var err error
		res, err = h.nh.SyncPropose(ctx, session, cmd)
		if errors.Is(err, dragonboat.ErrSystemBusy) {
			h.busyRefusals.Add(1)
		}
		return err
	})
	if notProposed(err) {
		// retryDropped returns the first error that is no drop, so every
		// try before this one was dropped too: nothing reached the log.
		return Result{}, fmt.Errorf("%w: %w: group %d: %v", ErrTimeout, ErrNotProposed, g, err)
	}
	if err != nil {
		return Result{}, mapError(g, err)
	}
	return Result{Value: res.Value, Data: res.Data}, nil
}

// notProposed reports whether a SyncPropose failed before its command was
// handed to Raft: dropped (no leader known, not ready, the proposal queue
// full or paused) or refused for its deadline (less than a tick left, or
// none).
func notProposed(err error) bool {
	return isDropped(err) ||
		errors.Is(err, dragonboat.ErrInvalidDeadline) || errors.Is(err, dragonboat.ErrTimeoutTooSmall)
}

// isDropped reports whether dragonboat dropped a request before
// replicating it (retryDropped repeats those).
func isDropped(err error) bool {
	return errors.Is(err, dragonboat.ErrShardNotReady) ||
		errors.Is(err, dragonboat.ErrSystemBusy) ||
		errors.Is(err, dragonboat.ErrShardNotInitialized)
}

func (h *dragonboatHost) Read(ctx context.Context, g GroupID, query any) (any, error) {
	ctx, cancel := withDeadline(ctx)
	defer cancel()
	var v any
	for {
		// Each attempt gets a bounded wait: dragonboat completes a read
		// when the replica next applies something, and a replica that
		// caught up by a snapshot while the read waited applies nothing
		// until the next write, so its read would wait for that write. A
		// ReadIndex has no effect, so asking again is safe.
		actx, acancel := context.WithTimeout(ctx, readAttemptTimeout)
		err := retryDropped(actx, func() error {
			var err error
			v, err = h.nh.SyncRead(actx, uint64(g), query)
			return err
		})
		acancel()
		if err == nil || ctx.Err() != nil || !retryableRead(err) {
			return v, mapError(g, err)
		}
	}
}

// retryableRead reports whether a read attempt failed only for time: it
// timed out, or every try was dropped (no leader known yet) until the
// attempt ended. ErrInvalidDeadline and ErrTimeoutTooSmall are the same: a
// try that retryDropped started with less than a Raft tick left of the
// attempt is refused with one of them (seen as "invalid deadline" failing a
// serving node's start, and as "specified timeout value is too small"
// failing a read of a restarted replica in CI).
func retryableRead(err error) bool {
	return errors.Is(err, dragonboat.ErrTimeout) || errors.Is(err, dragonboat.ErrShardNotReady) ||
		errors.Is(err, dragonboat.ErrSystemBusy) || errors.Is(err, dragonboat.ErrShardNotInitialized) ||
		errors.Is(err, dragonboat.ErrInvalidDeadline) || errors.Is(err, dragonboat.ErrTimeoutTooSmall)
}

// readAttemptTimeout bounds one ReadIndex attempt of Read.
const readAttemptTimeout = time.Second

func (h *dragonboatHost) CompactLog(ctx context.Context, g GroupID) (uint64, error) {
	ctx, cancel := withDeadline(ctx)
	defer cancel()
	var index uint64
	err := retryDropped(ctx, func() error {
		var err error
		index, err = h.nh.SyncRequestSnapshot(ctx, uint64(g), dragonboat.SnapshotOption{
			OverrideCompactionOverhead: true,
			CompactionOverhead:         0,
		})
		if errors.Is(err, dragonboat.ErrRejected) {
			// Nothing applied since the last snapshot: that one bounds
			// the log (ours compact to their index, dragonboat's own keep
			// CompactionOverhead entries below theirs, every one of
			// which is past index 1). With no snapshot at all nothing
			// was applied yet, and nothing bounds the log.
			index, err = h.lastSnapshotIndex(g)
			if err == nil && index == 0 {
				return errNothingApplied
			}
		}
		return err
	})
	if errors.Is(err, errNothingApplied) {
		return 0, fmt.Errorf("%w: group %d: the replica applied nothing yet, so no snapshot can bound its log", ErrRejected, g)
	}
	return index, mapError(g, err)
}

// errNothingApplied ends CompactLog's retries of a replica that has
// nothing to take a snapshot of.
var errNothingApplied = errors.New("nothing applied")

// lastSnapshotIndex is the index of the newest snapshot of this host's
// replica of g (0 when it has none).
func (h *dragonboatHost) lastSnapshotIndex(g GroupID) (uint64, error) {
	lr, err := h.nh.GetLogReader(uint64(g))
	if err != nil {
		return 0, err
	}
	ss := lr.Snapshot()
	if pb.IsEmptySnapshot(ss) {
		return 0, nil
	}
	// Snapshot counts a reference that keeps the snapshot's files until
	// it is dropped.
	return ss.Index, ss.Unref()
}

func (h *dragonboatHost) StaleRead(g GroupID, query any) (any, error) {
	v, err := h.nh.StaleRead(uint64(g), query)
	return v, mapError(g, err)
}

func (h *dragonboatHost) AddVoter(ctx context.Context, g GroupID, r ReplicaID, addr string) error {
	_, err := h.changeMembership(ctx, g, func(ctx context.Context, ccid uint64) error {
		return h.nh.SyncRequestAddReplica(ctx, uint64(g), uint64(r), addr, ccid)
	}, func(m Membership) bool { return m.Voters[r] == addr }, nil)
	return err
}

func (h *dragonboatHost) AddNonVoter(ctx context.Context, g GroupID, r ReplicaID, addr string) error {
	_, err := h.changeMembership(ctx, g, func(ctx context.Context, ccid uint64) error {
		return h.nh.SyncRequestAddNonVoting(ctx, uint64(g), uint64(r), addr, ccid)
	}, func(m Membership) bool { return m.NonVoters[r] == addr }, nil)
	return err
}

func (h *dragonboatHost) Promote(ctx context.Context, g GroupID, r ReplicaID) error {
	_, err := h.PromoteIf(ctx, g, r, nil)
	return err
}

func (h *dragonboatHost) PromoteIf(ctx context.Context, g GroupID, r ReplicaID, cond func(Membership) bool) (bool, error) {
	// dragonboat promotes a non-voter when it is added as a voter under the
	// same id; the address must be the non-voter's.
	var addr string
	return h.changeMembership(ctx, g, func(ctx context.Context, ccid uint64) error {
		return h.nh.SyncRequestAddReplica(ctx, uint64(g), uint64(r), addr, ccid)
	}, func(m Membership) bool {
		_, ok := m.Voters[r]
		return ok
	}, func(m Membership) error {
		a, ok := m.NonVoters[r]
		if !ok {
			return fmt.Errorf("%w: group %d has no non-voting replica %d to promote", ErrRejected, g, r)
		}
		addr = a
		if cond != nil && !cond(m) {
			return errCondition
		}
		return nil
	})
}

func (h *dragonboatHost) RemoveReplica(ctx context.Context, g GroupID, r ReplicaID) error {
	_, err := h.changeMembership(ctx, g, func(ctx context.Context, ccid uint64) error {
		return h.nh.SyncRequestDeleteReplica(ctx, uint64(g), uint64(r), ccid)
	}, func(m Membership) bool { return m.Removed[r] }, nil)
	return err
}

// errCondition: PromoteIf's condition does not hold.
var errCondition = errors.New("raft: condition does not hold")

// changeMembership runs one membership change against the membership it
// reads first: the change carries that membership's config change id, and
// dragonboat (OrderedConfigChange) rejects it if another change came in
// between; then it reads again and retries. A change whose effect is in
// place (done) is not requested again, so callers can repeat a step after a
// timeout. check, when set, vets the membership read before each try; its
// errCondition answers (false, nil). It returns whether it made the change
// (false also when an attempt of its own that went unanswered applied after
// all: which change did it cannot be told then).
//
// Each attempt gets changeAttemptTimeout, not all of ctx: dragonboat never
// answers a change that a follower forwarded and the leader dropped (the
// leader drops a change while another one is committed but not applied
// yet: "dropped config change, pending change" in its log) or that a
// leadership change lost; such a request waits for its whole deadline.
// When two nodes join at once, the second asks the first (a member already,
// not the leader) to promote it while the first one's promotion is
// committed but not applied: in 5 runs of tests/'s TestCluster set, 4 of
// about 110 clusters had their metadata leader log the drop, and in each a
// node (two in one) started 20 s late, its Promote RPC's whole timeout.
// Asking again after an unanswered attempt is safe: it carries the same
// config change id, so if the first one applies after all, dragonboat
// rejects the second, and the next read finds the change done.
func (h *dragonboatHost) changeMembership(ctx context.Context, g GroupID,
	change func(ctx context.Context, ccid uint64) error, done func(Membership) bool,
	check func(Membership) error) (bool, error) {
	ctx, cancel := withDeadline(ctx)
	defer cancel()
	lastID := ^uint64(0)
	for {
		m, err := h.Membership(ctx, g)
		if err != nil {
			return false, err
		}
		if done(m) {
			return false, nil
		}
		if m.ConfigChangeID == lastID {
			// Rejected against this very membership: not a race.
			return false, fmt.Errorf("%w: group %d: membership change refused", ErrRejected, g)
		}
		if check != nil {
			if err := check(m); errors.Is(err, errCondition) {
				return false, nil
			} else if err != nil {
				return false, err
			}
		}
		actx, acancel := context.WithTimeout(ctx, changeAttemptTimeout)
		err = retryDropped(actx, func() error { return change(actx, m.ConfigChangeID) })
		acancel()
		if err == nil {
			return true, nil
		}
		switch {
		case errors.Is(err, dragonboat.ErrRejected):
			lastID = m.ConfigChangeID
		case ctx.Err() == nil && retryableRead(err):
			// Unanswered or dropped until the attempt ended: read the
			// membership again and, if it did not move, ask again under
			// the same config change id (lastID stays: not a refusal).
		default:
			return false, mapError(g, err)
		}
	}
}

// changeAttemptTimeout bounds one attempt of a membership change
// (changeMembership). A change commits in one Raft round trip and applies
// at once; a loaded 2-core machine has been seen to hold a Raft goroutine
// off the CPU for 200 ms, so 3 s leaves room for several such waits, while
// an attempt that will never be answered costs at most that long.
const changeAttemptTimeout = 3 * time.Second

func (h *dragonboatHost) TransferLeadership(ctx context.Context, g GroupID, r ReplicaID) error {
	ctx, cancel := withDeadline(ctx)
	defer cancel()
	const ask = 500 * time.Millisecond
	var asked time.Time
	for {
		leader, _, ok, err := h.Leader(g)
		if err != nil {
			return err
		}
		if ok && leader == r {
			return nil
		}
		if ok && time.Since(asked) >= ask {
			// The request is a hint the leader may ignore (target lagging,
			// election running): ask again until ctx ends.
			if err := h.nh.RequestLeaderTransfer(uint64(g), uint64(r)); err != nil && !dragonboat.IsTempError(err) {
				return mapError(g, err)
			}
			asked = time.Now()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: group %d: leadership did not move to replica %d", ErrTimeout, g, r)
		case <-time.After(h.cfg.RTT):
		}
	}
}

func (h *dragonboatHost) Leader(g GroupID) (ReplicaID, uint64, bool, error) {
	leader, term, ok, err := h.nh.GetLeaderID(uint64(g))
	if err != nil {
		return 0, 0, false, mapError(g, err)
	}
	return ReplicaID(leader), term, ok, nil
}

func (h *dragonboatHost) Membership(ctx context.Context, g GroupID) (Membership, error) {
	ctx, cancel := withDeadline(ctx)
	defer cancel()
	var m *dragonboat.Membership
	for {
		// A ReadIndex, in attempts as Read's: one lost in a leadership
		// change (placement moves leaderships) would otherwise wait until
		// ctx ends.
		actx, acancel := context.WithTimeout(ctx, readAttemptTimeout)
		err := retryDropped(actx, func() error {
			var err error
			m, err = h.nh.SyncGetShardMembership(actx, uint64(g))
			return err
		})
		acancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil || !retryableRead(err) {
			return Membership{}, mapError(g, err)
		}
	}
	out := Membership{
		ConfigChangeID: m.ConfigChangeID,
		Voters:         make(map[ReplicaID]string, len(m.Nodes)),
		NonVoters:      make(map[ReplicaID]string, len(m.NonVotings)),
		Removed:        make(map[ReplicaID]bool, len(m.Removed)),
	}
	for r, addr := range m.Nodes {
		out.Voters[ReplicaID(r)] = addr
	}
	for r, addr := range m.NonVotings {
		out.NonVoters[ReplicaID(r)] = addr
	}
	for r := range m.Removed {
		out.Removed[ReplicaID(r)] = true
	}
	return out, nil
}

func (h *dragonboatHost) LocalReplicas() []ReplicaInfo {
	info := h.nh.GetNodeHostInfo(dragonboat.NodeHostInfoOption{SkipLogInfo: true})
	if info == nil {
		return nil
	}
	out := make([]ReplicaInfo, 0, len(info.ShardInfoList))
	for _, s := range info.ShardInfoList {
		if s.Pending {
			continue
		}
		out = append(out, ReplicaInfo{
			Group:    GroupID(s.ShardID),
			Replica:  ReplicaID(s.ReplicaID),
			Leader:   ReplicaID(s.LeaderID),
			Term:     s.Term,
			NonVoter: s.IsNonVoting,
		})
	}
	return out
}

// withDeadline gives ctx the deadline dragonboat's synchronous calls need.
func withDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, defaultRequestTimeout)
}

// retryDropped repeats f while dragonboat reports that it dropped the
// request before replicating it: no leader is known yet, the replica is still
// loading, or its queue is full. Such a request never reaches the log, so
// repeating it cannot apply a command twice. A timeout is not retried: a
// timed-out proposal may still commit.
func retryDropped(ctx context.Context, f func() error) error {
	backoff := time.Millisecond
	for {
		err := f()
		if !isDropped(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(backoff):
		}
		if backoff < 50*time.Millisecond {
			backoff *= 2
		}
	}
}

// mapError turns dragonboat's errors into this package's sentinels, keeping
// the engine's text for the log.
func mapError(g GroupID, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, dragonboat.ErrClosed):
		return fmt.Errorf("%w (group %d)", ErrClosed, g)
	case errors.Is(err, dragonboat.ErrShardNotFound):
		return fmt.Errorf("%w: group %d", ErrGroupNotFound, g)
	case errors.Is(err, dragonboat.ErrShardAlreadyExist):
		return fmt.Errorf("%w: group %d", ErrGroupExists, g)
	case errors.Is(err, dragonboat.ErrTimeout), errors.Is(err, dragonboat.ErrCanceled),
		errors.Is(err, dragonboat.ErrShardNotReady), errors.Is(err, dragonboat.ErrSystemBusy),
		errors.Is(err, dragonboat.ErrShardNotInitialized),
		// A try started with less than a tick of the caller's deadline
		// left: the caller ran out of time, as with ErrTimeout.
		errors.Is(err, dragonboat.ErrInvalidDeadline), errors.Is(err, dragonboat.ErrTimeoutTooSmall):
		return fmt.Errorf("%w: group %d: %v", ErrTimeout, g, err)
	case errors.Is(err, dragonboat.ErrRejected):
		return fmt.Errorf("%w: group %d", ErrRejected, g)
	case errors.Is(err, dragonboat.ErrReplicaRemoved):
		return fmt.Errorf("%w: group %d", ErrReplicaRemoved, g)
	}
	return fmt.Errorf("raft: group %d: %w", g, err)
}

// onDiskAdapter presents a StateMachine to dragonboat as an
// IOnDiskStateMachine.
type onDiskAdapter struct {
	sm      StateMachine
	entries []Entry // reused by Update
	// keeper and log: the host's log keeper and what it knows of this
	// replica (the applied index and bytes, the holds of its streams).
	keeper *logKeeper
	log    *replicaLog
}

func (a *onDiskAdapter) Open(stop <-chan struct{}) (uint64, error) {
	index, err := a.sm.Open(stop)
	if errors.Is(err, ErrStopped) {
		return 0, sm.ErrOpenStopped
	}
	if err == nil {
		a.log.applied.Store(index)
		a.log.applyingFrom.Store(index)
	}
	return index, err
}

func (a *onDiskAdapter) Update(in []sm.Entry) ([]sm.Entry, error) {
	a.entries = a.entries[:0]
	var size uint64
	for _, e := range in {
		a.entries = append(a.entries, Entry{Index: e.Index, Cmd: e.Cmd})
		size += uint64(len(e.Cmd))
	}
	if len(in) > 0 {
		a.log.applyingFrom.Store(in[0].Index - 1)
	}
	if err := a.sm.Apply(a.entries); err != nil {
		return nil, err
	}
	if len(in) > 0 {
		a.log.applied.Store(in[len(in)-1].Index)
		a.log.appliedBytes.Add(size)
	}
	for i := range in {
		in[i].Result = sm.Result{Value: a.entries[i].Result.Value, Data: a.entries[i].Result.Data}
		a.entries[i] = Entry{} // drop the command bytes: dragonboat owns them
	}
	return in, nil
}

func (a *onDiskAdapter) Lookup(q any) (any, error) { return a.sm.Lookup(q) }
func (a *onDiskAdapter) Sync() error               { return a.sm.Sync() }

// PrepareSnapshot prepares a stream: dragonboat's own snapshots of a
// replica on disk are metadata only and never call it. The log keeper
// holds the log from the stream's index until its target has been sent
// the entries after it (logkeeper.go).
func (a *onDiskAdapter) PrepareSnapshot() (any, error) {
	view, err := a.sm.PrepareSnapshot()
	if err != nil {
		return nil, err
	}
	return streamView{view: view, hold: a.keeper.streamPrepared(a.log)}, nil
}

// streamView is a prepared stream: the state machine's view and the
// stream's hold on the log (nil when holds are off).
type streamView struct {
	view any
	hold *logHold
}

func (a *onDiskAdapter) SaveSnapshot(view any, w io.Writer, stop <-chan struct{}) error {
	sv, ok := view.(streamView)
	if !ok {
		panic(fmt.Sprintf("raft: SaveSnapshot of a view PrepareSnapshot did not make (%T)", view))
	}
	err := a.sm.SaveSnapshot(sv.view, w, stop)
	a.keeper.streamWritten(a.log, sv.hold, err != nil)
	switch {
	case errors.Is(err, ErrStopped):
		return sm.ErrSnapshotStopped
	case errors.Is(err, sm.ErrSnapshotStreaming):
		// dragonboat compares against its sentinel.
		return sm.ErrSnapshotStreaming
	}
	return err
}

func (a *onDiskAdapter) RecoverFromSnapshot(r io.Reader, stop <-chan struct{}) error {
	err := a.sm.RecoverFromSnapshot(r, stop)
	if errors.Is(err, ErrStopped) {
		return sm.ErrSnapshotStopped
	}
	return err
}

func (a *onDiskAdapter) Close() error { return a.sm.Close() }
