package bind

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/pgcatalog"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// partitionColumns are the columns of sys.partitions (design.md §5).
var partitionColumns = []planner.Column{
	{Name: "table_name", Type: types.TypeUtf8},
	{Name: "partition_index", Type: types.TypeInt64},
	{Name: "shard_id", Type: types.TypeInt64},
	{Name: "start_key", Type: types.TypeUtf8},
	{Name: "end_key", Type: types.TypeUtf8},
	{Name: "data_size_bytes", Type: types.TypeInt64},
	{Name: "row_count", Type: types.TypeInt64},
	{Name: "reads", Type: types.TypeInt64},
	{Name: "writes", Type: types.TypeInt64},
	{Name: "ttl_last_run", Type: types.TypeTimestamp},
	{Name: "ttl_rows_erased", Type: types.TypeInt64},
	// splits and merges are the table's persisted reshape counters
	// (partition.TableCounters), the same on every row of a table: shards
	// added by splits and shards removed by merges since the table was
	// created, automatic or by statement.
	{Name: "splits", Type: types.TypeInt64},
	{Name: "merges", Type: types.TypeInt64},
	// key_bloom_filter is the table's KEY_BLOOM_FILTER setting (false for
	// the rows of a secondary index, which has no filter) and
	// key_bloom_filter_bytes the size of the bloom filters its data has in
	// the live sstables (storage.Engine.KeyFilterBytes), per table like
	// splits and merges: Pebble's filters are per sstable, not per shard.
	// The bytes follow the setting as data is flushed and compacted, so
	// they lag an ALTER until the table's compaction has run.
	{Name: "key_bloom_filter", Type: types.TypeBool},
	{Name: "key_bloom_filter_bytes", Type: types.TypeInt64},
	// old_bytes and old_versions are what the shard's old versions take
	// (those a newer version shadows, and tombstones; engine key and
	// stored value), counted when the row is read; data_size_bytes is the
	// live size, which splits use. gc_threshold is the time below which
	// the shard's old versions may be gone (AS OF SYSTEM TIME before it
	// is refused); NULL until GC ran over the shard.
	{Name: "old_bytes", Type: types.TypeInt64},
	{Name: "old_versions", Type: types.TypeInt64},
	{Name: "gc_threshold", Type: types.TypeTimestamp},
	// lock_records counts the lock records in the shard's keys (locking
	// reads of open transaction blocks, and their locks not yet turned
	// into intents; storage/mvcc's lock table), counted when the row is
	// read, as old_versions is. They are neither rows nor data, so
	// row_count and data_size_bytes leave them out; nor are they
	// persisted counters: lock records are local to the node that holds
	// the locks (not replicated), so a count replicated with the shard
	// would be wrong on the other replicas.
	{Name: "lock_records", Type: types.TypeInt64},
	// On a cluster, group_id is the Raft shard group holding the shard's
	// first key (the serving node splits a group at every shard's start:
	// cluster/shardrepl's split reconciler; until its next round a new
	// shard shows the group it is being split from), leader_node_id the
	// node whose replica leads it, as the serving node knows (NULL while
	// none does), and replica_node_ids the nodes holding a replica,
	// ascending, comma-separated. read_replica_node_ids are the nodes
	// among them that placement chose to serve the group's stale reads
	// (READ_REPLICAS_SETTINGS; cluster/placement's readreplicas.go),
	// ascending, comma-separated, '' for none. On one node: NULL, 1, '1'
	// and ''.
	{Name: "group_id", Type: types.TypeInt64},
	{Name: "leader_node_id", Type: types.TypeInt64},
	{Name: "replica_node_ids", Type: types.TypeUtf8},
	{Name: "read_replica_node_ids", Type: types.TypeUtf8},
}

// JobColumns are the columns of sys.jobs and SHOW JOBS: CockroachDB's, plus
// the progress in rows (rows_total NULL while unknown) and whether CANCEL
// JOB can stop the job now; running_status and next_run (CockroachDB's)
// say what a running job waits for and when it acts next (a GC job of a
// dropped table: "waiting for GC TTL" until its time).
var JobColumns = []planner.Column{
	{Name: "job_id", Type: types.TypeInt64},
	{Name: "job_type", Type: types.TypeUtf8},
	{Name: "description", Type: types.TypeUtf8},
	{Name: "user_name", Type: types.TypeUtf8},
	{Name: "status", Type: types.TypeUtf8},
	{Name: "created", Type: types.TypeTimestamp},
	{Name: "started", Type: types.TypeTimestamp},
	{Name: "finished", Type: types.TypeTimestamp},
	{Name: "modified", Type: types.TypeTimestamp},
	{Name: "fraction_completed", Type: types.TypeDouble},
	{Name: "error", Type: types.TypeUtf8},
	{Name: "rows_done", Type: types.TypeInt64},
	{Name: "rows_total", Type: types.TypeInt64},
	{Name: "cancelable", Type: types.TypeBool},
	{Name: "running_status", Type: types.TypeUtf8},
	{Name: "next_run", Type: types.TypeTimestamp},
}

