package hlc

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// manualClock is a physical clock the test sets by hand.
type manualClock struct{ ns atomic.Int64 }

func (m *manualClock) now() int64   { return m.ns.Load() }
func (m *manualClock) set(ns int64) { m.ns.Store(ns) }

func mustNow(t *testing.T, c *Clock) Timestamp {
	t.Helper()
	ts, err := c.Now()
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestClockFollowsPhysicalAndCountsLogical(t *testing.T) {
	var m manualClock
	m.set(1000)
	c, err := NewClock(Config{Physical: m.now})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		phys int64
		want Timestamp
	}{
		{1000, Timestamp{1000, 0}},
		{1000, Timestamp{1000, 1}}, // physical clock did not move: logical counts
		{999, Timestamp{1000, 2}},  // physical clock went back: still forward
		{2000, Timestamp{2000, 0}}, // physical clock moved: logical resets
	}
	for i, s := range steps {
		m.set(s.phys)
		if got := mustNow(t, c); got != s.want {
			t.Fatalf("step %d: Now() = %v, want %v", i, got, s.want)
		}
	}
}

func TestClockUpdate(t *testing.T) {
	var m manualClock
	m.set(1000)
	c, err := NewClock(Config{Physical: m.now, MaxOffset: 500})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Update(Timestamp{1400, 7}); err != nil {
		t.Fatal(err)
	}
	if got, want := mustNow(t, c), (Timestamp{1400, 8}); got != want {
		t.Fatalf("Now after Update = %v, want %v", got, want)
	}
	// An older remote timestamp changes nothing.
	if err := c.Update(Timestamp{10, 0}); err != nil {
		t.Fatal(err)
	}
	if got, want := mustNow(t, c), (Timestamp{1400, 9}); got != want {
		t.Fatalf("Now after old Update = %v, want %v", got, want)
	}
	// Beyond the maximum offset: refused, and the clock does not move.
	err = c.Update(Timestamp{1501, 0})
	var oe *OffsetError
	if !errors.As(err, &oe) {
		t.Fatalf("Update far ahead: err = %v, want OffsetError", err)
	}
	if got := c.Last(); got != (Timestamp{1400, 9}) {
		t.Fatalf("clock moved on a refused Update: %v", got)
	}
}

