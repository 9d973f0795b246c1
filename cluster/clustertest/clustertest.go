// Package clustertest has the helpers of the cluster packages' tests: hosts
// on free loopback ports with small Raft timings, each with its own store.
package clustertest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pivotdb/pivotdb/cluster/kvsm"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage/storagetest"
)

var quietOnce sync.Once

// QuietEngine turns dragonboat's logging down to errors, once per process
// (its loggers are global and may not change while hosts run).
// PIVOTDB_RAFT_LOG=info (or debug, warning) shows more when debugging.
func QuietEngine() {
	quietOnce.Do(func() {
		level := os.Getenv("PIVOTDB_RAFT_LOG")
		if level == "" {
			level = "error"
		}
		if err := raft.SetEngineLogLevel(level); err != nil {
			panic(err)
		}
	})
}

// FreeAddr returns a loopback address with a port nothing listens on now,
// never one it returned before in this process. The port is picked below
// Linux's ephemeral range (32768-60999): a port the kernel hands out for
// ":0" may become the local port of some outgoing connection (a node's Raft
// transport dials its peers before its own ports are bound), and ":0" may
// hand out the same port twice in a row (CI: "the join list names ...
// twice", "address already in use").
func FreeAddr(t testing.TB) string {
	t.Helper()
	freeAddrMu.Lock()
	defer freeAddrMu.Unlock()
	for range 1000 {
		port := 20000 + rand.IntN(12000)
		if freeAddrUsed[port] {
			continue
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		addr := ln.Addr().String()
		ln.Close()
		freeAddrUsed[port] = true
		return addr
	}
	t.Fatal("clustertest: no free loopback port below the ephemeral range")
	return ""
}

var (
	freeAddrMu   sync.Mutex
	freeAddrUsed = map[int]bool{}
)

// HostConfig returns the Raft configuration of test hosts: a snapshot point
// every 50 entries and 10 entries kept behind it, so that a replica added
// after a few dozen writes catches up from a snapshot.
func HostConfig(dir, addr string) raft.HostConfig {
	return raft.HostConfig{
		Dir:                dir,
		RaftAddress:        addr,
		RTT:                10 * time.Millisecond,
		SnapshotEntries:    50,
		CompactionOverhead: 10,
	}
}

// Node is a test host and its store.
type Node struct {
	t     testing.TB
	Dir   string
	Addr  string
	FS    vfs.FS // the store's file system
	Host  raft.Host
	Store *kvsm.Store
}

// StartNode starts a host on addr with its log store in dir/raft and its
// store in dir/store on fs (vfs.Default when nil).
func StartNode(t testing.TB, dir, addr string, fs vfs.FS) *Node {
	t.Helper()
	return StartNodeWith(t, dir, addr, fs, nil)
}

// StartNodeWith is StartNode with tune, when not nil, adjusting the host's
// configuration.
func StartNodeWith(t testing.TB, dir, addr string, fs vfs.FS, tune func(*raft.HostConfig)) *Node {
	t.Helper()
	QuietEngine()
	if fs == nil {
		fs = vfs.Default
	}
	store, err := kvsm.OpenStore(filepath.Join(dir, "store"), &pebble.Options{FS: fs, Logger: storagetest.QuietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	hc := HostConfig(filepath.Join(dir, "raft"), addr)
	if tune != nil {
		tune(&hc)
	}
	h, err := raft.Start(hc)
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	n := &Node{t: t, Dir: dir, Addr: addr, FS: fs, Host: h, Store: store}
	t.Cleanup(n.Stop)
	return n
}

// Stop closes the host and then the store; a second call does nothing.
func (n *Node) Stop() {
	if n.Host == nil {
		return
	}
	if err := n.Host.Close(); err != nil {
		n.t.Error(err)
	}
	if err := n.Store.Close(); err != nil {
		n.t.Error(err)
	}
	n.Host, n.Store = nil, nil
}

// Put writes key=value to group g through h. A put is idempotent, so an
// attempt that times out is repeated until ctx ends: a proposal forwarded
// to a leader that has just died is neither applied nor dropped, and only
// its deadline ends it.
func Put(ctx context.Context, h raft.Host, g raft.GroupID, key, value string) error {
	cmd, err := kvsm.Command{Ops: []kvsm.Op{{Kind: kvsm.OpPut, Key: []byte(key), Value: []byte(value)}}}.Encode()
	if err != nil {
		return err
	}
	for {
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		res, err := h.Propose(actx, g, cmd)
		cancel()
		if errors.Is(err, raft.ErrTimeout) && ctx.Err() == nil {
			continue
		}
		if err != nil {
			return err
		}
		_, err = kvsm.DecodeResult(res.Value, res.Data)
		return err
	}
}

// Get reads key from group g linearizably through h.
func Get(ctx context.Context, h raft.Host, g raft.GroupID, key string) (string, bool, error) {
	v, err := h.Read(ctx, g, kvsm.Get{Key: []byte(key)})
	if err != nil {
		return "", false, err
	}
	r := v.(kvsm.GetResult)
	return string(r.Value), r.Found, nil
}

// WaitLeader waits until h knows a leader of g and returns it.
func WaitLeader(t testing.TB, h raft.Host, g raft.GroupID) raft.ReplicaID {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		leader, _, ok, err := h.Leader(g)
		if err == nil && ok && leader != 0 {
			return leader
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no leader of group %d known at %s", g, h.RaftAddress())
	return 0
}

// Key returns the n-th key of a test workload.
func Key(n int) string { return fmt.Sprintf("k%05d", n) }
