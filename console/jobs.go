package console

import (
	"fmt"
	"net/http"
	"time"

	"github.com/pivotdb/pivotdb/sql/catalog"
)

// jobsShown is how many jobs the console lists, newest first.
const jobsShown = 100

// jobData is one row of the jobs page: sys.jobs as text.
type jobData struct {
	ID                      int64
	Type, Description, User string
	Status, Created, Finish string
	Percent                 string // "" while the total is unknown
	Width                   int    // the progress bar's width in percent
	Rows, Error             string
}

// jobs reads the newest jobs from sys.jobs.
func (s *Server) jobs() ([]jobData, error) {
	rows, err := query(s.cfg.Engine, catalog.DefaultDatabase, fmt.Sprintf(
		"SELECT job_id, job_type, description, user_name, status, created, finished, fraction_completed, "+
			"rows_done, rows_total, error FROM sys.jobs LIMIT %d", jobsShown))
	if err != nil {
		return nil, err
	}
	out := make([]jobData, len(rows))
	for i, r := range rows {
		j := jobData{ID: r[0].Int(), Type: r[1].Str(), Description: r[2].Str(), User: r[3].Str(),
			Status: r[4].Str(), Created: r[5].Text(), Rows: fmt.Sprint(r[8].Int())}
		if !r[6].IsNull() {
			j.Finish = r[6].Text()
		}
		if !r[7].IsNull() {
			f := r[7].Float()
			j.Percent, j.Width = fmt.Sprintf("%.0f%%", f*100), int(f*100)
		}
		if !r[9].IsNull() {
			j.Rows += fmt.Sprintf(" of %d", r[9].Int())
		}
		if !r[10].IsNull() {
			j.Error = r[10].Str()
		}
		out[i] = j
	}
	return out, nil
}

// jobsPage renders the jobs: sys.jobs with a progress bar per job.
func (s *Server) jobsPage(w http.ResponseWriter, r *http.Request) {
	d := pageData{Now: time.Now().UTC().Format("2006-01-02 15:04:05 UTC"), JobsPage: true}
	var err error
	if d.Jobs, err = s.jobs(); err != nil {
		d.Errors = append(d.Errors, err.Error())
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := pageTmpl.Execute(w, d); err != nil {
		s.cfg.Log.Warn("console: rendering the jobs page", "err", err)
	}
}
