package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/cluster/clustertest"
	"github.com/pivotdb/pivotdb/cluster/kvsm"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage/storagetest"
)

// The nemesis test runs nodes as separate processes: the test binary
// re-executes itself with nemesisNodeEnv set, and TestMain runs a node with
// a small HTTP API of register reads and writes instead of the tests.
const nemesisNodeEnv = "PIVOTDB_NEMESIS_NODE"

func TestMain(m *testing.M) {
	if os.Getenv(nemesisNodeEnv) != "" {
		runNemesisNode()
		return
	}
	os.Exit(m.Run())
}

// runNemesisNode runs one node until it is killed. Its configuration comes
// from the environment: data directory, addresses, join list, HTTP address.
func runNemesisNode() {
	clustertest.QuietEngine()
	cfg := Config{
		DataDir:  os.Getenv("NODE_DIR"),
		Addr:     os.Getenv("NODE_ADDR"),
		RaftAddr: os.Getenv("NODE_RAFT_ADDR"),
		Join:     strings.Split(os.Getenv("NODE_JOIN"), ","),
		Logf:     log.Printf,
		Store:    &pebble.Options{Logger: storagetest.QuietLogger{}},
		// Frequent snapshot points: kills then land between a compaction
		// of the log and the state machine's sync, and a restarted node
		// may catch up from a snapshot.
		Raft: raft.HostConfig{SnapshotEntries: 200, CompactionOverhead: 50},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	n, err := Start(ctx, cfg)
	cancel()
	if err != nil {
		log.Fatal(err)
	}
	h := n.Host()
	mux := http.NewServeMux()
	mux.HandleFunc("/get", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		v, err := h.Read(ctx, MetaGroup, kvsm.Get{Key: []byte("test/" + r.FormValue("key"))})
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Write(v.(kvsm.GetResult).Value)
	})
	mux.HandleFunc("POST /put", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		_, err := propose(ctx, h, kvsm.Op{Kind: kvsm.OpPut, Key: []byte("test/" + r.FormValue("key")), Value: []byte(r.FormValue("value"))})
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
	})
	log.Printf("node %d ready", n.Identity().NodeID)
	log.Fatal(http.ListenAndServe(os.Getenv("NODE_HTTP"), mux))
}

// nemesisProc is one node process of the nemesis test.
type nemesisProc struct {
	env     []string
	http    string
	logPath string

	mu      sync.Mutex
	cmd     *exec.Cmd
	stopped bool // SIGSTOPped
}

func (p *nemesisProc) start(t *testing.T) {
	t.Helper()
	logf, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), nemesisNodeEnv+"=1"), p.env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { cmd.Wait(); logf.Close() }()
	p.mu.Lock()
	p.cmd = cmd
	p.mu.Unlock()
}

func (p *nemesisProc) signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && p.cmd.Process != nil {
		p.cmd.Process.Signal(sig)
	}
}

// waitReady waits until the node answers a read.
func (p *nemesisProc) waitReady(t *testing.T, client *http.Client) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if resp, err := client.Get("http://" + p.http + "/get?key=ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	out, _ := os.ReadFile(p.logPath)
	t.Fatalf("node at %s not ready; its log:\n%s", p.http, out)
}

type kvInput struct {
	key   string
	write bool
	value string
}

type kvOutput struct{ value string }

// kvModel is a map of registers, checked key by key (Partition).
var kvModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		for _, op := range history {
			k := op.Input.(kvInput).key
			byKey[k] = append(byKey[k], op)
		}
		var out [][]porcupine.Operation
		for _, ops := range byKey {
			out = append(out, ops)
		}
		return out
	},
	Init: func() any { return "" },
	Step: func(state, input, output any) (bool, any) {
		in := input.(kvInput)
		if in.write {
			return true, in.value
		}
		return output.(kvOutput).value == state.(string), state
	},
	DescribeOperation: func(input, output any) string {
		in := input.(kvInput)
		if in.write {
			return fmt.Sprintf("put(%s, %q)", in.key, in.value)
		}
		return fmt.Sprintf("get(%s) -> %q", in.key, output.(kvOutput).value)
	},
}

