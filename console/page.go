package console

import (
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"sort"
	"time"

	"github.com/pivotdb/pivotdb/storage"
)

//go:embed assets
var assets embed.FS

var pageTmpl = template.Must(template.New("console.html").Funcs(template.FuncMap{
	"bytes": formatBytes,
}).ParseFS(assets, "assets/console.html"))

func serveAsset(name, contentType string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, err := assets.ReadFile(name)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", contentType)
		w.Write(b)
	}
}

// pageData is what the template shows.
type pageData struct {
	Now       string
	Sessions  int
	Stats     sample
	Chart     template.HTML
	Databases []dbData
	Errors    []string
	// JobsPage renders /jobs: the jobs (sys.jobs) instead of the tables.
	JobsPage bool
	Jobs     []jobData
	// Running counts the running jobs, shown in the header.
	Running int
}

type dbData struct {
	Name   string
	Tables []tableData
}

type tableData struct {
	Name           string
	Rows, Bytes    int64
	Splits, Merges int64
	Shards         []shardData
	TTL            *ttlData
}

type shardData struct {
	Index, ID           int64
	Start, End          string
	Bytes, Rows         string
	ReadRate, WriteRate string
}

type ttlData struct {
	LastRun string
	Erased  int64
}

// page renders the console.
func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	d := pageData{Now: now.UTC().Format("2006-01-02 15:04:05 UTC"), Sessions: len(s.cfg.Activity.List())}
	samples := s.hist.series()
	if st, err := s.cfg.Engine.Stats(); err == nil {
		d.Stats = sample{At: now, Shards: st.Shards, Splits: st.Splits, Merges: st.Merges, Erased: st.TTLRowsErased}
	} else {
		d.Errors = append(d.Errors, err.Error())
	}
	d.Chart = chart(samples)
	if js, err := s.jobs(); err == nil {
		for _, j := range js {
			if j.Status == "running" {
				d.Running++
			}
		}
	} else {
		d.Errors = append(d.Errors, err.Error())
	}
	dbs, err := databases(s.cfg.Engine)
	if err != nil {
		d.Errors = append(d.Errors, err.Error())
	}
	for _, db := range dbs {
		rows, err := partitions(s.cfg.Engine, db)
		if err != nil {
			d.Errors = append(d.Errors, fmt.Sprintf("%s: %v", db, err))
			continue
		}
		d.Databases = append(d.Databases, dbData{Name: db, Tables: s.tables(db, rows, now)})
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := pageTmpl.Execute(w, d); err != nil {
		s.cfg.Log.Warn("console: rendering the page", "err", err)
	}
}

// tables groups a database's sys.partitions rows by table.
func (s *Server) tables(db string, rows []shardRow, now time.Time) []tableData {
	byName := map[string]*tableData{}
	var names []string
	for _, r := range rows {
		t := byName[r.Table]
		if t == nil {
			t = &tableData{Name: r.Table, Splits: r.Splits, Merges: r.Merges}
			byName[r.Table] = t
			names = append(names, r.Table)
		}
		sd := shardData{Index: r.Index, ID: r.ShardID, Start: r.Start, End: r.End, Bytes: "pending", Rows: "pending"}
		if !r.Bytes.IsNull() {
			sd.Bytes = formatBytes(r.Bytes.Int())
			sd.Rows = fmt.Sprint(r.Rows.Int())
			t.Bytes += r.Bytes.Int()
			t.Rows += r.Rows.Int()
		}
		rr, wr, ok := s.hist.rates(shardKey{db, r.ShardID, r.Table}, r.Reads, r.Writes, now)
		sd.ReadRate, sd.WriteRate = "–", "–"
		if ok {
			sd.ReadRate, sd.WriteRate = fmt.Sprintf("%.1f/s", rr), fmt.Sprintf("%.1f/s", wr)
		}
		t.Shards = append(t.Shards, sd)
		if !r.TTLLastRun.IsNull() {
			if t.TTL == nil {
				t.TTL = &ttlData{}
			}
			if last := r.TTLLastRun.Text(); last > t.TTL.LastRun {
				t.TTL.LastRun = last
			}
			t.TTL.Erased += r.TTLErased
		}
	}
	sort.Strings(names)
	out := make([]tableData, len(names))
	for i, n := range names {
		out[i] = *byName[n]
	}
	return out
}

func formatBytes(n int64) string { return storage.FormatBytes(uint64(max(n, 0))) }
