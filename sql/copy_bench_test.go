package sql

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkCopyFromRows loads 100k rows of (k bigint, v text) per
// iteration with one COPY FROM STDIN into an empty table, in process, and
// reports the process CPU time per row (cpu-ns/row): the SQL layer's and
// storage's cost without the wire, which `make bench`'s "COPY FROM 1M
// rows" row compares with PostgreSQL over the wire.
//
//   - text, csv: the two text formats; 100k rows fit one buffer, so the
//     pairs are committed in a batch (copybulk.go).
//   - text-ingest: text with bulkBatchBytes lowered so that the pairs go
//     through the sstable ingestion, the path of a COPY of 1M rows.
//   - text-spill: text-ingest with bulkRunBytes lowered so that the pairs
//     are sorted in runs written to files and merged from there, the path
//     of a COPY whose pairs outgrow a run (64 MiB: about 1.5M such rows).
//
// Run: go test ./sql -run '^$' -bench CopyFromRows -benchtime 3x
func BenchmarkCopyFromRows(b *testing.B) {
	const rows = 100000
	text := copyBenchData(rows, "%d\tvalue number %d\n")
	csv := copyBenchData(rows, "%d,\"value, number %d\"\n")
	for _, bc := range []struct {
		name, sql, data string
		ingest, spill   bool
	}{
		{"text", "COPY bc (k, v) FROM STDIN", text, false, false},
		{"csv", "COPY bc (k, v) FROM STDIN (FORMAT csv)", csv, false, false},
		{"text-ingest", "COPY bc (k, v) FROM STDIN", text, true, false},
		{"text-spill", "COPY bc (k, v) FROM STDIN", text, true, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if bc.ingest {
				old := bulkBatchBytes
				bulkBatchBytes = 64 << 10
				b.Cleanup(func() { bulkBatchBytes = old })
			}
			if bc.spill {
				old := bulkRunBytes
				bulkRunBytes = 512 << 10
				b.Cleanup(func() { bulkRunBytes = old })
			}
			e := testEngine(b)
			s := testSession(b, e)
			b.SetBytes(int64(len(bc.data)))
			b.ReportAllocs()
			b.ResetTimer()
			var cpu int64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				query(b, s, "DROP TABLE IF EXISTS bc")
				query(b, s, "CREATE TABLE bc (k Int64, v Utf8, PRIMARY KEY (k))")
				b.StartTimer()
				cpu0 := processCPU()
				// 64 KiB: the CopyData messages pgx sends.
				tag, err := copyIn(s, bc.sql, bc.data, 64<<10)
				cpu += processCPU() - cpu0
				if err != nil || tag != fmt.Sprintf("COPY %d", rows) {
					b.Fatalf("%q %v", tag, err)
				}
			}
			b.ReportMetric(float64(cpu)/float64(b.N*rows), "cpu-ns/row")
		})
	}
}

func copyBenchData(n int, format string) string {
	var sb strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, format, i, i)
	}
	return sb.String()
}
