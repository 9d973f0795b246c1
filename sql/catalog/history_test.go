package catalog

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/meta"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// commitChange writes and installs ch at its commit timestamp, as the SQL
// layer does.
func commitChange(t *testing.T, store *meta.Store, ch *Change) hlc.Timestamp {
	t.Helper()
	b := store.NewBatch()
	defer b.Close()
	if err := ch.Write(b); err != nil {
		t.Fatal(err)
	}
	var at hlc.Timestamp
	b.OnCommitted(func(ts hlc.Timestamp) { at = ts })
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	ch.InstallAt(at)
	return at
}

// TestHistoryOnDisk: the catalog of any time since the history started is
// read back after a reopen (and past the generations kept in memory); a
// time before the history's start is inexact.
func TestHistoryOnDisk(t *testing.T) {
	dir := t.TempDir()
	eng, err := storage.Open(dir, storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	store := meta.Open(eng)
	c, err := Load(store)
	if err != nil {
		t.Fatal(err)
	}
	if c.diskStart.IsEmpty() {
		t.Fatal("no history start on a new data directory")
	}
	db, _ := c.Snapshot().Database(DefaultDatabase)
	// One table per change; each change after the first renames the
	// previous table and drops the one before it.
	type point struct {
		ts     hlc.Timestamp
		tables []string
	}
	var points []point
	names := func(s *Snapshot) []string {
		var out []string
		for _, t := range s.Tables(db.ID) {
			out = append(out, t.Name)
		}
		return out
	}
	var prev []*Table
	for i := 0; i < maxGenerations+8; i++ {
		ch := c.Begin()
		tb := &Table{ID: ch.NewID(), DatabaseID: db.ID, Name: "t" + string(rune('a'+i%26)) + string(rune('0'+i/26)),
			Columns: []Column{{ID: 1, Name: "k"}}, PrimaryKey: []int{0}}
		ch.PutTable(tb)
		if n := len(prev); n >= 2 {
			ch.DropTable(prev[n-2])
		}
		if n := len(prev); n >= 1 {
			r := *prev[n-1]
			r.Name += "_old"
			ch.PutTable(&r)
			prev[n-1] = &r
		}
		prev = append(prev, tb)
		ts := commitChange(t, store, ch)
		points = append(points, point{ts: ts, tables: names(c.Snapshot())})
	}
	check := func(when string, c *Catalog) {
		t.Helper()
		for i, p := range points {
			s, exact := c.At(p.ts)
			if !exact || fmtNames(names(s)) != fmtNames(p.tables) {
				t.Fatalf("%s: change %d: exact %v, tables %v, want %v", when, i, exact, names(s), p.tables)
			}
			if i > 0 {
				before := hlc.Timestamp{WallTime: p.ts.WallTime, Logical: p.ts.Logical - 1}
				if p.ts.Logical == 0 {
					before = hlc.Timestamp{WallTime: p.ts.WallTime - 1, Logical: 1 << 30}
				}
				if s, exact := c.At(before); !exact || fmtNames(names(s)) != fmtNames(points[i-1].tables) {
					t.Fatalf("%s: just before change %d: exact %v, tables %v, want %v", when, i, exact, names(s), points[i-1].tables)
				}
			}
		}
		if _, exact := c.At(hlc.Timestamp{WallTime: c.diskStart.WallTime - 1}); exact {
			t.Fatalf("%s: a read before the history start is exact", when)
		}
	}
	check("running", c)
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	eng, err = storage.Open(dir, storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	store = meta.Open(eng)
	c2, err := Load(store)
	if err != nil {
		t.Fatal(err)
	}
	now, err := eng.Clock().Now()
	if err != nil {
		t.Fatal(err)
	}
	c2.SetHistoryStart(now)
	if c2.diskStart != c.diskStart {
		t.Fatalf("history start %s after a reopen, was %s", c2.diskStart, c.diskStart)
	}
	check("reopened", c2)
}

// TestHistoryStartsOnOldDirectory: a data directory whose catalog has no
// history (written before it existed) gets one from its next open: the
// records of then are versions at the start, reads before it are inexact.
func TestHistoryStartsOnOldDirectory(t *testing.T) {
	eng, err := storage.Open(t.TempDir(), storage.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	store := meta.Open(eng)
	// The bare records only, as before the history.
	b := store.NewBatch()
	tb := &Table{ID: 7, DatabaseID: 1, Name: "old", Columns: []Column{{ID: 1, Name: "k"}}, PrimaryKey: []int{0}}
	for k, v := range map[string]any{string(idKey(dbPrefix, 1)): &Database{ID: 1, Name: DefaultDatabase},
		string(idKey(tablePrefix, 7)): tb, string(userKey(BootstrapUser)): &User{Name: BootstrapUser, Superuser: true}} {
		if err := b.Set([]byte(k), mustJSON(t, v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Set(seqKey, []byte("8")); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	before, _ := eng.Clock().Now()
	c, err := Load(store)
	if err != nil {
		t.Fatal(err)
	}
	if !before.Less(c.diskStart) {
		t.Fatalf("history start %s, not after %s", c.diskStart, before)
	}
	c.SetHistoryStart(hlc.Timestamp{WallTime: c.diskStart.WallTime + 1e9})
	if _, exact := c.At(before); exact {
		t.Fatal("a read before the history start is exact")
	}
	s, exact := c.At(c.diskStart)
	if !exact {
		t.Fatal("a read at the history start is inexact")
	}
	if _, ok := s.Table(1, "old"); !ok {
		t.Fatal("the history's first version lacks the table")
	}
	if s.nextID != 1 || c.ids.Load() != 8 {
		t.Fatalf("id counter %d (history snapshot %d)", c.ids.Load(), s.nextID)
	}
}

func fmtNames(n []string) string { return strings.Join(n, ",") }

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