// TestNemesis runs three node processes for PIVOTDB_NEMESIS_DURATION (make
// test-cluster) while a nemesis kills one with SIGKILL and restarts it, or
// freezes it with SIGSTOP and thaws it, one node at a time; clients read and
// write registers through all three, and the history is checked for
// linearizability with porcupine. Acknowledged writes survive every kill:
// a read after them must see them.
func TestNemesis(t *testing.T) {
	d := os.Getenv("PIVOTDB_NEMESIS_DURATION")
	if d == "" {
		t.Skip("set PIVOTDB_NEMESIS_DURATION (make test-cluster) to run the nemesis")
	}
	duration, err := time.ParseDuration(d)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	procs := make([]*nemesisProc, 3)
	var join []string
	addrs := make([]string, 3)
	for i := range procs {
		addrs[i] = clustertest.FreeAddr(t)
		join = append(join, addrs[i])
	}
	for i := range procs {
		procs[i] = &nemesisProc{
			http:    clustertest.FreeAddr(t),
			logPath: filepath.Join(dir, fmt.Sprintf("n%d.log", i+1)),
		}
		procs[i].env = []string{
			"NODE_DIR=" + filepath.Join(dir, fmt.Sprintf("n%d", i+1)),
			"NODE_ADDR=" + addrs[i],
			"NODE_RAFT_ADDR=" + clustertest.FreeAddr(t),
			"NODE_JOIN=" + strings.Join(join, ","),
			"NODE_HTTP=" + procs[i].http,
		}
		procs[i].start(t)
	}
	t.Cleanup(func() {
		for _, p := range procs {
			p.signal(syscall.SIGCONT)
			p.signal(syscall.SIGKILL)
		}
		if t.Failed() {
			t.Logf("node logs are in %s", dir)
		}
	})
	client := &http.Client{Timeout: 5 * time.Second}
	for _, p := range procs {
		p.waitReady(t, client)
	}

	var (
		mu      sync.Mutex
		history []porcupine.Operation
		start   = time.Now()
	)
	now := func() int64 { return int64(time.Since(start)) }
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for c := 0; c < 3; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), uint64(time.Now().UnixNano())))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				p := procs[(c+i)%3] // every client talks to every node
				in := kvInput{key: fmt.Sprint(rng.IntN(5)), write: rng.IntN(2) == 0, value: fmt.Sprintf("c%d-%d", c, i)}
				call := now()
				var resp *http.Response
				var err error
				if in.write {
					// A POST: Go's client replays a GET whose connection
					// broke, which would apply a write twice.
					resp, err = client.PostForm("http://"+p.http+"/put", url.Values{"key": {in.key}, "value": {in.value}})
				} else {
					resp, err = client.Get("http://" + p.http + "/get?key=" + in.key)
				}
				var body []byte
				ok := false
				if err == nil {
					body, _ = io.ReadAll(resp.Body)
					resp.Body.Close()
					ok = resp.StatusCode == http.StatusOK
				}
				ret := now()
				op := porcupine.Operation{ClientId: c, Input: in, Call: call, Output: kvOutput{string(body)}, Return: ret}
				switch {
				case ok:
				case !in.write:
					continue // a failed read tells nothing
				case isRefused(err):
					continue // never reached the node
				default:
					op.Return = 1 << 62 // unknown outcome: may apply any time later
				}
				mu.Lock()
				history = append(history, op)
				mu.Unlock()
				time.Sleep(5 * time.Millisecond)
			}
		}(c)
	}

	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	pause := func() { time.Sleep(time.Duration(500+rng.IntN(2500)) * time.Millisecond) }
	kills, freezes := 0, 0
	for time.Since(start) < duration {
		pause()
		p := procs[rng.IntN(3)]
		if rng.IntN(2) == 0 {
			p.signal(syscall.SIGKILL)
			kills++
			pause()
			p.start(t)
			p.waitReady(t, client)
		} else {
			p.signal(syscall.SIGSTOP)
			freezes++
			pause()
			p.signal(syscall.SIGCONT)
		}
	}
	for _, p := range procs {
		p.waitReady(t, client)
	}
	close(stop)
	wg.Wait()

	acked := 0
	for _, op := range history {
		if op.Input.(kvInput).write && op.Return != 1<<62 {
			acked++
		}
	}
	t.Logf("%d kills, %d freezes; %d operations, %d acknowledged writes", kills, freezes, len(history), acked)
	if acked < 10 {
		t.Fatalf("only %d writes were acknowledged", acked)
	}
	res := porcupine.CheckOperationsTimeout(kvModel, history, 5*time.Minute)
	if res != porcupine.Ok {
		t.Fatalf("the history of %d operations is not linearizable (%v)", len(history), res)
	}
}

func isRefused(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
