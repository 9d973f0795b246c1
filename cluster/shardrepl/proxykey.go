package shardrepl

import (
	"context"
	"crypto/rand"
	"time"

	"github.com/pivotdb/pivotdb/cluster/kvsm"
)

// The SQL forwarding key. A node that forwards a client's connection to
// the serving node tells it the client's address (cmd/pivotdb's PROXY
// protocol header), signed with this key, which only the members know:
// it is kept in the metadata group ("sql-forward-key", 32 random bytes),
// written once by the first node that serves (Serve) and read by the
// others when they first forward. A header without a valid signature is
// refused, so a client cannot claim another address.
const keySQLForwardKey = "sql-forward-key"

// ensureForwardKey writes the key unless the metadata group has one.
func (c *Cluster) ensureForwardKey(ctx context.Context) error {
	if _, ok, err := c.metaGet(ctx, []byte(keySQLForwardKey)); err != nil || ok {
		return err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	return c.metaPut(ctx, kvsm.Op{Kind: kvsm.OpPut, Key: []byte(keySQLForwardKey), Value: key})
}

// ForwardKey returns the cluster's SQL forwarding key; ok is false while
// no node has served yet (or the metadata group cannot be read now).
func (c *Cluster) ForwardKey(ctx context.Context) (key []byte, ok bool) {
	c.srv.mu.Lock()
	key = c.srv.forwardKey
	c.srv.mu.Unlock()
	if key != nil {
		return key, true
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	v, found, err := c.metaGet(rctx, []byte(keySQLForwardKey))
	if err != nil || !found || len(v) != 32 {
		return nil, false
	}
	key = []byte(v)
	c.srv.mu.Lock()
	c.srv.forwardKey = key
	c.srv.mu.Unlock()
	return key, true
}
