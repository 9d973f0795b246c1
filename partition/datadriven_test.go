package partition

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/pivotdb/pivotdb/storage"
)

// TestDataDriven runs testdata/*. Keys are written as tuples of the tests'
// key (a Int64, b Utf8), see fmtKey; every file works on table 7.
//
//	map            input: the split points, one a line; builds a map with ids
//	               1, 2, ... and prints it
//	find           input: keys, one a line ("@8 (1)" is a key of table 8);
//	               prints the shard index Find returns
//	overlapping    input: spans "[start .. end)", "min" for a nil Start and
//	               "inf" for a nil End; prints OverlappingRange and Overlapping
//	rows           input: "(a, 'b') size" lines, a may be a range "1..100";
//	               writes rows with values padding each row to size bytes
//	               into a fresh engine whose table has one shard
//	median         prints MedianSplitKey of the table's one shard and the
//	               percentages of bytes left of and right of it
//	split-by-size  n=N: prints SplitBySize's pivots and each piece's share
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		const table = 7
		var sm *ShardMap
		var e *env
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			lines := inputLines(d)
			switch d.Cmd {
			case "map":
				pivots := [][]byte{storage.TablePrefix(table)}
				ids := []ShardID{1}
				for i, l := range lines {
					pivots = append(pivots, parseKey(t, table, l))
					ids = append(ids, ShardID(i+2))
				}
				sm = newShardMap(table, 1, pivots, ids, nil)
				if err := sm.CheckInvariants(); err != nil {
					return err.Error()
				}
				return mapString(sm)
			case "find":
				var out strings.Builder
				for _, l := range lines {
					fmt.Fprintf(&out, "%s -> %d\n", l, sm.Find(parseAnyKey(t, table, l)))
				}
				return out.String()
			case "overlapping":
				var out strings.Builder
				for _, l := range lines {
					m := regexp.MustCompile(`^\[(.*) \.\. (.*)\)$`).FindStringSubmatch(l)
					if m == nil {
						t.Fatalf("bad span %q", l)
					}
					span := storage.Span{Start: parseAnyKey(t, table, m[1]), End: parseAnyKey(t, table, m[2])}
					lo, hi := sm.OverlappingRange(span)
					fmt.Fprintf(&out, "%s -> [%d, %d) %v\n", l, lo, hi, sm.Overlapping(span))
				}
				return out.String()
			case "rows":
				e = newEnv(t)
				e.create(table)
				var keys, values [][]byte
				for _, l := range lines {
					i := strings.LastIndexByte(l, ' ')
					size, err := strconv.Atoi(l[i+1:])
					if err != nil {
						t.Fatalf("bad row %q", l)
					}
					for _, k := range expandKey(t, table, l[:i]) {
						keys = append(keys, k)
						values = append(values, make([]byte, size-len(k)))
					}
				}
				e.mustWrite(table, keys, values)
				e.checkStats(table)
				st, _ := e.m.Stats(e.m.Map(table))
				return fmt.Sprintf("%d rows, %d bytes", st[0].Rows, st[0].Bytes)
			case "median":
				sm := e.m.Map(table)
				k, ok, err := e.m.MedianSplitKey(table, sm.Shard(0).ID)
				if err != nil {
					return err.Error()
				}
				if !ok {
					return "no split"
				}
				return fmt.Sprintf("%s %s", fmtKey(table, k), shares(t, e, table, [][]byte{k}))
			case "split-by-size":
				var n int
				d.ScanArgs(t, "n", &n)
				pivots, err := e.m.SplitBySize(table, n)
				if err != nil {
					return err.Error()
				}
				var out strings.Builder
				for _, p := range pivots {
					out.WriteString(fmtKey(table, p) + "\n")
				}
				out.WriteString(shares(t, e, table, pivots))
				return out.String()
			default:
				t.Fatalf("unknown command %q", d.Cmd)
				return ""
			}
		})
	})
}

func inputLines(d *datadriven.TestData) []string {
	var out []string
	for _, l := range strings.Split(d.Input, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// parseAnyKey extends parseKey with "min" (nil), "inf" (nil) and "@id key"
// for a key of another table.
func parseAnyKey(t *testing.T, table uint64, s string) []byte {
	switch s = strings.TrimSpace(s); {
	case s == "min" || s == "inf":
		return nil
	case strings.HasPrefix(s, "@"):
		id, rest, _ := strings.Cut(s[1:], " ")
		n, err := strconv.ParseUint(id, 10, 64)
		if err != nil {
			t.Fatalf("bad table in %q", s)
		}
		return parseKey(t, n, rest)
	}
	return parseKey(t, table, s)
}

// expandKey parses a key whose first value may be a range "lo..hi".
func expandKey(t *testing.T, table uint64, s string) [][]byte {
	m := regexp.MustCompile(`^\((-?\d+)\.\.(-?\d+)(.*)$`).FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return [][]byte{parseKey(t, table, s)}
	}
	lo, _ := strconv.Atoi(m[1])
	hi, _ := strconv.Atoi(m[2])
	var out [][]byte
	for i := lo; i <= hi; i++ {
		out = append(out, parseKey(t, table, "("+strconv.Itoa(i)+m[3]))
	}
	return out
}

// shares renders the percentage of the table's bytes in each piece that the
// pivots cut.
func shares(t *testing.T, e *env, table uint64, pivots [][]byte) string {
	bounds := append(append([][]byte{storage.TablePrefix(table)}, pivots...), storage.TableSpan(table).End)
	var sizes []int64
	var total int64
	for i := 0; i+1 < len(bounds); i++ {
		_, size, err := countSpan(e.eng, storage.Span{Start: bounds[i], End: bounds[i+1]}, nil)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, size)
		total += size
	}
	if total == 0 {
		return "shares -\n"
	}
	var parts []string
	for _, s := range sizes {
		parts = append(parts, fmt.Sprintf("%.1f%%", 100*float64(s)/float64(total)))
	}
	return "shares " + strings.Join(parts, " | ") + "\n"
}
