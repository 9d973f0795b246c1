package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// identityFile is the name of the identity file in the data directory.
const identityFile = "cluster-identity.json"

// Membership states of a node, kept in its identity. Each step of joining
// is recorded before it is taken, so that a restart knows which one to
// repeat and never starts a replica twice under different rules.
const (
	// stateBootstrapping: this node founds the cluster; its metadata
	// replica may not have been started yet.
	stateBootstrapping = "bootstrapping"
	// stateJoining: a member added this node's metadata replica; it may not
	// have been started yet.
	stateJoining = "joining"
	// stateMember: the metadata replica was started here; its Raft log
	// must be in the data directory from now on.
	stateMember = "member"
)

// Identity is what a data directory says about the node that owns it.
type Identity struct {
	ClusterID string `json:"cluster_id"`
	NodeID    uint64 `json:"node_id"`
	// Addr is the cluster RPC address; RaftAddr the Raft transport's. The
	// Raft address may not change across restarts (the engine names the
	// host by it).
	Addr     string `json:"addr"`
	RaftAddr string `json:"raft_addr"`
	State    string `json:"state"`
	// JoinedAsNonVoter: the metadata replica was added as a non-voter; it
	// starts as one every time (raft.ReplicaSpec.NonVoter).
	JoinedAsNonVoter bool `json:"joined_as_non_voter"`
	// Promoted: a member promoted the replica to a voter.
	Promoted bool `json:"promoted"`
}

// loadIdentity reads dir's identity; it returns nil, nil for a directory
// that holds none (a new node, or one whose data was wiped).
func loadIdentity(dir string) (*Identity, error) {
	b, err := os.ReadFile(filepath.Join(dir, identityFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	var id Identity
	if err := json.Unmarshal(b, &id); err != nil {
		return nil, fmt.Errorf("node: %s is damaged: %w", filepath.Join(dir, identityFile), err)
	}
	if id.ClusterID == "" || id.NodeID == 0 {
		return nil, fmt.Errorf("node: %s names no cluster or node", filepath.Join(dir, identityFile))
	}
	return &id, nil
}

// saveIdentity replaces dir's identity durably: a temporary file, synced,
// renamed over the old one, and the directory synced.
func saveIdentity(dir string, id Identity) error {
	b, err := json.MarshalIndent(id, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, identityFile+".tmp")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("node: %w", err)
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, identityFile))
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("node: saving the identity: %w", err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// LoadIdentity reads the identity a node keeps in dir (Config.DataDir):
// nil, nil when dir holds none. cmd/pivotdb reads it to start a one-node
// cluster again at the addresses its first start chose.
func LoadIdentity(dir string) (*Identity, error) { return loadIdentity(dir) }

// HasIdentity reports whether dir (Config.DataDir) holds a node's
// identity, damaged or not: the directory belongs to a cluster node.
func HasIdentity(dir string) (bool, error) {
	_, err := os.Stat(filepath.Join(dir, identityFile))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
