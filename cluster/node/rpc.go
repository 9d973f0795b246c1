package node

import (
	"context"
	"encoding/json"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
)

// The cluster RPC: a gRPC service nodes ask each other while they form or
// join a cluster. Its messages are few and small, so they travel as JSON
// (a registered codec) rather than through generated protobuf code.
const serviceName = "pivotdb.cluster.Membership"

type jsonCodec struct{}

func (jsonCodec) Marshal(v any) ([]byte, error)      { return json.Marshal(v) }
func (jsonCodec) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
func (jsonCodec) Name() string                       { return "json" }

func init() { encoding.RegisterCodec(jsonCodec{}) }

// StatusRequest asks a node what it is. A restarting member names itself
// (NodeID) to learn whether the cluster removed it meanwhile.
type StatusRequest struct {
	NodeID uint64 `json:"node_id,omitempty"`
}

// StatusResponse: an empty node (no identity) gives its join list, so that
// founders notice lists that differ; a member gives its cluster and id.
type StatusResponse struct {
	Empty     bool     `json:"empty"`
	JoinList  []string `json:"join_list,omitempty"`
	ClusterID string   `json:"cluster_id,omitempty"`
	NodeID    uint64   `json:"node_id,omitempty"`
	// Ready: the node runs its metadata replica and takes joins.
	Ready bool `json:"ready"`
	// WallNanos is the answering node's wall clock when it answered (ns
	// since the Unix epoch): the caller estimates its offset from it
	// (Peer.Ping, clockoffset.go). 0 from a node of an older version.
	WallNanos int64 `json:"wall_ns,omitempty"`
	// Removed: the request's NodeID was removed from the metadata group
	// (decommissioned, or replaced after it was dead: cluster/placement).
	Removed bool `json:"removed,omitempty"`
}

// JoinRequest asks a member to add the caller, an empty node, to the
// cluster.
type JoinRequest struct {
	ClusterID string `json:"cluster_id"` // the cluster the caller saw in Status
	Addr      string `json:"addr"`
	RaftAddr  string `json:"raft_addr"`
}

// JoinResponse gives the new node its id, which is also the id of its
// metadata replica, added as a non-voter.
type JoinResponse struct {
	ClusterID string `json:"cluster_id"`
	NodeID    uint64 `json:"node_id"`
}

// PromoteRequest asks a member to make the caller's metadata replica a
// voter if the group has fewer voters than it should.
type PromoteRequest struct {
	ClusterID string `json:"cluster_id"`
	NodeID    uint64 `json:"node_id"`
}

// PromoteResponse says whether the replica is a voter now.
type PromoteResponse struct {
	Voter bool `json:"voter"`
}

// ClosedTimestampsRequest is the closed-timestamp side channel
// (cluster/shardrepl/closedts.go, CockroachDB's side transport): the
// serving node tells a node, once per interval, the closed timestamps of
// the shard groups it proposed nothing to, each valid once the replica
// applied the group's log up to Index.
type ClosedTimestampsRequest struct {
	ClusterID string `json:"cluster_id"`
	// From is the serving node, Epoch its serving epoch: a replica takes
	// an entry only under that epoch.
	From   uint64        `json:"from"`
	Epoch  uint64        `json:"epoch"`
	Groups []ClosedGroup `json:"groups"`
}

// ClosedGroup is one group's entry of a ClosedTimestampsRequest: every
// commit of Group at or below Closed is at or below Index of its log.
type ClosedGroup struct {
	Group   uint64 `json:"g"`
	Wall    int64  `json:"w"`
	Logical int32  `json:"l,omitempty"`
	Index   uint64 `json:"i"`
}

// ClosedTimestampsResponse is empty: the side channel is one-way, and a
// lost message only delays follower reads.
type ClosedTimestampsResponse struct{}

type membershipService interface {
	Status(context.Context, *StatusRequest) (*StatusResponse, error)
	Join(context.Context, *JoinRequest) (*JoinResponse, error)
	Promote(context.Context, *PromoteRequest) (*PromoteResponse, error)
	ClosedTimestamps(context.Context, *ClosedTimestampsRequest) (*ClosedTimestampsResponse, error)
}

func unary[Req, Resp any](call func(membershipService, context.Context, *Req) (*Resp, error)) grpc.MethodHandler {
	return func(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
		in := new(Req)
		if err := dec(in); err != nil {
			return nil, err
		}
		return call(srv.(membershipService), ctx, in)
	}
}

var serviceDesc = grpc.ServiceDesc{
	ServiceName: serviceName,
	HandlerType: (*membershipService)(nil),
	Methods: []grpc.MethodDesc{
		{MethodName: "Status", Handler: unary(membershipService.Status)},
		{MethodName: "Join", Handler: unary(membershipService.Join)},
		{MethodName: "Promote", Handler: unary(membershipService.Promote)},
		{MethodName: "ClosedTimestamps", Handler: unary(membershipService.ClosedTimestamps)},
	},
}

// peerClient calls one peer's membership service.
type peerClient struct {
	addr string
	conn *grpc.ClientConn
}

// dial makes a client of the peer at addr, over TLS when the node has it.
func (n *Node) dial(addr string) (*peerClient, error) {
	creds := insecure.NewCredentials()
	if n.clientTLS != nil {
		creds = credentials.NewTLS(n.clientTLS)
	}
	conn, err := grpc.NewClient(addr,
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.CallContentSubtype(jsonCodec{}.Name())))
	if err != nil {
		return nil, err
	}
	return &peerClient{addr: addr, conn: conn}, nil
}

func (p *peerClient) Close() error { return p.conn.Close() }

// statusTimeout bounds a Status call: a peer that does not answer in time
// counts as unreachable for this round. Join and Promote run Raft
// proposals and membership changes on the peer and get longer.
const (
	statusTimeout = 2 * time.Second
	changeTimeout = 20 * time.Second
)

func call[Resp any](ctx context.Context, p *peerClient, method string, req any, timeout time.Duration) (*Resp, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out := new(Resp)
	if err := p.conn.Invoke(ctx, "/"+serviceName+"/"+method, req, out); err != nil {
		return nil, err
	}
	return out, nil
}

func (p *peerClient) Status(ctx context.Context, self uint64) (*StatusResponse, error) {
	return call[StatusResponse](ctx, p, "Status", &StatusRequest{NodeID: self}, statusTimeout)
}

func (p *peerClient) Join(ctx context.Context, req *JoinRequest) (*JoinResponse, error) {
	return call[JoinResponse](ctx, p, "Join", req, changeTimeout)
}

func (p *peerClient) Promote(ctx context.Context, req *PromoteRequest) (*PromoteResponse, error) {
	return call[PromoteResponse](ctx, p, "Promote", req, changeTimeout)
}
