package sql

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/types"
)

// TestShardsRandomized applies random writes, deletes, range scans and
// reshards (at keys, by size, uniform, split) to a table through SQL and
// compares every result with a sorted-map oracle; after every step it checks
// the shard maps' invariants and that sys.partitions counts every row once.
func TestShardsRandomized(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE r (a Int32, b Utf8, v Int64, PRIMARY KEY (a, b)) WITH (UNIFORM_PARTITIONS = 3)")
	oracle := map[[2]string]int64{}
	key := func() (int64, string) { return int64(r.IntN(40) - 20), string(rune('a' + r.IntN(5))) }
	check := func(step int, what string) {
		t.Helper()
		if err := e.shards.CheckInvariants(); err != nil {
			t.Fatalf("seed %d step %d (%s): %v", seed, step, what, err)
		}
		rows := query(t, s, "SELECT sum(row_count)::Int64, count(*) FROM sys.partitions WHERE table_name = 'r'")
		if rows[0][0].Int() != int64(len(oracle)) {
			t.Fatalf("seed %d step %d (%s): sys.partitions counts %v rows, oracle has %d", seed, step, what, rows[0][0], len(oracle))
		}
	}
	for step := 0; step < 400; step++ {
		switch op := r.IntN(10); {
		case op < 4:
			a, b := key()
			v := r.Int64N(1000)
			query(t, s, "UPSERT INTO r (a, b, v) VALUES ($1, $2, $3)", types.NewInt64(a), types.NewUtf8(b), types.NewInt64(v))
			oracle[[2]string{fmt.Sprint(a), b}] = v
		case op < 6:
			a, _ := key()
			query(t, s, "DELETE FROM r WHERE a = $1", types.NewInt64(a))
			for k := range oracle {
				if k[0] == fmt.Sprint(a) {
					delete(oracle, k)
				}
			}
		case op < 8:
			lo, _ := key()
			got := query(t, s, "SELECT a, b, v FROM r WHERE a >= $1 ORDER BY a, b", types.NewInt64(lo))
			var want []string
			for k, v := range oracle {
				var a int64
				fmt.Sscan(k[0], &a)
				if a >= lo {
					want = append(want, fmt.Sprintf("%d/%s/%d", a, k[1], v))
				}
			}
			sort.Slice(want, func(i, j int) bool {
				var ai, aj int64
				var bi, bj string
				fmt.Sscanf(want[i], "%d/%1s", &ai, &bi)
				fmt.Sscanf(want[j], "%d/%1s", &aj, &bj)
				if ai != aj {
					return ai < aj
				}
				return bi < bj
			})
			if len(got) != len(want) {
				t.Fatalf("seed %d step %d: scan from %d got %d rows, want %d", seed, step, lo, len(got), len(want))
			}
			for i, row := range got {
				if g := fmt.Sprintf("%d/%s/%d", row[0].Int(), row[1].Str(), row[2].Int()); g != want[i] {
					t.Fatalf("seed %d step %d: row %d = %s, want %s", seed, step, i, g, want[i])
				}
			}
		default:
			var stmt string
			switch r.IntN(4) {
			case 0:
				a1, b1 := key()
				a2 := a1 + 1 + int64(r.IntN(5))
				stmt = fmt.Sprintf("ALTER TABLE r RESHARD AT ((%d, '%s'), (%d))", a1, b1, a2)
			case 1:
				stmt = fmt.Sprintf("ALTER TABLE r RESHARD INTO %d", 1+r.IntN(6))
			case 2:
				stmt = fmt.Sprintf("ALTER TABLE r RESHARD INTO %d UNIFORM", 1+r.IntN(6))
			default:
				a, _ := key()
				stmt = fmt.Sprintf("SPLIT TABLE r BY (%d)", a)
			}
			if _, err := tryQuery(s, stmt); err != nil {
				// SPLIT at an existing pivot is refused; anything else is a bug.
				if stmt[:5] != "SPLIT" {
					t.Fatalf("seed %d step %d: %s: %v", seed, step, stmt, err)
				}
			}
			check(step, stmt)
		}
	}
	check(-1, "end")
}

// TestUniformPartitionsDoneWhen is issue 3's acceptance example.
func TestUniformPartitionsDoneWhen(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE u (id Uint64, v Utf8, PRIMARY KEY (id)) WITH (UNIFORM_PARTITIONS = 4)")
	rows := query(t, s, "SELECT start_key FROM sys.partitions WHERE table_name = 'u' ORDER BY partition_index")
	want := []string{"()", "(4611686018427387904)", "(9223372036854775808)", "(13835058055282163712)"}
	if len(rows) != len(want) {
		t.Fatalf("got %d shards", len(rows))
	}
	for i, w := range want {
		if rows[i][0].Str() != w {
			t.Errorf("shard %d starts at %s, want %s", i, rows[i][0].Str(), w)
		}
	}
}
