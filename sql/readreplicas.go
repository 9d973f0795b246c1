package sql

import (
	"github.com/pivotdb/pivotdb/sql/tablesettings"
	"github.com/pivotdb/pivotdb/storage"
)

// ReadReplicaSpan is the row-key span of a table, or of one of its
// secondary indexes, whose READ_REPLICAS_SETTINGS asks for read replicas.
type ReadReplicaSpan struct {
	Start, End []byte
	Setting    tablesettings.ReadReplicas
}

// ReadReplicaSpans lists the spans of every table with a
// READ_REPLICAS_SETTINGS and of its indexes (an index's entries are read
// with its table, so they get the same replicas). A cluster's placement
// gives each shard group the most that the spans it overlaps ask for
// (cmd/pivotdb passes this to cluster/shardrepl). It reads the catalog in
// memory only, so it is cheap to call every placement round.
func (e *Engine) ReadReplicaSpans() []ReadReplicaSpan {
	snap := e.catalog.Snapshot()
	var out []ReadReplicaSpan
	for _, db := range snap.Databases() {
		for _, t := range snap.Tables(db.ID) {
			rr := t.Settings.ReadReplicas
			if rr == nil || rr.Count <= 0 {
				continue
			}
			ids := []uint64{t.ID}
			for _, ix := range t.Indexes {
				ids = append(ids, ix.ID)
			}
			for _, id := range ids {
				sp := storage.TableSpan(id)
				out = append(out, ReadReplicaSpan{Start: sp.Start, End: sp.End, Setting: *rr})
			}
		}
	}
	return out
}
