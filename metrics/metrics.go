package metrics

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds the registry and the counters updated as things happen.
type Metrics struct {
	reg *prometheus.Registry

	connsCurrent prometheus.Gauge
	connsTotal   prometheus.Counter
	connsRefused *prometheus.CounterVec
	statements   *prometheus.CounterVec
	latency      *prometheus.HistogramVec
	rowsReturned prometheus.Counter
	rowsWritten  *prometheus.CounterVec

	// kinds holds each statement kind's series of statements and latency,
	// looked up once: Prometheus's WithLabelValues hashes the label and
	// takes the vector's lock on every call, and StatementDone runs for
	// every statement (2% of the server's CPU on point SELECTs at 4
	// clients, two look-ups each). The map is replaced, never changed, so
	// readers need no lock; kinds are bounded by PivotDB's statements
	// (parseTag), so it stays small.
	kinds   atomic.Pointer[map[string]*kindSeries]
	kindsMu sync.Mutex // serializes adding a kind
}

// kindSeries are the series of one statement kind.
type kindSeries struct {
	statements prometheus.Counter
	latency    prometheus.Observer
}

// New makes the metrics of one node; src supplies the figures read at
// scrape time (nil fields are left out).
func New(src Sources) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.connsCurrent = prometheus.NewGauge(prometheus.GaugeOpts{Name: "pivotdb_connections",
		Help: "Client connections past their startup (sessions) now open."})
	m.connsTotal = prometheus.NewCounter(prometheus.CounterOpts{Name: "pivotdb_connections_total",
		Help: "Client connections that completed their startup."})
	m.connsRefused = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pivotdb_connections_refused_total",
		Help: "Clients turned away during startup, by reason (too_many, auth, tls)."}, []string{"reason"})
	m.statements = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pivotdb_statements_total",
		Help: "Statements run, by kind (the command tag's verb: SELECT, INSERT, ...; error for failed ones)."},
		[]string{"kind"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "pivotdb_statement_duration_seconds",
		Help:    "Time from a statement's start to its last row sent, by kind.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}, []string{"kind"})
	m.rowsReturned = prometheus.NewCounter(prometheus.CounterOpts{Name: "pivotdb_rows_returned_total",
		Help: "Rows sent to clients by SELECT (and other row-returning) statements."})
	m.rowsWritten = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pivotdb_rows_written_total",
		Help: "Rows written by statements, by operation (insert, update, delete)."}, []string{"op"})
	for _, reason := range []string{"too_many", "auth", "tls"} {
		m.connsRefused.WithLabelValues(reason)
	}
	for _, op := range []string{"insert", "update", "delete"} {
		m.rowsWritten.WithLabelValues(op)
	}
	m.reg.MustRegister(m.connsCurrent, m.connsTotal, m.connsRefused, m.statements, m.latency,
		m.rowsReturned, m.rowsWritten, newCollector(src),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in Prometheus's text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// ConnectionOpened, ConnectionClosed, ConnectionRefused and StatementDone
// make Metrics a server.Observer.
func (m *Metrics) ConnectionOpened() {
	m.connsCurrent.Inc()
	m.connsTotal.Inc()
}

func (m *Metrics) ConnectionClosed()               { m.connsCurrent.Dec() }
func (m *Metrics) ConnectionRefused(reason string) { m.connsRefused.WithLabelValues(reason).Inc() }

func (m *Metrics) StatementDone(tag string, d time.Duration, err error) {
	kind, rows, hasRows := parseTag(tag)
	if err != nil {
		kind = "error"
	}
	series := m.kindSeries(kind)
	series.statements.Inc()
	series.latency.Observe(d.Seconds())
	if err != nil || !hasRows {
		return
	}
	switch kind {
	case "INSERT":
		m.rowsWritten.WithLabelValues("insert").Add(float64(rows))
	case "UPDATE":
		m.rowsWritten.WithLabelValues("update").Add(float64(rows))
	case "DELETE":
		m.rowsWritten.WithLabelValues("delete").Add(float64(rows))
	case "SELECT", "FETCH", "SHOW":
		m.rowsReturned.Add(float64(rows))
	}
}

// kindSeries returns the series of a statement kind, made at its first
// statement.
func (m *Metrics) kindSeries(kind string) *kindSeries {
	if kinds := m.kinds.Load(); kinds != nil {
		if s, ok := (*kinds)[kind]; ok {
			return s
		}
	}
	m.kindsMu.Lock()
	defer m.kindsMu.Unlock()
	old := m.kinds.Load()
	if old != nil {
		if s, ok := (*old)[kind]; ok {
			return s // added meanwhile
		}
	}
	kinds := make(map[string]*kindSeries, 1+len(ptrMap(old)))
	for k, s := range ptrMap(old) {
		kinds[k] = s
	}
	s := &kindSeries{statements: m.statements.WithLabelValues(kind), latency: m.latency.WithLabelValues(kind)}
	// The kind may be a slice of a longer tag: keep only its own bytes.
	kinds[strings.Clone(kind)] = s
	m.kinds.Store(&kinds)
	return s
}

func ptrMap(p *map[string]*kindSeries) map[string]*kindSeries {
	if p == nil {
		return nil
	}
	return *p
}

// parseTag splits a command tag into its kind and row count: "INSERT 0 5"
// is INSERT with 5 rows, "CREATE TABLE" is CREATE TABLE with none. Kinds
// are bounded by the statements PivotDB has, so they are safe as a label.
//
// The server's tags are words separated by single spaces; those are split
// where they are, without allocating (this runs for every statement).
// Anything else goes through strings.Fields.
func parseTag(tag string) (kind string, rows int64, hasRows bool) {
	if tag == "" {
		return "unknown", 0, false
	}
	if !plainTag(tag) {
		return parseTagFields(tag)
	}
	last := strings.LastIndexByte(tag, ' ')
	if last < 0 {
		return tag, 0, false // one word: a count needs a kind before it
	}
	n, err := strconv.ParseInt(tag[last+1:], 10, 64)
	if err != nil {
		return tag, 0, false
	}
	kind = tag[:last]
	if verb, rest, ok := strings.Cut(kind, " "); ok && verb == "INSERT" && !strings.Contains(rest, " ") {
		kind = verb // INSERT's OID field
	}
	return kind, n, true
}

// plainTag reports whether tag is printable ASCII words separated by
// single spaces.
func plainTag(tag string) bool {
	for i := 0; i < len(tag); i++ {
		switch b := tag[i]; {
		case b == ' ':
			if i == 0 || i == len(tag)-1 || tag[i-1] == ' ' {
				return false
			}
		case b < ' ' || b > '~':
			return false
		}
	}
	return true
}

// parseTagFields is parseTag for any tag.
func parseTagFields(tag string) (kind string, rows int64, hasRows bool) {
	f := strings.Fields(tag)
	if len(f) == 0 {
		return "unknown", 0, false
	}
	if n, err := strconv.ParseInt(f[len(f)-1], 10, 64); err == nil && len(f) > 1 {
		f = f[:len(f)-1]
		if f[0] == "INSERT" && len(f) == 2 {
			f = f[:1] // INSERT's OID field
		}
		return strings.Join(f, " "), n, true
	}
	return strings.Join(f, " "), 0, false
}
