package sql

// ShardBoundaries returns the start key of every shard of every table and
// index (each shard map's pivots, pivot 0 being the table's prefix), in
// no particular order. A cluster's serving node splits its shard groups
// at these keys (cluster/shardrepl's split reconciler, through
// cmd/pivotdb), so each partition shard is a Raft group of its own and no
// table shares a group with another. It reads the in-memory maps only,
// so it is cheap to call often, and it sees DDL and partition's splits as
// soon as they are installed.
func (e *Engine) ShardBoundaries() [][]byte {
	var out [][]byte
	for _, id := range e.shards.Tables() {
		if m := e.shards.Map(id); m != nil {
			out = append(out, m.Pivots()...)
		}
	}
	return out
}
