package console

import (
	"log/slog"
	"sync"
	"time"

	"github.com/pivotdb/pivotdb/sql"
)

// history keeps the last samples of the engine's figures in memory (a ring
// of fixed size: nothing grows with uptime) for the chart, and the shard
// counters of the last few samples for the read and write rates.
type history struct {
	mu      sync.Mutex
	size    int
	samples []sample // oldest first, at most size
	// counters of the newest samples, newest last: a rate is taken over at
	// least minRateWindow, so a page drawn just after a sample still has
	// an interval to divide by.
	counters []counterSample
}

// minRateWindow is the shortest interval a rate is computed over, and
// counterSamples how many counter samples are kept for it (enough for
// intervals down to a fifth of a second).
const (
	minRateWindow  = time.Second
	counterSamples = 8
)

type sample struct {
	At                     time.Time
	Shards                 int
	Splits, Merges, Erased int64
}

// shardKey names a shard across databases.
type shardKey struct {
	db      string
	shardID int64
	table   string
}

type counterSample struct {
	at     time.Time
	reads  map[shardKey]int64
	writes map[shardKey]int64
}

func newHistory(size int) *history { return &history{size: size} }

// record takes one sample of e.
func (h *history) record(e *sql.Engine, log *slog.Logger) {
	if e == nil {
		return
	}
	now := time.Now()
	st, err := e.Stats()
	if err != nil {
		log.Warn("console: cannot sample the engine", "err", err)
		return
	}
	cs := counterSample{at: now, reads: map[shardKey]int64{}, writes: map[shardKey]int64{}}
	dbs, err := databases(e)
	if err != nil {
		log.Warn("console: cannot list databases", "err", err)
	}
	for _, db := range dbs {
		rows, err := partitions(e, db)
		if err != nil {
			continue // dropped meanwhile
		}
		for _, r := range rows {
			k := shardKey{db, r.ShardID, r.Table}
			cs.reads[k], cs.writes[k] = r.Reads, r.Writes
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.samples = append(h.samples, sample{At: now, Shards: st.Shards, Splits: st.Splits, Merges: st.Merges,
		Erased: st.TTLRowsErased})
	if len(h.samples) > h.size {
		h.samples = h.samples[len(h.samples)-h.size:]
	}
	h.counters = append(h.counters, cs)
	if len(h.counters) > counterSamples {
		h.counters = h.counters[1:]
	}
}

// series returns a copy of the samples.
func (h *history) series() []sample {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]sample(nil), h.samples...)
}

// rates returns a shard's reads and writes per second between the newest
// sample at least minRateWindow old and now (counters read now), and false
// when there is no such sample or the shard is newer than it.
func (h *history) rates(k shardKey, reads, writes int64, now time.Time) (float64, float64, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := len(h.counters) - 1; i >= 0; i-- {
		s := h.counters[i]
		if now.Sub(s.at) < minRateWindow {
			continue
		}
		r0, ok := s.reads[k]
		if !ok {
			return 0, 0, false
		}
		d := now.Sub(s.at).Seconds()
		// Counters are in memory and restart with the server; a shard's
		// counter never goes down while it lives.
		return float64(max(reads-r0, 0)) / d, float64(max(writes-s.writes[k], 0)) / d, true
	}
	return 0, 0, false
}
