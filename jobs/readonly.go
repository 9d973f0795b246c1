package jobs

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/pivotdb/pivotdb/meta"
	"github.com/pivotdb/pivotdb/storage"
)

// Load reads the registry without writing anything: for a follower's
// read-only SQL engine (sql.FollowerReads), whose store only its replicas
// write. Unlike Open it neither fails the jobs that were running (they
// run on the serving node) nor removes expired records; the registry
// shows them as the store holds them at the call.
func Load(store *meta.Store, now func() time.Time, log *slog.Logger) (*Registry, error) {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.Default()
	}
	r := &Registry{store: store, now: now, log: log, next: 1, jobs: map[int64]*Job{}}
	err := store.Scan(storage.Span{Start: meta.Jobs, End: storage.PrefixEnd(meta.Jobs)}, func(key, value []byte) error {
		var rec Record
		if err := json.Unmarshal(value, &rec); err != nil {
			return fmt.Errorf("jobs: record %s: %w", storage.FormatKey(key), err)
		}
		r.next = max(r.next, rec.ID+1)
		r.jobs[rec.ID] = &Job{r: r, rec: rec}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}
