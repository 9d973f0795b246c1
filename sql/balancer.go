package sql

import (
	"github.com/pivotdb/pivotdb/partition"
)

// The automatic partitioning balancer (partition/balancer.go) runs in the
// background of an open Engine when Options.Balancer.Interval is positive
// (the server's --balancer-interval, 10 s by default). Engine.Open starts it
// after the shard maps are loaded; Engine.Close stops it before anything
// else, so that no split or merge runs while sessions and storage close.
//
// The balancer asks for each table's policy at every tick, and the answer
// comes from the table's settings in the current catalog snapshot: an ALTER
// TABLE ... SET (AUTO_PARTITIONING_...) that committed is seen by the next
// tick, without a restart.

// balancerPolicy is the balancer's partition.PolicyFunc: the table's
// AUTO_PARTITIONING_* settings (with their defaults) from the current
// catalog snapshot. Tables the catalog does not know (being created or
// dropped) are left alone.
func (e *Engine) balancerPolicy(tableID uint64) (partition.Policy, bool) {
	t, ok := e.catalog.Snapshot().TableByID(tableID)
	if !ok {
		return partition.Policy{}, false
	}
	s := t.Settings
	return partition.Policy{
		BySize:     s.BySize(),
		SplitBytes: s.PartitionSizeBytes(),
		MinShards:  s.MinPartitions(),
		SplitToMin: s.MinPartitionsCount != nil,
		MaxShards:  s.MaxPartitions(),
		ByLoad:     s.ByLoad(),
	}, true
}

// startBalancer starts the balancer if the options ask for one.
func (e *Engine) startBalancer() {
	opts := e.opts.Balancer
	if opts.Interval <= 0 {
		return
	}
	if opts.Logger == nil {
		opts.Logger = e.opts.Events
	}
	e.balancer = partition.NewBalancer(e.shards, e.balancerPolicy, opts)
	e.balancer.Start()
}

// stopBalancer stops the balancer, waiting for a split or merge in
// progress.
func (e *Engine) stopBalancer() {
	if e.balancer != nil {
		e.balancer.Stop()
	}
}
