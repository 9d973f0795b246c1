package raft_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/pivotdb/pivotdb/cluster/clustertest"
	"github.com/pivotdb/pivotdb/cluster/kvsm"
	"github.com/pivotdb/pivotdb/cluster/raft"
)

// registerInput is one operation on the single-key register.
type registerInput struct {
	write bool
	value string
}

// registerOutput is a read's answer; writes have none.
type registerOutput struct {
	value string
}

// registerModel is a register whose initial value is "" (the key absent).
var registerModel = porcupine.Model{
	Init: func() any { return "" },
	Step: func(state, input, output any) (bool, any) {
		in := input.(registerInput)
		if in.write {
			return true, in.value
		}
		return output.(registerOutput).value == state.(string), state
	},
	DescribeOperation: func(input, output any) string {
		in := input.(registerInput)
		if in.write {
			return fmt.Sprintf("put(%q)", in.value)
		}
		return fmt.Sprintf("get() -> %q", output.(registerOutput).value)
	},
}

// putOnce proposes one write of the register, with no retry: clustertest.Put
// proposes again after a timeout, and if both proposals applied, the value
// would come back after later writes, which no single write explains.
func putOnce(ctx context.Context, h raft.Host, key, value string) error {
	cmd, err := kvsm.Command{Ops: []kvsm.Op{{Kind: kvsm.OpPut, Key: []byte(key), Value: []byte(value)}}}.Encode()
	if err != nil {
		return err
	}
	res, err := h.Propose(ctx, group, cmd)
	if err != nil {
		return err
	}
	_, err = kvsm.DecodeResult(res.Value, res.Data)
	return err
}

// Reads and writes of one key through the three hosts, while the third host
// is stopped and restarted, form a linearizable history (checked with
// porcupine). A write that failed stays in the history as one that may
// have taken effect any time after its call.
func TestRegisterLinearizableAcrossRestart(t *testing.T) {
	nodes := startGroup(t, 3, 3)
	ctx := testCtx(t)
	clustertest.WaitLeader(t, nodes[0].Host, group)

	var (
		mu      sync.Mutex
		history []porcupine.Operation
		start   = time.Now()
	)
	now := func() int64 { return int64(time.Since(start)) }
	record := func(op porcupine.Operation) {
		mu.Lock()
		history = append(history, op)
		mu.Unlock()
	}

	// hostMu guards nodes[2] while it is swapped: the third client takes
	// a read lock per operation and skips while the host is down.
	var hostMu sync.RWMutex
	down := false
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for c := 0; c < 3; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), 17))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				hostMu.RLock()
				if c == 2 && down {
					hostMu.RUnlock()
					time.Sleep(5 * time.Millisecond)
					continue
				}
				h := nodes[c].Host
				in := registerInput{write: rng.IntN(2) == 0, value: fmt.Sprintf("c%d-%d", c, i)}
				opCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
				call := now()
				var out registerOutput
				var err error
				if in.write {
					err = putOnce(opCtx, h, "reg", in.value)
				} else {
					out.value, _, err = clustertest.Get(opCtx, h, group, "reg")
				}
				ret := now()
				cancel()
				hostMu.RUnlock()
				switch {
				case err == nil:
					record(porcupine.Operation{ClientId: c, Input: in, Call: call, Output: out, Return: ret})
				case in.write:
					// Unknown outcome: a proposal that failed in any way
					// (a timeout, a deadline too short for another try
					// after a dropped one) may still have been appended,
					// and apply at any later time.
					record(porcupine.Operation{ClientId: c, Input: in, Call: call, Output: out, Return: 1 << 62})
				}
			}
		}(c)
	}

	time.Sleep(700 * time.Millisecond)
	hostMu.Lock()
	down = true
	dir, addr := nodes[2].Dir, nodes[2].Addr
	nodes[2].Stop()
	hostMu.Unlock()

	time.Sleep(700 * time.Millisecond)
	hostMu.Lock()
	nodes[2] = clustertest.StartNode(t, dir, addr, nil)
	restartReplica(t, nodes[2], 3)
	down = false
	hostMu.Unlock()

	time.Sleep(700 * time.Millisecond)
	close(stop)
	wg.Wait()

	writes, reads := 0, 0
	for _, op := range history {
		if op.Input.(registerInput).write {
			writes++
		} else {
			reads++
		}
	}
	t.Logf("%d writes, %d reads", writes, reads)
	if writes < 10 || reads < 10 {
		t.Fatalf("history too short to check: %d writes, %d reads", writes, reads)
	}
	res := porcupine.CheckOperationsTimeout(registerModel, history, 20*time.Second)
	if res != porcupine.Ok {
		t.Fatalf("history of %d operations is not linearizable: %v", len(history), res)
	}
}