// TestClockConcurrent checks under -race that timestamps are unique and
// ascend per goroutine while many goroutines call Now and Update.
func TestClockConcurrent(t *testing.T) {
	dir := t.TempDir()
	c, err := NewClock(Config{Store: FileStore{Path: filepath.Join(dir, "hlc")}, PersistAhead: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// A background write of the mark may be in flight when the test
	// ends; Close waits for it before TempDir's cleanup.
	defer c.Close()
	const goroutines, perG = 8, 2000
	results := make([][]Timestamp, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perG {
				ts, err := c.Now()
				if err != nil {
					t.Error(err)
					return
				}
				results[g] = append(results[g], ts)
				if i%100 == 0 {
					if err := c.Update(Timestamp{WallTime: ts.WallTime, Logical: ts.Logical + 50}); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	seen := map[Timestamp]bool{}
	for g, r := range results {
		for i, ts := range r {
			if seen[ts] {
				t.Fatalf("timestamp %v handed out twice", ts)
			}
			seen[ts] = true
			if i > 0 && !r[i-1].Less(ts) {
				t.Fatalf("goroutine %d: %v after %v", g, ts, r[i-1])
			}
		}
	}
}

// TestClockRestart: a clock restarted on the same high-water file hands out
// only later timestamps, even when the physical clock went back.
func TestClockRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hlc")
	var m manualClock
	m.set(int64(time.Hour))
	c1, err := NewClock(Config{Physical: m.now, Store: FileStore{Path: path}, PersistAhead: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var last Timestamp
	for i := range 10 {
		m.set(int64(time.Hour) + int64(i)*int64(300*time.Millisecond))
		last = mustNow(t, c1)
	}
	// "Restart" with the physical clock set back a minute.
	m.set(int64(time.Hour - time.Minute))
	c2, err := NewClock(Config{Physical: m.now, Store: FileStore{Path: path}, PersistAhead: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustNow(t, c2); !last.Less(got) {
		t.Fatalf("after restart Now() = %v, not after %v", got, last)
	}
	// And once the physical clock passes the mark, it follows it again.
	m.set(int64(2 * time.Hour))
	if got := mustNow(t, c2); got != (Timestamp{WallTime: int64(2 * time.Hour)}) {
		t.Fatalf("Now() = %v, want the physical time", got)
	}
}

// failingStore fails every Store after the first n.
type failingStore struct {
	mu   sync.Mutex
	hw   int64
	left int
}

func (f *failingStore) Load() (int64, error) { return f.hw, nil }
func (f *failingStore) Store(w int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.left == 0 {
		return errors.New("disk full")
	}
	f.left--
	f.hw = w
	return nil
}

// TestClockPersistFailure: when the mark cannot be written the clock returns
// ErrPersist and hands out nothing at or beyond the persisted mark.
func TestClockPersistFailure(t *testing.T) {
	var m manualClock
	m.set(1000)
	st := &failingStore{left: 1}
	c, err := NewClock(Config{Physical: m.now, Store: st, PersistAhead: 100})
	if err != nil {
		t.Fatal(err)
	}
	if ts := mustNow(t, c); ts.WallTime >= st.hw {
		t.Fatalf("handed out %v at or beyond the mark %d", ts, st.hw)
	}
	m.set(1099)
	if ts := mustNow(t, c); ts.WallTime >= st.hw {
		t.Fatalf("handed out %v at or beyond the mark %d", ts, st.hw)
	}
	m.set(1100)
	if _, err := c.Now(); !errors.Is(err, ErrPersist) {
		t.Fatalf("Now past the mark with a failing store: err = %v, want ErrPersist", err)
	}
	if err := c.Update(Timestamp{WallTime: 5000}); !errors.Is(err, ErrPersist) {
		t.Fatalf("Update past the mark with a failing store: err = %v, want ErrPersist", err)
	}
	if got := c.Last(); got.WallTime >= st.hw {
		t.Fatalf("clock at %v, beyond the persisted mark %d", got, st.hw)
	}
}

func TestFileStoreRejectsGarbage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hlc")
	if w, err := (FileStore{Path: path}).Load(); err != nil || w != 0 {
		t.Fatalf("missing file: Load() = %d, %v; want 0, nil", w, err)
	}
	if err := os.WriteFile(path, []byte("12345\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (FileStore{Path: path}).Load(); err == nil {
		t.Fatal("Load accepted a file without the header")
	}
	if _, err := NewClock(Config{Store: FileStore{Path: path}}); err == nil {
		t.Fatal("NewClock accepted a corrupt high-water file")
	}
}

func TestTimestampStringParse(t *testing.T) {
	for _, ts := range []Timestamp{{1, 0}, {1700000000000000123, 4}, {999999999, 2147483647}, MaxTimestamp} {
		s := ts.String()
		got, err := ParseTimestamp(s)
		if err != nil || got != ts {
			t.Fatalf("ParseTimestamp(%q) = %v, %v; want %v", s, got, err, ts)
		}
	}
	if got, err := ParseTimestamp("12.5"); err != nil || got != (Timestamp{WallTime: 12_500_000_000}) {
		t.Fatalf(`ParseTimestamp("12.5") = %v, %v`, got, err)
	}
	for _, bad := range []string{"", "x", "1.2.3", "1,-1", "1.0123456789", "-1", "+1", "1,+2", "99999999999999999999"} {
		if _, err := ParseTimestamp(bad); err == nil {
			t.Errorf("ParseTimestamp(%q) accepted", bad)
		}
	}
}

func TestTimestampNextPrev(t *testing.T) {
	for _, ts := range []Timestamp{{5, 0}, {5, 3}, {5, 2147483647}} {
		if n := ts.Next(); !ts.Less(n) || n.Prev() != ts {
			t.Fatalf("%v: Next %v, Next.Prev %v", ts, n, n.Prev())
		}
	}
}

// gatedStore blocks every Store until the test lets it through.
type gatedStore struct {
	mu      sync.Mutex
	hw      int64
	gate    chan struct{}
	started chan int64
}

func (g *gatedStore) Load() (int64, error) { return 0, nil }
func (g *gatedStore) Store(w int64) error {
	g.started <- w
	<-g.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	g.hw = w
	return nil
}

// TestClockPersistsInBackground: past half of PersistAhead the mark moves
// in the background and Now does not wait for it; at the mark Now waits,
// and timestamps stay unique across the wait.
func TestClockPersistsInBackground(t *testing.T) {
	var m manualClock
	st := &gatedStore{gate: make(chan struct{}), started: make(chan int64, 4)}
	c, err := NewClock(Config{Physical: m.now, Store: st, PersistAhead: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m.set(1000)
	go func() { <-st.started; st.gate <- struct{}{} }() // the first, synchronous write
	first := mustNow(t, c)                              // mark now 1100
	m.set(1060)                                         // past half the margin: a background write starts
	second := mustNow(t, c)
	if w := <-st.started; w != 1160 {
		t.Fatalf("background write of %d, want 1160", w)
	}
	m.set(1099)
	third := mustNow(t, c) // below the mark: no waiting although the write hangs
	if !(first.Less(second) && second.Less(third)) {
		t.Fatalf("timestamps %v %v %v not ascending", first, second, third)
	}
	// At the mark two callers must wait for the background write.
	m.set(1100)
	results := make(chan Timestamp, 2)
	for range 2 {
		go func() {
			ts, err := c.Now()
			if err != nil {
				t.Error(err)
			}
			results <- ts
		}()
	}
	st.gate <- struct{}{} // let the background write finish: mark 1160
	a, b := <-results, <-results
	if a == b || !third.Less(a) || !third.Less(b) {
		t.Fatalf("after the wait: %v and %v (last before %v)", a, b, third)
	}
	if st.hw != 1160 {
		t.Fatalf("persisted mark %d, want 1160", st.hw)
	}
}
