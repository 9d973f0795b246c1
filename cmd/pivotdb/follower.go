package main

import (
	"flag"
	"time"

	"github.com/pivotdb/pivotdb/cluster/shardrepl"
)

// minClosedTarget bounds --closed-timestamp-target from below: a closed
// timestamp is published every 200 ms, so a smaller target would not make
// follower reads any fresher.
const minClosedTarget = 200 * time.Millisecond

func addClosedTargetFlag(fs *flag.FlagSet) *time.Duration {
	return fs.Duration("closed-timestamp-target", shardrepl.DefaultClosedTarget,
		"how far the closed timestamps the serving node publishes trail its clock; follower reads "+
			"(follower_read_timestamp(), stale read-only sessions) read this much plus a margin in the past; with --join")
}
