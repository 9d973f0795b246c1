package sql

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
)

// TestKeyBloomFilterSetting follows the setting from CREATE TABLE through
// ALTER: the storage engine's filter set, the filters Pebble consults for
// lookups of absent keys, sys.partitions, and the background compaction an
// ALTER starts.
func TestKeyBloomFilterSetting(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE f (k Uint64, v Utf8, PRIMARY KEY (k)) WITH (KEY_BLOOM_FILTER = ENABLED)")
	query(t, s, "CREATE TABLE n (k Uint64, v Utf8, PRIMARY KEY (k))")
	tf, _ := e.catalog.Snapshot().Table(s.db.ID, "f")
	tn, _ := e.catalog.Snapshot().Table(s.db.ID, "n")
	if !e.storage.KeyFilterEnabled(tf.ID) || e.storage.KeyFilterEnabled(tn.ID) {
		t.Fatalf("filter set after CREATE: f=%v n=%v", e.storage.KeyFilterEnabled(tf.ID), e.storage.KeyFilterEnabled(tn.ID))
	}
	var vals []string
	for k := 0; k < 4000; k += 2 {
		vals = append(vals, fmt.Sprintf("(%d, 'v%d')", k, k))
	}
	for _, tbl := range []string{"f", "n"} {
		query(t, s, "UPSERT INTO "+tbl+" (k, v) VALUES "+strings.Join(vals, ", "))
	}
	if err := e.storage.Compact(context.Background(), storage.Span{}); err != nil {
		t.Fatal(err)
	}
	absentLookups := func(tbl string) int64 {
		before := e.storage.Metrics().Filter.Hits
		var in []string
		for k := 1; k < 2000; k += 2 {
			in = append(in, fmt.Sprint(k))
		}
		if rows := query(t, s, "SELECT k FROM "+tbl+" WHERE k IN ("+strings.Join(in, ", ")+")"); len(rows) != 0 {
			t.Fatalf("%s: absent keys found: %v", tbl, rows)
		}
		for k := 2001; k < 2100; k += 2 {
			if rows := query(t, s, fmt.Sprintf("SELECT k FROM %s WHERE k = %d", tbl, k)); len(rows) != 0 {
				t.Fatalf("%s: absent key %d found", tbl, k)
			}
		}
		return e.storage.Metrics().Filter.Hits - before
	}
	if hits := absentLookups("f"); hits < 900 {
		t.Errorf("f: %d filter hits for 1050 absent keys", hits)
	}
	if hits := absentLookups("n"); hits != 0 {
		t.Errorf("n: %d filter hits, want 0", hits)
	}
	// Present keys are found, by =, IN, and INSERT's existence check.
	if rows := query(t, s, "SELECT k, v FROM f WHERE k IN (0, 1, 2, 3998, 3999)"); len(rows) != 3 {
		t.Errorf("present keys: %v", rows)
	}
	if _, err := tryQuery(s, "INSERT INTO f (k, v) VALUES (10, 'dup')"); !isCode(err, sqlerr.UniqueViolation) {
		t.Errorf("INSERT of a present key: %v", err)
	}
	query(t, s, "INSERT INTO f (k, v) VALUES (11, 'new')")

	bloomCols := func(tbl string) (bool, int64) {
		rows := query(t, s, "SELECT key_bloom_filter, key_bloom_filter_bytes FROM sys.partitions WHERE table_name = '"+tbl+"'")
		return rows[0][0].Bool(), rows[0][1].Int()
	}
	if on, n := bloomCols("f"); !on || n < 2000*10/8 {
		t.Errorf("sys.partitions for f: %v %d", on, n)
	}
	if on, n := bloomCols("n"); on || n != 0 {
		t.Errorf("sys.partitions for n: %v %d", on, n)
	}

	// ALTER switches both ways; the background compaction rewrites the data.
	query(t, s, "ALTER TABLE f SET KEY_BLOOM_FILTER DISABLED")
	query(t, s, "ALTER TABLE n SET (KEY_BLOOM_FILTER = ENABLED)")
	e.bg.Wait()
	if on, n := bloomCols("f"); on || n != 0 {
		t.Errorf("sys.partitions for f after DISABLED: %v %d", on, n)
	}
	if on, n := bloomCols("n"); !on || n < 2000*10/8 {
		t.Errorf("sys.partitions for n after ENABLED: %v %d", on, n)
	}
	if hits := absentLookups("n"); hits < 900 {
		t.Errorf("n after ENABLED: %d filter hits", hits)
	}
	if got := query(t, s, "SHOW CREATE TABLE n")[0][1].Str(); !strings.Contains(got, "KEY_BLOOM_FILTER = ENABLED") {
		t.Errorf("SHOW CREATE TABLE n:\n%s", got)
	}
	query(t, s, "DROP TABLE n")
	if e.storage.KeyFilterEnabled(tn.ID) {
		t.Errorf("dropped table still in the filter set")
	}
}

