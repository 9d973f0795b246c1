package node

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pivotdb/pivotdb/cluster/kvsm"
	"github.com/pivotdb/pivotdb/cluster/raft"
)

// MetaGroup is the Raft group of the cluster's metadata. For now it holds
// the cluster id, the node registry and the node id counter:
//
//	"cluster-id"              the cluster's id
//	"node-id-counter"         the last node id handed out (kvsm.OpAdd)
//	"node/" + id (8 bytes BE) a NodeRecord as JSON
//
// Everything behind the metadata store (catalog, shard maps, users) moves
// here when the store is put on Raft.
const MetaGroup raft.GroupID = 1

const (
	keyClusterID  = "cluster-id"
	keyNodeIDs    = "node-id-counter"
	nodePrefix    = "node/"
	nodePrefixEnd = "node0" // '/'+1
)

// NodeRecord is one node of the registry.
type NodeRecord struct {
	ID       uint64 `json:"id"`
	Addr     string `json:"addr"`
	RaftAddr string `json:"raft_addr"`
}

func nodeKey(id uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte(nodePrefix), id)
}

// propose applies ops to the metadata group through h and returns the new
// values of its OpAdd ops. An attempt that times out is repeated until ctx
// ends (a proposal forwarded to a leader that just died waits for its
// deadline): the metadata commands are safe to apply twice (puts and
// deletes are idempotent; an id counter bumped twice skips an id).
func propose(ctx context.Context, h raft.Host, ops ...kvsm.Op) ([]int64, error) {
	cmd, err := kvsm.Command{Ops: ops}.Encode()
	if err != nil {
		return nil, err
	}
	for {
		actx, cancel := context.WithTimeout(ctx, proposeAttempt)
		res, err := h.Propose(actx, MetaGroup, cmd)
		cancel()
		if errors.Is(err, raft.ErrTimeout) && ctx.Err() == nil {
			continue
		}
		if err != nil {
			return nil, err
		}
		return kvsm.DecodeResult(res.Value, res.Data)
	}
}

// proposeAttempt bounds one attempt of propose.
const proposeAttempt = 3 * time.Second

func putNodeOp(rec NodeRecord) kvsm.Op {
	b, _ := json.Marshal(rec) // a struct of strings and ints always encodes
	return kvsm.Op{Kind: kvsm.OpPut, Key: nodeKey(rec.ID), Value: b}
}

// readNodes reads the registry linearizably through h.
func readNodes(ctx context.Context, h raft.Host) ([]NodeRecord, error) {
	v, err := h.Read(ctx, MetaGroup, kvsm.Scan{Start: []byte(nodePrefix), End: []byte(nodePrefixEnd)})
	if err != nil {
		return nil, err
	}
	kvs := v.([]kvsm.KV)
	out := make([]NodeRecord, 0, len(kvs))
	for _, kv := range kvs {
		var rec NodeRecord
		if err := json.Unmarshal(kv.Value, &rec); err != nil {
			return nil, fmt.Errorf("node: registry entry %q: %w", kv.Key, err)
		}
		out = append(out, rec)
	}
	return out, nil
}
