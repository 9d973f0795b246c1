package server

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pivotdb/pivotdb/activity"
)

// syncBuffer is a log sink safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// recordingObserver records what the server reports.
type recordingObserver struct {
	mu             sync.Mutex
	opened, closed int
	refused        []string
	tags           []string
	failed         int
}

func (o *recordingObserver) ConnectionOpened() { o.mu.Lock(); o.opened++; o.mu.Unlock() }
func (o *recordingObserver) ConnectionClosed() { o.mu.Lock(); o.closed++; o.mu.Unlock() }
func (o *recordingObserver) ConnectionRefused(r string) {
	o.mu.Lock()
	o.refused = append(o.refused, r)
	o.mu.Unlock()
}
func (o *recordingObserver) StatementDone(tag string, _ time.Duration, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.tags = append(o.tags, tag)
	if err != nil {
		o.failed++
	}
}

func TestObserverSlowQueryLogAndRegistry(t *testing.T) {
	var logBuf syncBuffer
	obs := &recordingObserver{}
	reg := activity.NewRegistry()
	ts := startServer(t, Config{Logger: slog.New(slog.NewTextHandler(&logBuf, nil)), Observer: obs, Activity: reg,
		SlowQueryThreshold: 500 * time.Millisecond, MaxConnections: 1}, nil)
	c, err := pgconn.Connect(testContext(t), ts.connString(""))
	if err != nil {
		t.Fatal(err)
	}
	if bs := reg.List(); len(bs) != 1 || bs[0].PID != c.PID() || bs[0].State != activity.StateIdle {
		t.Fatalf("registry after connect: %+v", bs)
	}
	// A second connection is over MaxConnections: refused and counted.
	if c2, err := pgconn.Connect(testContext(t), ts.connString("")); err == nil {
		c2.Close(testContext(t))
		t.Fatal("second connection admitted")
	}
	if _, err := c.Exec(testContext(t), "SELECT 1; SELECT pg_sleep(1)").ReadAll(); err != nil {
		t.Fatal(err)
	}
	c.Exec(testContext(t), "SELECT 1/0").ReadAll()
	c.Close(testContext(t))
	waitUntil(t, func() bool {
		obs.mu.Lock()
		defer obs.mu.Unlock()
		return len(reg.List()) == 0 && obs.closed == 1
	})

	obs.mu.Lock()
	defer obs.mu.Unlock()
	if obs.opened != 1 || obs.closed != 1 || len(obs.refused) != 1 || obs.refused[0] != "too_many" {
		t.Errorf("connections: opened %d closed %d refused %v", obs.opened, obs.closed, obs.refused)
	}
	if len(obs.tags) != 3 || obs.tags[0] != "SELECT 1" || obs.tags[1] != "SELECT 1" || obs.failed != 1 {
		t.Errorf("statements: %q, %d failed", obs.tags, obs.failed)
	}
	log := logBuf.String()
	if strings.Count(log, `msg="slow query"`) != 1 || !strings.Contains(log, `query="SELECT pg_sleep(1)"`) {
		t.Errorf("slow-query log:\n%s", log)
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(testTimeout); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}
