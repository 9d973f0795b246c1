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
		t.Log(r.Summary())
		for _, p := range r.Problems() {
			t.Error(p)
		}
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}
