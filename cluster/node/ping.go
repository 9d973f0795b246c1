package node

import (
	"context"
	"fmt"
	"time"
)

// Ping asks the node at addr (a cluster RPC address of the registry) for
// its status and reports whether it answered as node id of this node's
// cluster within timeout. cluster/placement's liveness tracker pings every
// node of the registry this way; a fresh connection per ping keeps a node
// that comes back from being hidden behind gRPC's reconnection backoff.
func (n *Node) Ping(ctx context.Context, addr string, id uint64, timeout time.Duration) error {
	c, err := n.dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	st, err := call[StatusResponse](ctx, c, "Status", &StatusRequest{}, timeout)
	if err != nil {
		return err
	}
	self := n.Identity()
	switch {
	case st.Empty || st.ClusterID != self.ClusterID:
		return fmt.Errorf("node: %s is not a member of cluster %s", addr, self.ClusterID)
	case st.NodeID != id:
		return fmt.Errorf("node: %s is node %d now, not node %d", addr, st.NodeID, id)
	case !st.Ready:
		return fmt.Errorf("node: node %d at %s is not ready", id, addr)
	}
	return nil
}
