package sql

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// TestRewriteCatchesUp changes rows between the two phases of ALTER COLUMN
// TYPE — updates (of the key, of unique values swapped between two rows),
// deletes, inserts, a COPY — and checks that the new table holds the rows
// as committed before the swap, with consistent indexes: the second phase
// converts again exactly the rows commits wrote since the snapshot
// (tracked key by key; compared with the snapshot in full once the
// tracker overflows, or after a bulk COPY it cannot observe). A change
// that makes two rows collide after the conversion fails the ALTER.
func TestRewriteCatchesUp(t *testing.T) {
	for _, mode := range []string{"tracked", "overflow", "bulk copy"} {
		t.Run(mode, func(t *testing.T) {
			// Phase 1 commits its rows in many chunks.
			defer func(n int) { rewriteChunkBytes = n }(rewriteChunkBytes)
			rewriteChunkBytes = 512
			if mode == "overflow" {
				defer func(n int) { trackLimit = n }(trackLimit)
				trackLimit = 8
			}
			if mode == "bulk copy" {
				defer func(n int) { bulkBatchBytes = n }(bulkBatchBytes)
				bulkBatchBytes = 0
			}
			e := testEngine(t)
			s, w := testSession(t, e), testSession(t, e)
			query(t, s, "CREATE TABLE rc (id int PRIMARY KEY, v int, u real, t text)")
			query(t, s, "CREATE UNIQUE INDEX rc_v ON rc (v)")
			query(t, s, "CREATE INDEX rc_t ON rc (t)")
			var sb strings.Builder
			for i := 0; i < 300; i++ {
				if i > 0 {
					sb.WriteString(", ")
				}
				fmt.Fprintf(&sb, "(%d, %d, %d.25, 'r%d')", i, i, i, i%7)
			}
			query(t, s, "INSERT INTO rc VALUES "+sb.String())

			var want [][]string
			afterRewritePhase1 = func() {
				for _, stmt := range []string{
					"UPDATE rc SET t = 'changed' WHERE id % 10 = 3",
					"DELETE FROM rc WHERE id % 10 = 4",
					"INSERT INTO rc VALUES (1000, 1000, 1.5, 'new'), (1001, 1001, NULL, NULL)",
					"UPDATE rc SET id = id + 5000 WHERE id % 50 = 7", // a new key
					// Unique values swapped between two rows in one commit.
					"BEGIN", "UPDATE rc SET v = -1 WHERE id = 1", "UPDATE rc SET v = 1 WHERE id = 2",
					"UPDATE rc SET v = 2 WHERE id = 1", "COMMIT",
				} {
					query(t, w, stmt)
				}
				if _, err := copyIn(w, "COPY rc FROM STDIN", "2000\t2000\t3.75\tcopied\n2001\t2001\t\\N\tcopied\n", 1<<20); err != nil {
					t.Error(err)
				}
				want = texts(query(t, w, "SELECT id, v, u::bigint, t FROM rc ORDER BY id"))
			}
			defer func() { afterRewritePhase1 = nil }()
			query(t, s, "ALTER TABLE rc ALTER COLUMN u TYPE bigint")
			afterRewritePhase1 = nil
			got := texts(query(t, s, "SELECT id, v, u, t FROM rc ORDER BY id"))
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("after the rewrite:\n%v\nwant\n%v", got, want)
			}
			checkIndexes(t, e)
			if got := query(t, s, "SELECT count(*) FROM rc WHERE t = 'changed'"); got[0][0].Int() != 30 {
				t.Fatalf("%v rows through rc_t, want 30", got)
			}

			// A row committed between the phases that collides with
			// another once converted: 23505, and the table stays.
			query(t, s, "ALTER TABLE rc ADD COLUMN f real")
			query(t, s, "UPDATE rc SET f = id + 0.25")
			query(t, s, "CREATE UNIQUE INDEX rc_f ON rc (f)")
			afterRewritePhase1 = func() { query(t, w, "UPDATE rc SET f = 10.2 WHERE id = 11") }
			_, err := tryQuery(s, "ALTER TABLE rc ALTER COLUMN f TYPE int")
			afterRewritePhase1 = nil
			if se := sqlerr.As(err); se == nil || se.Code != sqlerr.UniqueViolation || !strings.Contains(se.Message, "rc_f") {
				t.Fatalf("a collision made between the phases: %v, want 23505 on rc_f", err)
			}
			if got := query(t, s, "SELECT f FROM rc WHERE id = 11"); got[0][0].Text() != "10.2" {
				t.Fatalf("after the failed rewrite: %v", got)
			}
			// Its new table's committed chunks and shard maps are gone.
			snap := e.catalog.Snapshot()
			for _, id := range e.shards.Tables() {
				if _, ok := snap.TableByID(id); !ok {
					t.Fatalf("the failed rewrite left the shard map of %d", id)
				}
			}
			checkIndexes(t, e)
		})
	}
}

func texts(rows [][]types.Value) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		for _, v := range r {
			out[i] = append(out[i], v.Text())
		}
	}
	return out
}

// TestKeySet checks keySet against a map under random adds and removes.
func TestKeySet(t *testing.T) {
	var s keySet
	ref := map[string]bool{}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		k := []byte(fmt.Sprintf("k%d", r.IntN(5000)))
		if r.IntN(3) == 0 {
			s.remove(k)
			delete(ref, string(k))
			continue
		}
		if got, want := s.add(k), !ref[string(k)]; got != want {
			t.Fatalf("add(%s) = %v, want %v", k, got, want)
		}
		ref[string(k)] = true
	}
	if s.live != len(ref) {
		t.Fatalf("%d keys, want %d", s.live, len(ref))
	}
}

// TestRewriteLog finds each record it holds and none it does not.
func TestRewriteLog(t *testing.T) {
	var l rewriteLog
	for i := 0; i < 1000; i += 2 {
		k := []byte(fmt.Sprintf("%06d", i))
		l.add(k, append([]byte("new"), k...), [][]byte{[]byte("a" + string(k)), []byte("b")}, []int{0, 1})
	}
	for i := 0; i < 1000; i++ {
		k := []byte(fmt.Sprintf("%06d", i))
		j, ok := l.find(k)
		if ok != (i%2 == 0) {
			t.Fatalf("find(%s) = %v", k, ok)
		}
		if !ok {
			continue
		}
		newKey, ents, plens := l.record(j, 2, nil, nil)
		if !bytes.Equal(newKey, append([]byte("new"), k...)) || string(ents[0]) != "a"+string(k) || string(ents[1]) != "b" || plens[1] != 1 {
			t.Fatalf("record of %s: %s %s %v", k, newKey, ents, plens)
		}
	}
}
