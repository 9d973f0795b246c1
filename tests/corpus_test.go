package tests

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/tests/logictest"
)

// knownCorpusFailures is the committed list of corpus records that fail,
// with the reason; it may only shrink.
const knownCorpusFailures = "sqllogictest.known"

// corpusDir finds the shared sqllogictest corpus: $PIVOTDB_SQLLOGICTEST, or
// ../shared/sqllogictest beside the repository.
func corpusDir(t *testing.T) string {
	if d := os.Getenv("PIVOTDB_SQLLOGICTEST"); d != "" {
		return d
	}
	d := filepath.Join("..", "..", "shared", "sqllogictest")
	if _, err := os.Stat(d); err != nil {
		t.Skipf("sqllogictest corpus not found at %s (set PIVOTDB_SQLLOGICTEST): %v", d, err)
	}
	return d
}

func corpusFiles(t *testing.T, dir string) []string {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".test") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatalf("no .test files under %s", dir)
	}
	return files
}

// TestSQLLogicCorpus runs every file of the shared sqllogictest corpus
// (../shared/sqllogictest) against a fresh server, as engine "pivotdb". It
// fails for every record that fails and is not in sqllogictest.known, and
// for every listed record that now passes (the list may only shrink).
// PIVOTDB_SLT_PRUNE=1 removes the records that now pass from the list
// instead of failing; it never adds any.
func TestSQLLogicCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("corpus run skipped with -short")
	}
	dir := corpusDir(t)
	files := corpusFiles(t, dir)
	raw, err := os.ReadFile(knownCorpusFailures)
	if err != nil {
		t.Fatal(err)
	}
	known, err := logictest.ParseKnownFailures(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, "--unsafe-no-sync", "--balancer-interval", "0", "--ttl-run-interval", "0")
	opts := logictest.Options{
		Addr:             srv.addr,
		FreshDatabase:    true,
		KnownFailures:    known,
		RunKnownFailures: true,
		FileTimeout:      5 * time.Minute,
		RecordTimeout:    30 * time.Second,
	}
	results, err := logictest.RunFiles(context.Background(), opts, files)
	if err != nil {
		t.Fatal(err)
	}
	prune := os.Getenv("PIVOTDB_SLT_PRUNE") == "1"
	fixed := map[string]bool{}
	for _, r := range results {
		rel, _ := filepath.Rel(dir, r.File)
		rel = filepath.ToSlash(rel)
		t.Logf("%s: %d passed, %d failed, %d skipped (%d known failures) in %v",
			rel, r.Passed, r.Failed, r.Skipped, r.Known, r.Elapsed.Round(time.Millisecond))
		if r.Err != nil {
			t.Errorf("%s: %v", rel, r.Err)
		}
		for _, f := range r.Failures {
			t.Errorf("%s:%d: %s\n%s\nexpected %v\ngot      %v", rel, f.Line, f.Message, f.SQL, f.Expected, f.Got)
		}
		for _, l := range r.FixedLines {
			fixed[fmt.Sprintf("%s:%d", rel, l)] = true
			if !prune {
				t.Errorf("%s:%d passes now: remove it from tests/%s (or run with PIVOTDB_SLT_PRUNE=1)", rel, l, knownCorpusFailures)
			}
		}
	}
	if prune && len(fixed) > 0 {
		var out []string
		for _, line := range strings.SplitAfter(string(raw), "\n") {
			loc, _, _ := strings.Cut(strings.TrimSpace(line), " ")
			if !fixed[loc] {
				out = append(out, line)
			}
		}
		if err := os.WriteFile(knownCorpusFailures, []byte(strings.Join(out, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("removed %d fixed records from %s", len(fixed), knownCorpusFailures)
	}
}

// BenchmarkSQLLogicCorpus times each corpus file (one sub-benchmark per
// file, each iteration in a fresh database); known failures run too, so
// the time is that of the whole file:
//
//	go test ./tests -run '^$' -bench SQLLogicCorpus -benchtime 1x
func BenchmarkSQLLogicCorpus(b *testing.B) {
	dir := os.Getenv("PIVOTDB_SQLLOGICTEST")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "sqllogictest")
	}
	if _, err := os.Stat(dir); err != nil {
		b.Skipf("sqllogictest corpus not found at %s: %v", dir, err)
	}
	var files []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".test") {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	srv := startServer(b, "--unsafe-no-sync", "--balancer-interval", "0", "--ttl-run-interval", "0")
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f)
		b.Run(filepath.ToSlash(rel), func(b *testing.B) {
			opts := logictest.Options{Addr: srv.addr, FreshDatabase: true, RecordTimeout: 30 * time.Second}
			for b.Loop() {
				r := logictest.RunFile(context.Background(), opts, f)
				if r.Err != nil {
					b.Fatalf("%s: %v", rel, r.Err)
				}
				b.ReportMetric(float64(r.Passed), "passed")
			}
		})
	}
}