// isPartitionsView reports whether a table name is sys.partitions or YDB's
// `.sys/partition_stats`.
func isPartitionsView(tn *ast.TableName) bool {
	switch {
	case strings.EqualFold(tn.Schema.O, "sys") && strings.EqualFold(tn.Name.O, "partitions"):
		return true
	case tn.Schema.O == "" && strings.EqualFold(tn.Name.O, ".sys/partition_stats"):
		return true
	}
	return false
}

// systemTable resolves names of system views. ok is false for ordinary
// tables.
func (a *binder) systemTable(tn *ast.TableName, alias string) (planner.Node, *scope, bool, error) {
	if vt := pgcatalog.Lookup(tn.Schema.O, tn.Name.O); vt != nil {
		if vt.SuperuserOnly() && !a.access().Superuser() {
			return nil, nil, true, sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for table %s", vt.Name)
		}
		node := vt.Node(a.catalogView())
		return node, columnScope(node.Columns(), vt.Name, alias), true, nil
	}
	if q, ok := a.sequenceRelation(tn); ok {
		// PostgreSQL reads a sequence as a one-row relation; pg_dump
		// reads last_value and is_called so.
		node := &planner.Generate{Name: q.Name, Cols: SequenceColumns, Rows: func() ([][]types.Value, error) {
			if a.env.SequenceRow == nil {
				return nil, sqlerr.NotSupported("reading sequence %q as a relation here", q.Name)
			}
			r, err := a.env.SequenceRow(q)
			if err != nil {
				return nil, err
			}
			return [][]types.Value{r}, nil
		}}
		return node, columnScope(SequenceColumns, tn.Name.O, alias), true, nil
	}
	if strings.EqualFold(tn.Schema.O, "sys") && strings.EqualFold(tn.Name.O, "jobs") {
		node := &planner.Generate{Name: "sys.jobs", Cols: JobColumns, Rows: a.env.JobRows}
		return node, columnScope(JobColumns, tn.Name.O, alias), true, nil
	}
	if strings.EqualFold(tn.Schema.O, "sys") && strings.EqualFold(tn.Name.O, "nodes") {
		node := &planner.Generate{Name: "sys.nodes", Cols: NodeColumns, Rows: a.env.NodeRows}
		return node, columnScope(NodeColumns, tn.Name.O, alias), true, nil
	}
	if !isPartitionsView(tn) {
		return nil, nil, false, nil
	}
	sc := columnScope(partitionColumns, tn.Name.O, alias)
	node := &planner.Generate{Name: "sys.partitions", Cols: partitionColumns, Rows: a.env.PartitionRows}
	return node, sc, true, nil
}

// columnScope is the scope of a generated relation's columns, named by
// alias or, without one, by name.
func columnScope(cols []planner.Column, name, alias string) *scope {
	if alias == "" {
		alias = name
	}
	sc := &scope{}
	for _, c := range cols {
		sc.cols = append(sc.cols, scopeColumn{table: strings.ToLower(alias), name: c.Name, typ: c.Type, hidden: c.Hidden})
	}
	return sc
}

// SequenceColumns are the columns a sequence reads as in FROM.
var SequenceColumns = []planner.Column{
	{Name: "last_value", Type: types.TypeInt64},
	{Name: "log_cnt", Type: types.TypeInt64},
	{Name: "is_called", Type: types.TypeBool},
}

// sequenceRelation finds the sequence a table name in FROM names: the
// database's (schema public or none), when no table has the name.
func (a *binder) sequenceRelation(tn *ast.TableName) (*catalog.Sequence, bool) {
	if tn.Schema.O != "" && !strings.EqualFold(tn.Schema.O, "public") {
		return nil, false
	}
	if _, isTable := a.snap.Table(a.env.Database.ID, tn.Name.O); isTable {
		return nil, false
	}
	return a.snap.Sequence(a.env.Database.ID, tn.Name.O)
}