func isCode(err error, code string) bool {
	var se *sqlerr.Error
	return errors.As(err, &se) && se.Code == code
}

// TestKeyBloomFilterRandomized runs random writes, deletes, point reads (=,
// IN lists, INSERT's existence check), ALTERs of KEY_BLOOM_FILTER, flushes,
// compactions and restarts on a table with a composite key against a map:
// whatever the setting history, every present key is found.
func TestKeyBloomFilterRandomized(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, seed))
	defer func() {
		if t.Failed() {
			t.Logf("seed %d", seed)
		}
	}()
	dir := t.TempDir()
	open := func() (*Engine, *Session) {
		e, err := Open(Options{DataDir: dir, NoSync: true, Logger: testEngineLogger()})
		if err != nil {
			t.Fatal(err)
		}
		s, err := e.NewSession("pivotdb", "pivotdb")
		if err != nil {
			t.Fatal(err)
		}
		return e, s
	}
	e, s := open()
	defer func() { e.Close() }()
	query(t, s, "CREATE TABLE t (a Int64, b Utf8, v Int64, PRIMARY KEY (a, b)) WITH (UNIFORM_PARTITIONS = 4)")
	model := map[[2]string]int64{}
	key := func() (int64, string) { return r.Int64N(400) - 200, fmt.Sprint("s", r.IntN(5)) }
	steps := 300
	if testing.Short() {
		steps = 100
	}
	for step := range steps {
		switch op := r.IntN(100); {
		case op < 40:
			var vals []string
			for range 1 + r.IntN(30) {
				a, b := key()
				v := int64(step)
				vals = append(vals, fmt.Sprintf("(%d, '%s', %d)", a, b, v))
				model[[2]string{fmt.Sprint(a), b}] = v
			}
			query(t, s, "UPSERT INTO t (a, b, v) VALUES "+strings.Join(vals, ", "))
		case op < 50:
			a, b := key()
			_, present := model[[2]string{fmt.Sprint(a), b}]
			_, err := tryQuery(s, fmt.Sprintf("INSERT INTO t (a, b, v) VALUES (%d, '%s', %d)", a, b, step))
			if present != isCode(err, sqlerr.UniqueViolation) || (!present && err != nil) {
				t.Fatalf("step %d: INSERT (%d, %s) with present=%v: %v", step, a, b, present, err)
			}
			if !present {
				model[[2]string{fmt.Sprint(a), b}] = int64(step)
			}
		case op < 58:
			a, b := key()
			query(t, s, fmt.Sprintf("DELETE FROM t WHERE a = %d AND b = '%s'", a, b))
			delete(model, [2]string{fmt.Sprint(a), b})
		case op < 66:
			query(t, s, "ALTER TABLE t SET KEY_BLOOM_FILTER "+[]string{"ENABLED", "DISABLED"}[r.IntN(2)])
			if r.IntN(2) == 0 {
				e.bg.Wait()
			}
		case op < 72:
			if err := e.storage.Flush(); err != nil {
				t.Fatal(err)
			}
		case op < 76:
			if err := e.storage.Compact(context.Background(), storage.Span{}); err != nil {
				t.Fatal(err)
			}
		case op < 78:
			e.Close()
			e, s = open()
		default:
			// A point read of keys, present ones among them.
			var keys, want []string
			seen := map[string]bool{}
			for range 1 + r.IntN(20) {
				a, b := key()
				if r.IntN(2) == 0 && len(model) > 0 {
					for k := range model {
						fmt.Sscan(k[0], &a)
						b = k[1]
						break
					}
				}
				tuple := fmt.Sprintf("(%d, '%s')", a, b)
				keys = append(keys, tuple)
				if v, ok := model[[2]string{fmt.Sprint(a), b}]; ok && !seen[tuple] {
					want = append(want, fmt.Sprintf("%d %s %d", a, b, v))
				}
				seen[tuple] = true
			}
			rows := query(t, s, "SELECT a, b, v FROM t WHERE (a, b) IN ("+strings.Join(keys, ", ")+")")
			var got []string
			for _, row := range rows {
				got = append(got, fmt.Sprintf("%d %s %d", row[0].Int(), row[1].Str(), row[2].Int()))
			}
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("step %d: IN %v\n got %v\nwant %v", step, keys, got, want)
			}
		}
	}
}

func testEngineLogger() storage.Logger {
	return storage.SlogLogger{L: slog.New(slog.NewTextHandler(io.Discard, nil))}
}
