package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/pivotdb/pivotdb/cluster/node"
	"github.com/pivotdb/pivotdb/cluster/shardrepl"
	"github.com/pivotdb/pivotdb/metrics"
)

// serve's --max-offset (issue 17 item 6): the bound on the clock offset
// between cluster nodes (cluster/node/clockoffset.go). A node whose clock
// is off by more than 80% of it from a majority of the nodes it hears from
// does not serve SQL (cluster/shardrepl/clockgate.go), nor follower reads
// (follower.go). It needs --join: a node without it has no other clock.

// maxMaxOffset bounds --max-offset from above: a bound of more than a few
// seconds tolerates clocks that no synchronisation leaves so far apart,
// and keeps the HLC that far from real time.
//
// Follower reads: follower_read_timestamp() reads the closed-timestamp
// target T plus 3/5 of it in the past by the follower's clock, and waits
// until the follower's closed timestamp (the serving node's clock less T,
// published every 200 ms) reaches it. A follower whose clock is ahead by
// more than about 3/5 T - 200 ms (1.6 s for T = 3 s) therefore waits, and
// fails with 55000 after the wait; it never reads past what is closed.
const maxMaxOffset = 10 * time.Second

func addMaxOffsetFlag(fs *flag.FlagSet) *time.Duration {
	return fs.Duration("max-offset", node.DefaultMaxOffset,
		"the largest clock offset tolerated between nodes: a node whose clock is off by more than 80% of it from a majority "+
			"of the nodes does not serve SQL (give every node the same value); with --join")
}

func (c clusterFlags) checkMaxOffset() error {
	d := *c.maxOffset
	switch {
	case d <= 0:
		return fmt.Errorf("--max-offset %s: it must be positive", d)
	case d < time.Millisecond:
		return fmt.Errorf("--max-offset %s: it must be at least 1ms (a ping's round trip alone is about that)", d)
	case d > maxMaxOffset:
		return fmt.Errorf("--max-offset %s: it may be at most %s", d, maxMaxOffset)
	}
	return nil
}

// clockSource returns the wall clock of a cluster node: the system's, or
// the one cluster/node's clock-shift testing knob moves (a warning says
// so).
func clockSource(log *slog.Logger) (func() int64, error) {
	physical, knob, err := node.TestingClockFromEnv(context.Background())
	if err != nil {
		return nil, err
	}
	if knob != "" {
		log.Warn("TESTING KNOB: this node's clock is shifted (for tests only; unset it in production)", "knob", knob)
	}
	return physical, nil
}

// checkNoClockKnob refuses the clock-shift testing knob on a server
// without --join, which has no clock offsets to test.
func checkNoClockKnob() error {
	for _, name := range []string{node.TestingClockShiftEnv, node.TestingClockShiftFileEnv} {
		if os.Getenv(name) != "" {
			return fmt.Errorf("%s is a testing knob of cluster nodes (--join); unset it", name)
		}
	}
	return nil
}

// clockFigures are the node's clock figures for /metrics.
func clockFigures(cl *shardrepl.Cluster) metrics.ClockFigures {
	m := cl.Node.Clocks()
	return metrics.ClockFigures{MaxOffset: m.MaxOffset(), MaxSeen: m.MaxSeen(), Off: cl.ClockError() != nil}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
