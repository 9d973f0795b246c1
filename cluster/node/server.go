package node

import (
	"context"
	"errors"

	"github.com/pivotdb/pivotdb/cluster/kvsm"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// rpcServer answers the cluster RPC for a node.
type rpcServer Node

func (s *rpcServer) node() *Node { return (*Node)(s) }

func (s *rpcServer) Status(ctx context.Context, req *StatusRequest) (*StatusResponse, error) {
	n := s.node()
	n.mu.Lock()
	if n.id == nil {
		defer n.mu.Unlock()
		return &StatusResponse{Empty: true, JoinList: n.cfg.Join}, nil
	}
	resp := &StatusResponse{ClusterID: n.id.ClusterID, NodeID: n.id.NodeID, Ready: n.ready}
	n.mu.Unlock()
	if req.NodeID != 0 && req.NodeID != resp.NodeID && resp.Ready && n.knowsMetaLeader() {
		// A restarting member asks whether it is still one. Unknown
		// (no leader known here: the whole cluster restarts, say; or
		// no answer in time) answers no, at once: the caller then
		// starts and waits as before.
		rctx, cancel := context.WithTimeout(ctx, statusTimeout/2)
		m, err := n.host.Membership(rctx, MetaGroup)
		cancel()
		resp.Removed = err == nil && m.Removed[raft.ReplicaID(req.NodeID)]
	}
	// Read last, just before the answer leaves: the caller's estimate
	// assumes it was taken inside the round trip.
	resp.WallNanos = n.cfg.Physical()
	return resp, nil
}

// knowsMetaLeader reports whether this node's metadata replica knows a
// leader (a local look, no request).
func (n *Node) knowsMetaLeader() bool {
	_, _, ok, err := n.host.Leader(MetaGroup)
	return err == nil && ok
}

// member returns the node's identity if it is a ready member of cluster
// clusterID, else the gRPC error to answer.
func (s *rpcServer) member(clusterID string) (Identity, error) {
	n := s.node()
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.id == nil || !n.ready {
		return Identity{}, status.Error(codes.Unavailable, "node: not a ready member of a cluster")
	}
	if clusterID != n.id.ClusterID {
		return Identity{}, status.Errorf(codes.FailedPrecondition,
			"node: this node belongs to cluster %s, not %s", n.id.ClusterID, clusterID)
	}
	return *n.id, nil
}

// Join adds an empty node to the cluster: a new node id (never one used
// before), a registry entry, and a non-voting metadata replica. Earlier
// incarnations at the same address (a node whose data directory was wiped)
// are removed first: their data is gone, so they will never answer again,
// and their ids may never come back (dragonboat panics on a replica that
// returns without its log).
func (s *rpcServer) Join(ctx context.Context, req *JoinRequest) (*JoinResponse, error) {
	id, err := s.member(req.ClusterID)
	if err != nil {
		return nil, err
	}
	if req.Addr == "" || req.RaftAddr == "" {
		return nil, status.Error(codes.InvalidArgument, "node: a join names the caller's addresses")
	}
	n := s.node()
	n.changeMu.Lock()
	defer n.changeMu.Unlock()
	h := n.host
	nodes, err := readNodes(ctx, h)
	if err != nil {
		return nil, toStatus(err)
	}
	for _, old := range nodes {
		if old.Addr != req.Addr && old.RaftAddr != req.RaftAddr {
			continue
		}
		if old.ID == id.NodeID {
			return nil, status.Errorf(codes.FailedPrecondition,
				"node: %s asks to join from this node's own address", req.Addr)
		}
		if err := h.RemoveReplica(ctx, MetaGroup, raft.ReplicaID(old.ID)); err != nil {
			return nil, toStatus(err)
		}
		if _, err := propose(ctx, h, kvsm.Op{Kind: kvsm.OpDelete, Key: nodeKey(old.ID)}); err != nil {
			return nil, toStatus(err)
		}
	}
	ids, err := propose(ctx, h, kvsm.Op{Kind: kvsm.OpAdd, Key: []byte(keyNodeIDs), Delta: 1})
	if err != nil {
		return nil, toStatus(err)
	}
	newID := uint64(ids[0])
	if _, err := propose(ctx, h, putNodeOp(NodeRecord{ID: newID, Addr: req.Addr, RaftAddr: req.RaftAddr})); err != nil {
		return nil, toStatus(err)
	}
	if err := h.AddNonVoter(ctx, MetaGroup, raft.ReplicaID(newID), req.RaftAddr); err != nil {
		return nil, toStatus(err)
	}
	return &JoinResponse{ClusterID: id.ClusterID, NodeID: newID}, nil
}

// Promote makes a node's metadata replica a voter while the group has fewer
// voters than MetaReplicas. The check and the promotion are one step
// (raft.Host.PromoteIf): members promoting different nodes at once cannot
// both pass the check.
func (s *rpcServer) Promote(ctx context.Context, req *PromoteRequest) (*PromoteResponse, error) {
	if _, err := s.member(req.ClusterID); err != nil {
		return nil, err
	}
	n := s.node()
	r := raft.ReplicaID(req.NodeID)
	_, err := n.host.PromoteIf(ctx, MetaGroup, r, func(m raft.Membership) bool {
		return len(m.Voters) < n.cfg.MetaReplicas
	})
	if errors.Is(err, raft.ErrRejected) {
		return nil, status.Errorf(codes.NotFound, "node: node %d has no replica in the metadata group to promote", req.NodeID)
	}
	if err != nil {
		return nil, toStatus(err)
	}
	m, err := n.host.Membership(ctx, MetaGroup)
	if err != nil {
		return nil, toStatus(err)
	}
	_, voter := m.Voters[r]
	return &PromoteResponse{Voter: voter}, nil
}

// ClosedTimestamps hands the serving node's side-channel message to the
// handler SetClosedTimestampHandler set (cluster/shardrepl); without one
// the node cannot take it yet (Unavailable: the sender tries next
// interval).
func (s *rpcServer) ClosedTimestamps(ctx context.Context, req *ClosedTimestampsRequest) (*ClosedTimestampsResponse, error) {
	if _, err := s.member(req.ClusterID); err != nil {
		return nil, err
	}
	h := s.node().closedHandler.Load()
	if h == nil {
		return nil, status.Error(codes.Unavailable, "node: this node takes no closed timestamps yet")
	}
	(*h)(req)
	return &ClosedTimestampsResponse{}, nil
}

// SetClosedTimestampHandler sets what takes the side channel's closed
// timestamps (ClosedTimestampsRequest) sent to this node.
func (n *Node) SetClosedTimestampHandler(f func(*ClosedTimestampsRequest)) {
	n.closedHandler.Store(&f)
}

func toStatus(err error) error {
	switch {
	case errors.Is(err, raft.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, raft.ErrRejected):
		return status.Error(codes.Aborted, err.Error())
	}
	return status.Error(codes.Internal, err.Error())
}
