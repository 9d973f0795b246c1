package metrics

import (
	"log/slog"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pivotdb/pivotdb/panics"
	"github.com/pivotdb/pivotdb/sql"
	"github.com/pivotdb/pivotdb/sql/memory"
)

// Sources are what the scrape-time figures are read from.
type Sources struct {
	Engine *sql.Engine     // shards, splits, merges, TTL erasures
	Memory *memory.Monitor // the --max-memory budget
	Log    *slog.Logger    // where a failed read is reported
	// Clock, on a cluster node, reports the clock offset bound and the
	// largest offset to another node measured since start
	// (cluster/node's ClockMonitor); nil: no clock figures.
	Clock func() ClockFigures
}

// ClockFigures are a cluster node's clock offset figures.
type ClockFigures struct {
	MaxOffset, MaxSeen time.Duration
	Off                bool // the node's clock is off by more than the bound
}

// collector reads the figures of Sources when Prometheus scrapes, so they
// are as fresh as the scrape and cost nothing between scrapes.
type collector struct {
	src Sources

	tables, shards, splits, merges, reshards, ttlErased *prometheus.Desc
	rowsRead                                            *prometheus.Desc
	panics                                              *prometheus.Desc
	diskAvail, diskTotal, diskReserve, diskRefusing     *prometheus.Desc
	diskRefused                                         *prometheus.Desc
	memUsed, memLimit, memPeak                          *prometheus.Desc
	compactions, l0Files, l0Sublevels, cacheHits        *prometheus.Desc
	cacheMisses, cacheSize, diskUsage, walBytes         *prometheus.Desc
	clockMaxOffset, clockMaxSeen, clockOff              *prometheus.Desc
}

func newCollector(src Sources) *collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &collector{src: src,
		tables:         d("pivotdb_tables", "Tables and indexes that have shards."),
		shards:         d("pivotdb_shards", "Shards of all tables and indexes."),
		splits:         d("pivotdb_shard_splits_total", "Shards added by splits (over the tables that exist)."),
		merges:         d("pivotdb_shard_merges_total", "Shards removed by merges (over the tables that exist)."),
		reshards:       d("pivotdb_shard_reshards_total", "Other replacements of several shards by several."),
		ttlErased:      d("pivotdb_ttl_rows_erased_total", "Rows the TTL runner erased since the server started."),
		rowsRead:       d("pivotdb_rows_read_total", "Rows statements read from storage since the server started (scans' rows visited, point lookups' rows found, index entries)."),
		panics:         d("pivotdb_panics_recovered_total", "Panics recovered (a session or background task failed, the server carried on)."),
		diskAvail:      d("pivotdb_disk_available_bytes", "Free space of the data directory's filesystem."),
		diskTotal:      d("pivotdb_disk_total_bytes", "Size of the data directory's filesystem."),
		diskReserve:    d("pivotdb_disk_reserve_bytes", "Free space writes must leave (--disk-reserve)."),
		diskRefusing:   d("pivotdb_disk_refusing_writes", "1 while writes are refused for lack of disk space (53100), else 0."),
		diskRefused:    d("pivotdb_disk_refused_writes_total", "Writes refused for lack of disk space."),
		memUsed:        d("pivotdb_memory_budget_used_bytes", "Bytes statements hold reserved of --max-memory."),
		memLimit:       d("pivotdb_memory_budget_limit_bytes", "The --max-memory budget (0: unlimited)."),
		memPeak:        d("pivotdb_memory_budget_peak_bytes", "Most bytes reserved at once since the server started."),
		compactions:    d("pivotdb_pebble_compactions_total", "Pebble compactions."),
		l0Files:        d("pivotdb_pebble_l0_files", "Files in Pebble's level 0 (a growing count means compactions lag writes)."),
		l0Sublevels:    d("pivotdb_pebble_l0_sublevels", "Sublevels of Pebble's level 0."),
		cacheHits:      d("pivotdb_pebble_block_cache_hits_total", "Block cache hits."),
		cacheMisses:    d("pivotdb_pebble_block_cache_misses_total", "Block cache misses (hit rate: hits / (hits + misses))."),
		cacheSize:      d("pivotdb_pebble_block_cache_bytes", "Bytes in the block cache."),
		diskUsage:      d("pivotdb_pebble_disk_usage_bytes", "Bytes Pebble's files take on disk."),
		walBytes:       d("pivotdb_pebble_wal_bytes_written_total", "Bytes written to the write-ahead log."),
		clockMaxOffset: d("pivotdb_clock_max_offset_seconds", "The clock offset bound between nodes (--max-offset)."),
		clockMaxSeen: d("pivotdb_clock_offset_max_seen_seconds",
			"The largest clock offset to another node this node's pings estimated since it started (absolute)."),
		clockOff: d("pivotdb_clock_offset_exceeded",
			"1 while this node's clock is off from a majority of the nodes by more than 80% of --max-offset (it does not serve SQL), else 0."),
	}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(c, ch) }

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	counter(c.panics, float64(panics.Count()))
	if f := c.src.Clock; f != nil {
		cf := f()
		gauge(c.clockMaxOffset, cf.MaxOffset.Seconds())
		gauge(c.clockMaxSeen, cf.MaxSeen.Seconds())
		gauge(c.clockOff, b2f(cf.Off))
	}
	if m := c.src.Memory; m != nil {
		gauge(c.memUsed, float64(m.Used()))
		gauge(c.memLimit, float64(m.Limit()))
		gauge(c.memPeak, float64(m.Peak()))
	}
	e := c.src.Engine
	if e == nil {
		return
	}
	if st, err := e.Stats(); err != nil {
		if c.src.Log != nil {
			c.src.Log.Warn("metrics: cannot read the engine's figures", "err", err)
		}
	} else {
		gauge(c.tables, float64(st.Tables))
		gauge(c.shards, float64(st.Shards))
		counter(c.splits, float64(st.Splits))
		counter(c.merges, float64(st.Merges))
		counter(c.reshards, float64(st.Reshards))
		counter(c.ttlErased, float64(st.TTLRowsErased))
		counter(c.rowsRead, float64(st.RowsRead))
	}
	ds := e.Storage().DiskSpace()
	if ds.Enabled {
		gauge(c.diskAvail, float64(ds.AvailBytes))
		gauge(c.diskTotal, float64(ds.TotalBytes))
		gauge(c.diskReserve, float64(ds.ReserveBytes))
		gauge(c.diskRefusing, b2f(ds.Refusing))
		counter(c.diskRefused, float64(ds.Refused))
	}
	c.pebble(ch, e.Storage().Metrics(), gauge, counter)
}

func (c *collector) pebble(ch chan<- prometheus.Metric, pm *pebble.Metrics, gauge, counter func(*prometheus.Desc, float64)) {
	if pm == nil {
		return
	}
	counter(c.compactions, float64(pm.Compact.Count))
	gauge(c.l0Files, float64(pm.Levels[0].TablesCount))
	gauge(c.l0Sublevels, float64(pm.Levels[0].Sublevels))
	counter(c.cacheHits, float64(pm.BlockCache.Hits))
	counter(c.cacheMisses, float64(pm.BlockCache.Misses))
	gauge(c.cacheSize, float64(pm.BlockCache.Size))
	gauge(c.diskUsage, float64(pm.DiskSpaceUsage()))
	counter(c.walBytes, float64(pm.WAL.BytesWritten))
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
