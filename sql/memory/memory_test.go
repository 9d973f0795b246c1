package memory

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

func TestAccountLimits(t *testing.T) {
	m := NewMonitor("--max-memory", 1000)
	m.ReserveChunk = 0 // exact, so that the monitor's total is the accounts'
	a := m.NewAccount("statement", 600)
	b := m.NewAccount("statement", 0)
	if err := a.Grow(500, "x"); err != nil {
		t.Fatal(err)
	}
	// Over the account's own limit: nothing is reserved.
	if err := a.Grow(101, "an IN list"); sqlerr.Code(err) != sqlerr.OutOfMemory {
		t.Fatalf("over the statement limit: %v", err)
	}
	if a.Used() != 500 || m.Used() != 500 {
		t.Fatalf("after a refused grow: account %d, monitor %d", a.Used(), m.Used())
	}
	// Over the monitor's limit through another account.
	if err := b.Grow(501, "parsing"); sqlerr.Code(err) != sqlerr.OutOfMemory {
		t.Fatalf("over the server limit: %v", err)
	}
	if b.Used() != 0 || m.Used() != 500 {
		t.Fatalf("after a refused grow: account %d, monitor %d", b.Used(), m.Used())
	}
	if err := b.Grow(500, "parsing"); err != nil {
		t.Fatal(err)
	}
	a.Shrink(200)
	if m.Used() != 800 || m.Peak() != 1000 {
		t.Fatalf("monitor used %d peak %d", m.Used(), m.Peak())
	}
	a.Close()
	a.Close()
	b.Close()
	if m.Used() != 0 {
		t.Fatalf("monitor holds %d after every account closed", m.Used())
	}
	if err := a.Grow(1, "x"); sqlerr.Code(err) != sqlerr.InternalError {
		t.Fatalf("grow after close: %v", err)
	}
}

func TestChildAccounts(t *testing.T) {
	m := NewMonitor("--max-memory", 0)
	m.ReserveChunk = 0
	stmt := m.NewAccount("statement", 100)
	part := stmt.Child("sort", 50)
	if err := part.Grow(40, "rows"); err != nil {
		t.Fatal(err)
	}
	if err := part.Grow(20, "rows"); sqlerr.Code(err) != sqlerr.OutOfMemory {
		t.Fatalf("child over its limit: %v", err)
	}
	if err := stmt.Grow(70, "parsing"); sqlerr.Code(err) != sqlerr.OutOfMemory {
		t.Fatalf("parent over its limit with the child's bytes: %v", err)
	}
	if stmt.Used() != 40 || m.Used() != 40 {
		t.Fatalf("statement %d monitor %d", stmt.Used(), m.Used())
	}
	part.Close()
	if stmt.Used() != 0 || m.Used() != 0 {
		t.Fatalf("after closing the child: statement %d monitor %d", stmt.Used(), m.Used())
	}
	stmt.Close()
}

// TestReserveChunks checks that root accounts take the monitor's bytes in
// chunks, fall back to the exact need near the limit, keep at most two
// chunks of slack when they shrink and give everything back on Close.
func TestReserveChunks(t *testing.T) {
	const chunk = 64 << 10
	m := NewMonitor("--max-memory", 200<<10)
	a := m.NewAccount("statement", 0)
	if err := a.Grow(1, "x"); err != nil || m.Used() != chunk {
		t.Fatalf("first byte: %v, monitor %d", err, m.Used())
	}
	if err := a.Grow(chunk-1, "x"); err != nil || m.Used() != chunk {
		t.Fatalf("within the chunk: %v, monitor %d", err, m.Used())
	}
	if err := a.Grow(100<<10, "x"); err != nil || m.Used() != chunk+100<<10 {
		t.Fatalf("a request above a chunk takes what it needs: %v, monitor %d", err, m.Used())
	}
	b := m.NewAccount("statement", 0)
	// 36 KB are left: less than a chunk, but enough for 30 KB.
	if err := b.Grow(30<<10, "x"); err != nil || m.Used() != chunk+130<<10 {
		t.Fatalf("near the limit: %v, monitor %d", err, m.Used())
	}
	if err := b.Grow(7<<10, "x"); sqlerr.Code(err) != sqlerr.OutOfMemory {
		t.Fatalf("over the limit: %v", err)
	}
	a.Shrink(160 << 10) // a holds 4 KB of 164 KB: it keeps one chunk
	if a.Used() != 4<<10 || m.Used() != 4<<10+chunk+30<<10 {
		t.Fatalf("after shrinking: account %d, monitor %d", a.Used(), m.Used())
	}
	a.Close()
	b.Close()
	if m.Used() != 0 {
		t.Fatalf("monitor holds %d after Close", m.Used())
	}
}

func TestNilAccount(t *testing.T) {
	var a *Account
	if err := a.Grow(1<<40, "x"); err != nil {
		t.Fatal(err)
	}
	a.Shrink(1)
	a.Close()
	if a.Child("c", 1) != nil || a.Used() != 0 {
		t.Fatal("nil account")
	}
	if FromContext(context.Background()) != nil {
		t.Fatal("an empty context has an account")
	}
	m := NewMonitor("m", 0)
	acc := m.NewAccount("a", 0)
	if FromContext(WithAccount(context.Background(), acc)) != acc {
		t.Fatal("WithAccount/FromContext")
	}
}

// TestConcurrentAccounts grows and shrinks many accounts at once (run with
// -race): the monitor never exceeds its limit and ends at zero.
func TestConcurrentAccounts(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	const limit = 10000
	m := NewMonitor("--max-memory", limit)
	m.FreeOSThreshold = 0
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(g)))
			for i := 0; i < 500; i++ {
				a := m.NewAccount("statement", 3000)
				for j := 0; j < 5; j++ {
					if a.Grow(rng.Int64N(1500), "x") == nil && rng.IntN(2) == 0 {
						a.Shrink(rng.Int64N(500))
					}
					if u := m.Used(); u > limit {
						t.Errorf("monitor holds %d > %d", u, limit)
					}
				}
				a.Close()
			}
		}(g)
	}
	wg.Wait()
	if m.Used() != 0 || m.Peak() > limit {
		t.Fatalf("used %d peak %d", m.Used(), m.Peak())
	}
}

func TestFreeOSAfterLargeRelease(t *testing.T) {
	var mu sync.Mutex
	runs := 0
	m := NewMonitor("m", 0)
	m.freer.run = func() { mu.Lock(); runs++; mu.Unlock() }
	m.FreeOSThreshold = 100
	m.FreeOSInterval = 50 * time.Millisecond
	small := m.NewAccount("a", 0)
	small.Grow(99, "x")
	small.Close()
	// A burst of large releases coalesces into few runs, and one run
	// follows the last of them.
	for i := 0; i < 20; i++ {
		a := m.NewAccount("a", 0)
		a.Grow(100, "x")
		a.Close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for m.FreeOSRuns() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if runs == 0 || runs > 2 {
		t.Fatalf("%d runs for a burst of 20 large releases", runs)
	}
}

func TestParseEstimate(t *testing.T) {
	if got := ParseEstimate("SELECT 1"); got != 8*ParseBytesPerByte {
		t.Errorf("SELECT 1: %d", got)
	}
	if got := ParseEstimate("1,2,3"); got != 5*ParseBytesPerByte+2*ParseBytesPerItem {
		t.Errorf("1,2,3: %d", got)
	}
}
