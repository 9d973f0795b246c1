package tests

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// scrape fetches /metrics and parses it with Prometheus's own parser.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics: %s", resp.Status)
	}
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return fams
}

// value is the value of the family's metric whose labels include want.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, want ...string) float64 {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		t.Fatalf("metric %s missing", name)
	}
next:
	for _, m := range f.Metric {
		for i := 0; i+1 < len(want); i += 2 {
			found := false
			for _, l := range m.Label {
				if l.GetName() == want[i] && l.GetValue() == want[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return 0
}

func TestMetricsAndHealth(t *testing.T) {
	httpAddr := freePort(t)
	srv := startServer(t, "--http-listen", httpAddr)
	base := "http://" + httpAddr
	c := srv.connect(t, pgx.QueryExecModeCacheStatement)
	mustExec(t, c, "CREATE TABLE m (id Int64, PRIMARY KEY (id))")
	before := scrape(t, base)
	mustExec(t, c, "INSERT INTO m VALUES (1), (2), (3)")
	mustExec(t, c, "DELETE FROM m WHERE id = 3")
	rows, _ := c.Query(context.Background(), "SELECT id FROM m")
	rows.Close()
	_, err := c.Exec(context.Background(), "SELECT * FROM no_such_table")
	if err == nil {
		t.Fatal("query of a missing table succeeded")
	}
	after := scrape(t, base)
	for _, tc := range []struct {
		name   string
		labels []string
		delta  float64
	}{
		{"pivotdb_statements_total", []string{"kind", "INSERT"}, 1},
		{"pivotdb_statements_total", []string{"kind", "DELETE"}, 1},
		{"pivotdb_statements_total", []string{"kind", "SELECT"}, 1},
		{"pivotdb_statements_total", []string{"kind", "error"}, 1},
		{"pivotdb_statement_duration_seconds", []string{"kind", "INSERT"}, 1},
		{"pivotdb_rows_written_total", []string{"op", "insert"}, 3},
		{"pivotdb_rows_written_total", []string{"op", "delete"}, 1},
		{"pivotdb_rows_returned_total", nil, 2},
		{"pivotdb_rows_read_total", nil, 3}, // DELETE's point lookup, the SELECT's two rows
	} {
		if d := value(t, after, tc.name, tc.labels...) - value(t, before, tc.name, tc.labels...); d != tc.delta {
			t.Errorf("%s%v moved by %v, want %v", tc.name, tc.labels, d, tc.delta)
		}
	}
	if v := value(t, after, "pivotdb_connections"); v != 1 {
		t.Errorf("pivotdb_connections = %v, want 1", v)
	}
	if v := value(t, after, "pivotdb_shards"); v < 1 {
		t.Errorf("pivotdb_shards = %v, want at least the table's one", v)
	}
	for _, name := range []string{"pivotdb_pebble_l0_files", "pivotdb_pebble_compactions_total",
		"pivotdb_pebble_block_cache_hits_total", "pivotdb_disk_refusing_writes", "pivotdb_memory_budget_used_bytes",
		"pivotdb_panics_recovered_total", "pivotdb_ttl_rows_erased_total", "pivotdb_shard_splits_total",
		"pivotdb_connections_refused_total"} {
		value(t, after, name)
	}

	resp, err := http.Get(base + "/health")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != "ok" {
		t.Fatalf("/health: %s %q", resp.Status, body)
	}
}

// The HTTP listener has no authentication: a public address is refused.
func TestHTTPListenLoopbackOnly(t *testing.T) {
	out, err := exec.Command(serverBin, "serve", "--data-dir", t.TempDir(), "--listen", freePort(t),
		"--http-listen", "0.0.0.0:0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "loopback") {
		t.Fatalf("serve with a public --http-listen: %v\n%s", err, out)
	}
}

// chromiumBinary finds Debian's chromium. On CI (CI set) its absence fails
// the test; elsewhere the test is skipped.
func chromiumBinary(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed (.ci/install-deps installs it)")
	}
	t.Skip("chromium is not installed; run .ci/install-deps to test the console")
	return ""
}

func chromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

// The console, rendered by a real browser, shows a table's shards with
// their bounds, and the splits-and-merges chart once samples exist.
// PIVOTDB_CONSOLE_SCREENSHOT=path also saves a screenshot (docs/console.png
// is made that way).
func TestConsoleInChromium(t *testing.T) {
	bin := chromiumBinary(t)
	httpAddr := freePort(t)
	srv := startServer(t, "--http-listen", httpAddr, "--console-sample-interval", "200ms")
	c := srv.connect(t, pgx.QueryExecModeCacheStatement)
	mustExec(t, c, "CREATE TABLE orders (id Int64, customer Utf8, total Double, PRIMARY KEY (id))")
	for i := 0; i < 4; i++ {
		var vals []string
		for id := i*250 + 1; id <= (i+1)*250; id++ {
			vals = append(vals, fmt.Sprintf("(%d, 'customer %d', %d.5)", id, id%37, id))
		}
		mustExec(t, c, "INSERT INTO orders VALUES "+strings.Join(vals, ", "))
		time.Sleep(250 * time.Millisecond)
	}
	mustExec(t, c, "SPLIT TABLE orders BY (250), (500), (750)")
	// Rates are taken over at least a second, against a sample that
	// already had the new shards.
	time.Sleep(1500 * time.Millisecond)
	// Reads and writes go on while the browser loads the page (its start
	// takes a while), so the rates it shows are above zero.
	load, stopLoad := context.WithCancel(context.Background())
	loaded := make(chan struct{})
	go func() {
		defer close(loaded)
		for i := 0; load.Err() == nil; i++ {
			rows, _ := c.Query(load, "SELECT count(*) FROM orders WHERE id > $1", i%1000)
			rows.Close()
			c.Exec(load, "UPDATE orders SET total = total + 1 WHERE id = $1", i%1000+1)
			time.Sleep(5 * time.Millisecond)
		}
	}()
	time.Sleep(1200 * time.Millisecond)
	defer func() { stopLoad(); <-loaded }()

	url := "http://" + httpAddr + "/"
	dom := string(chromium(t, bin, "--dump-dom", url))
	if !strings.Contains(dom, `id="table-orders"`) {
		t.Fatalf("the console shows no table orders:\n%s", dom)
	}
	shardRows := regexp.MustCompile(`(?s)<tr class="shard">.*?</tr>`).FindAllString(
		dom[strings.Index(dom, `id="table-orders"`):], -1)
	if len(shardRows) != 4 {
		t.Fatalf("the console shows %d shards of orders, want 4:\n%s", len(shardRows), dom)
	}
	for _, bound := range []string{"(250)", "(500)", "(750)", "(&lt;Max&gt;)"} {
		if !strings.Contains(dom, "<code>"+bound+"</code>") {
			t.Errorf("no shard bound %s in the console", bound)
		}
	}
	if !regexp.MustCompile(`<td class="n">[0-9.]*[1-9][0-9.]*/s</td>`).MatchString(strings.Join(shardRows, "")) {
		t.Errorf("no shard of orders shows a read or write rate above zero:\n%s", strings.Join(shardRows, "\n"))
	}
	if !strings.Contains(dom, `<polyline class="splits"`) {
		t.Errorf("no splits line in the chart:\n%s", dom)
	}
	if path := os.Getenv("PIVOTDB_CONSOLE_SCREENSHOT"); path != "" {
		abs, _ := filepath.Abs(path)
		chromium(t, bin, "--hide-scrollbars", "--window-size=1200,1000", "--screenshot="+abs, url)
	}
}
