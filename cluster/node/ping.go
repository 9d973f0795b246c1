package node

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// Peer is a connection to another node's cluster RPC for liveness pings
// (cluster/placement keeps one per node of the registry).
type Peer struct {
	n    *Node
	addr string
	conn *grpc.ClientConn
}

// pingBackoff caps gRPC's reconnection backoff (120s by default) at a
// second: a node that comes back must be seen live again within a ping or
// two, not minutes later.
var pingBackoff = grpc.ConnectParams{
	Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
	MinConnectTimeout: time.Second,
}

// DialPeer makes a Peer for the node at addr (a cluster RPC address of the
// registry), over TLS when the node has it. It does not connect yet.
func (n *Node) DialPeer(addr string) (*Peer, error) {
	creds := insecure.NewCredentials()
	if n.clientTLS != nil {
		creds = credentials.NewTLS(n.clientTLS)
	}
	conn, err := grpc.NewClient(addr,
		grpc.WithTransportCredentials(creds),
		grpc.WithConnectParams(pingBackoff),
		grpc.WithDefaultCallOptions(grpc.CallContentSubtype(jsonCodec{}.Name())))
	if err != nil {
		return nil, err
	}
	return &Peer{n: n, addr: addr, conn: conn}, nil
}

// Ping asks the peer for its status and reports whether it answered as
// node id of this node's cluster, ready, within timeout. An answer from
// that node also measures its clock's offset (clockoffset.go) into the
// node's ClockMonitor.
func (p *Peer) Ping(ctx context.Context, id uint64, timeout time.Duration) error {
	sent := p.n.cfg.Physical()
	st, err := call[StatusResponse](ctx, &peerClient{addr: p.addr, conn: p.conn}, "Status", &StatusRequest{}, timeout)
	received := p.n.cfg.Physical()
	if err != nil {
		return err
	}
	self := p.n.Identity()
	if !st.Empty && st.ClusterID == self.ClusterID && st.NodeID == id && st.WallNanos != 0 {
		p.n.clocks.Record(id, MeasureOffset(sent, st.WallNanos, received, time.Now()))
	}
	switch {
	case st.Empty || st.ClusterID != self.ClusterID:
		return fmt.Errorf("node: %s is not a member of cluster %s", p.addr, self.ClusterID)
	case st.NodeID != id:
		return fmt.Errorf("node: %s is node %d now, not node %d", p.addr, st.NodeID, id)
	case !st.Ready:
		return fmt.Errorf("node: node %d at %s is not ready", id, p.addr)
	}
	return nil
}

// SendClosedTimestamps sends req to the peer (the closed-timestamp side
// channel, rpc.go) and waits up to timeout for it to be taken.
func (p *Peer) SendClosedTimestamps(ctx context.Context, req *ClosedTimestampsRequest, timeout time.Duration) error {
	_, err := call[ClosedTimestampsResponse](ctx, &peerClient{addr: p.addr, conn: p.conn}, "ClosedTimestamps", req, timeout)
	return err
}

// Close closes the connection.
func (p *Peer) Close() error { return p.conn.Close() }
