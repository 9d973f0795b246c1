package console

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/activity"
	"github.com/pivotdb/pivotdb/metrics"
	"github.com/pivotdb/pivotdb/sql"
	"github.com/pivotdb/pivotdb/sql/catalog"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func exec(t *testing.T, e *sql.Engine, text string) {
	t.Helper()
	if err := tryExec(e, text); err != nil {
		t.Fatalf("%s: %v", text, err)
	}
}

// tryExec runs one statement as a client would and returns its error.
func tryExec(e *sql.Engine, text string) error {
	s, err := e.NewSession(catalog.DefaultDatabase, catalog.BootstrapUser)
	if err != nil {
		return err
	}
	defer s.Close()
	ctx := context.Background()
	s.BeginImplicit()
	p, err := s.Prepare(ctx, text, nil)
	if err == nil {
		var res sql.Result
		if res, err = s.Execute(ctx, p, nil); err == nil {
			res.Close()
		}
	}
	if err != nil {
		s.FailTransaction()
	}
	if serr := s.Sync(); err == nil {
		err = serr
	}
	return err
}

// The listener's pages, served while the sampler runs and statements
// change the shards (the race detector watches the history).
func TestConsolePages(t *testing.T) {
	e, err := sql.Open(sql.Options{DataDir: t.TempDir(), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var shutting atomic.Bool
	s, err := Start(Config{Addr: "127.0.0.1:0", Engine: e, Metrics: metrics.New(metrics.Sources{Engine: e}),
		Activity: activity.NewRegistry(), ShuttingDown: shutting.Load, SampleInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	base := "http://" + s.Addr().String()

	exec(t, e, "CREATE TABLE kv (k Int64, v Utf8, PRIMARY KEY (k))")
	exec(t, e, "INSERT INTO kv VALUES (1, 'a'), (2, 'b'), (3, 'c')")
	exec(t, e, "SPLIT TABLE kv BY (2)")
	time.Sleep(50 * time.Millisecond)

	code, body := get(t, base+"/")
	if code != 200 || !strings.Contains(body, `id="table-kv"`) || strings.Count(body, `<tr class="shard">`) != 2 ||
		!strings.Contains(body, "<code>(2)</code>") || !strings.Contains(body, `<polyline class="splits"`) {
		t.Fatalf("console page: %d\n%s", code, body)
	}
	if !strings.Contains(body, `<a href="/jobs">jobs</a> (0 running)`) {
		t.Fatalf("console page links no jobs:\n%s", body)
	}
	// The jobs page lists the SPLIT (a RESHARD job) and a failed CREATE
	// INDEX with its error.
	exec(t, e, "INSERT INTO kv VALUES (4, 'a')")
	if err := tryExec(e, "CREATE UNIQUE INDEX kv_v ON kv (v)"); err == nil {
		t.Fatal("a unique index over duplicates was built")
	}
	code, body = get(t, base+"/jobs")
	if code != 200 || strings.Count(body, `<tr class="job `) != 2 ||
		!strings.Contains(body, `<tr class="job succeeded"><td>1</td><td>RESHARD</td><td><code>SPLIT TABLE kv BY (2)</code>`) ||
		!strings.Contains(body, `<span style="width: 100%"></span></span> 100%`) ||
		!strings.Contains(body, `<tr class="job failed"><td>2</td><td>CREATE INDEX</td>`) ||
		!strings.Contains(body, `<div class="error">could not create unique index &#34;kv_v&#34;</div>`) {
		t.Fatalf("jobs page: %d\n%s", code, body)
	}
	if code, body := get(t, base+"/console.css"); code != 200 || !strings.Contains(body, "table.shards") {
		t.Fatalf("style sheet: %d", code)
	}
	if code, body := get(t, base+"/metrics"); code != 200 || !strings.Contains(body, "pivotdb_shards 2") {
		t.Fatalf("metrics: %d\n%s", code, body)
	}
	if code, body := get(t, base+"/health"); code != 200 || body != "ok\n" {
		t.Fatalf("health: %d %q", code, body)
	}
	shutting.Store(true)
	if code, body := get(t, base+"/health"); code != 503 || body != "shutting down\n" {
		t.Fatalf("health while shutting down: %d %q", code, body)
	}
	if code, _ := get(t, base+"/nothing"); code != 404 {
		t.Fatalf("unknown path: %d", code)
	}
}

func TestCheckAddr(t *testing.T) {
	for addr, ok := range map[string]bool{"127.0.0.1:8080": true, "localhost:80": true, "[::1]:8080": true,
		"0.0.0.0:8080": false, ":8080": false, "10.0.0.1:80": false, "nonsense": false} {
		if err := CheckAddr(addr); (err == nil) != ok {
			t.Errorf("CheckAddr(%q) = %v", addr, err)
		}
	}
}
