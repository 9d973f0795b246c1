package tests

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/tests/logictest"
)

// TestLogicFiles runs the project's own SQL regression files (tests/sql)
// against a freshly started server, one database per file.
func TestLogicFiles(t *testing.T) {
	files, _ := filepath.Glob("sql/*.test")
	if len(files) == 0 {
		t.Fatal("no .test files in tests/sql")
	}
	srv := startServer(t)
	opts := logictest.Options{
		Addr:          srv.addr,
		FreshDatabase: true,
		Verbose:       true,
		Out:           testWriter{t},
		FileTimeout:   5 * time.Minute,
	}
	results, err := logictest.RunFiles(context.Background(), opts, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		t.Logf("%s: %d passed, %d failed, %d skipped", r.File, r.Passed, r.Failed, r.Skipped)
		if r.Err != nil {
			t.Errorf("%s: %v", r.File, r.Err)
		}
		for _, f := range r.Failures {
			t.Errorf("%s:%d: %s\n%s\nexpected %v\ngot      %v", f.File, f.Line, f.Message, f.SQL, f.Expected, f.Got)
		}
		if r.Passed == 0 {
			t.Errorf("%s: nothing passed", r.File)
		}
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}
