package partition

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/pivotdb/pivotdb/storage"
)

func TestCreateValidatesPivots(t *testing.T) {
	e := newEnv(t)
	const table = 7
	for _, tc := range []struct {
		name   string
		splits [][]byte
	}{
		{"not ascending", [][]byte{key(table, 5), key(table, 3)}},
		{"repeated", [][]byte{key(table, 5), key(table, 5)}},
		{"other table", [][]byte{key(8, 5)}},
		{"system key", [][]byte{{storage.SystemPrefix, 1}}},
		{"pivot 0 not first", [][]byte{key(table, 1), key(table)}},
		{"max marker", [][]byte{storage.AppendMax(key(table, 5))}},
		{"partial column", [][]byte{key(table, 5)[:12]}},
		{"trailing bytes", [][]byte{append(key(table, 5), 7)}},
		{"too many columns", [][]byte{storage.AppendNull(key(table, 5, "x"))}},
	} {
		ch := e.m.Begin()
		b := e.m.store.NewBatch()
		err := ch.Create(b, table, tc.splits)
		ch.Abort()
		b.Close()
		if !errors.Is(err, ErrInvalidPivot) {
			t.Errorf("%s: %v, want ErrInvalidPivot", tc.name, err)
		}
	}
	if e.m.Map(table) != nil {
		t.Fatal("aborted creates left a map")
	}
	e.check()

	// A leading table prefix is pivot 0 and is accepted.
	e.create(table, key(table), key(table, nil), key(table, 5, "x"))
	if got := mapString(e.m.Map(table)); got != "0: [() .. (NULL))\n1: [(NULL) .. (5, 'x'))\n2: [(5, 'x') .. <end>)\n" {
		t.Fatalf("map:\n%s", got)
	}
	ch := e.m.Begin()
	b := e.m.store.NewBatch()
	defer b.Close()
	if err := ch.Create(b, table, nil); !errors.Is(err, ErrTableExists) {
		t.Fatalf("second create: %v", err)
	}
	ch.Abort()
	e.check()
}

// TestChangeLifecycle walks a table through create, writes, drop (aborted,
// then installed) and restarts, checking what commits see at each step.
func TestChangeLifecycle(t *testing.T) {
	e := newEnv(t)
	const table, other = 7, 8

	// Two tables in one change, then an aborted change.
	ch := e.m.Begin()
	b := e.m.store.NewBatch()
	if err := ch.Create(b, table, [][]byte{key(table, 10)}); err != nil {
		t.Fatal(err)
	}
	if err := ch.Create(b, other, nil); err != nil {
		t.Fatal(err)
	}
	if e.m.Map(table) != nil {
		t.Fatal("map visible before Install")
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	ch.Install()
	b.Close()
	ch = e.m.Begin()
	b = e.m.store.NewBatch()
	if err := ch.Create(b, 9, nil); err != nil {
		t.Fatal(err)
	}
	ch.Abort()
	b.Close()
	if got := e.m.Tables(); !slices.Equal(got, []uint64{table, other}) {
		t.Fatalf("tables %v", got)
	}
	e.check()

	// A transaction over both tables.
	data := e.eng.NewBatch()
	var w Writes
	for _, k := range [][]byte{key(table, 1), key(table, 20), key(other, 1), key(table, 30)} {
		id, _, _ := storage.DecodeTablePrefix(k)
		if err := data.Set(k, []byte("v")); err != nil {
			t.Fatal(err)
		}
		w.RecordPut(id, k, 1, false, 0)
	}
	if err := e.m.Commit(data, &w); err != nil {
		t.Fatal(err)
	}
	data.Close()
	e.checkStats(table)
	e.checkStats(other)
	st, _ := e.m.Stats(e.m.Map(table))
	if st[0].Rows != 1 || st[1].Rows != 2 || st[0].Writes != 1 || st[1].Writes != 2 {
		t.Fatalf("stats %+v", st)
	}

	// A write to a table without a map fails and commits nothing.
	data = e.eng.NewBatch()
	w.Reset()
	data.Set(key(table, 2), []byte("v"))
	w.RecordPut(table, key(table, 2), 1, false, 0)
	data.Set(key(42, 1), []byte("v"))
	w.RecordPut(42, key(42, 1), 1, false, 0)
	if err := e.m.Commit(data, &w); !errors.Is(err, ErrTableNotFound) {
		t.Fatalf("commit to table 42: %v", err)
	}
	data.Close()
	if _, ok, _ := e.eng.Get(key(table, 2)); ok {
		t.Fatal("failed commit wrote a row")
	}

	write := func() error {
		return e.write(table, [][]byte{key(table, 3)}, [][]byte{[]byte("w")})
	}
	drop := func() (*Change, *storage.Batch) {
		ch := e.m.Begin()
		b := e.eng.NewBatch()
		if err := ch.Drop(e.m.store.With(b), table); err != nil {
			t.Fatal(err)
		}
		if err := b.DeleteRange(storage.TableSpan(table)); err != nil {
			t.Fatal(err)
		}
		return ch, b
	}

	// Drop, aborted: writes fail meanwhile and work again after.
	ch, db := drop()
	if err := write(); !errors.Is(err, ErrTableNotFound) {
		t.Fatalf("write during drop: %v", err)
	}
	if _, err := e.m.Split(table, [][]byte{key(table, 5)}); !errors.Is(err, ErrTableNotFound) {
		t.Fatalf("split during drop: %v", err)
	}
	ch.Abort()
	db.Close()
	if err := write(); err != nil {
		t.Fatal(err)
	}
	e.check()
	e.checkStats(table)

	// Drop, installed.
	ch, db = drop()
	if err := db.Commit(); err != nil {
		t.Fatal(err)
	}
	ch.Install()
	db.Close()
	if e.m.Map(table) != nil {
		t.Fatal("dropped table has a map")
	}
	if err := write(); !errors.Is(err, ErrTableNotFound) {
		t.Fatalf("write after drop: %v", err)
	}
	e.check() // No stats or pending records left behind.
	e.reopen()
	if got := e.m.Tables(); !slices.Equal(got, []uint64{other}) {
		t.Fatalf("tables after restart %v", got)
	}
	e.check()
	e.checkStats(other)

	// Ids of committed shards are never reused, across restarts too.
	e.create(table)
	if id := e.m.Map(table).Shard(0).ID; id <= e.m.Map(other).Shard(0).ID {
		t.Fatalf("new table got shard id %d", id)
	}
}

func TestSplitMergeAPI(t *testing.T) {
	e := newEnv(t)
	const table = 7
	e.create(table)
	fill(e, table, 0, 100)

	// Unordered keys, a duplicate, pivot 0 and a key that is already a
	// pivot after the first split.
	sm, err := e.m.Split(table, [][]byte{key(table, 60), key(table, 20, "r"), key(table, 60), key(table)})
	if err != nil {
		t.Fatal(err)
	}
	if got := mapString(sm); got != "0: [() .. (20, 'r'))\n1: [(20, 'r') .. (60))\n2: [(60) .. <end>)\n" {
		t.Fatalf("map:\n%s", got)
	}
	if again, err := e.m.Split(table, [][]byte{key(table, 60)}); err != nil || again != sm {
		t.Fatalf("split at an existing pivot: %v, map changed: %v", err, again != sm)
	}
	if _, err := e.m.Split(table, [][]byte{key(table, 5)[:11]}); !errors.Is(err, ErrInvalidPivot) {
		t.Fatalf("split at a partial column: %v", err)
	}
	e.checkStats(table)

	if _, err := e.m.Merge(table, 9999, 2); !errors.Is(err, ErrShardNotFound) {
		t.Fatalf("merge of an unknown shard: %v", err)
	}
	if _, err := e.m.Merge(table, sm.Shard(1).ID, 3); !errors.Is(err, ErrShardNotFound) {
		t.Fatalf("merge past the end: %v", err)
	}
	if same, err := e.m.Merge(table, sm.Shard(1).ID, 1); err != nil || same != sm {
		t.Fatalf("merge of one shard: %v", err)
	}
	// Reads survive a neighbour's merge; the merged shard starts afresh.
	sm.Shard(0).AddReads(5)
	merged, err := e.m.Merge(table, sm.Shard(1).ID, 2)
	if err != nil {
		t.Fatal(err)
	}
	if merged.Len() != 2 || merged.Shard(0).ID != sm.Shard(0).ID || merged.Shard(0).Reads() != 5 || merged.Shard(1).Reads() != 0 {
		t.Fatalf("after merge:\n%s", merged)
	}
	if merged.Version() != sm.Version()+1 {
		t.Fatalf("version %d after %d", merged.Version(), sm.Version())
	}
	e.checkStats(table)

	if _, err := e.m.Reshard(table, [][]byte{key(table, 20, "r"), key(table, 10)}); !errors.Is(err, ErrInvalidPivot) {
		t.Fatalf("reshard with descending pivots: %v", err)
	}
	if _, err := e.m.Reshard(table, [][]byte{key(table, 10), key(table, 20, "r"), key(table, 90)}); err != nil {
		t.Fatal(err)
	}
	e.check()
	e.checkStats(table)

	tc, err := e.m.TableCounters(table)
	if err != nil {
		t.Fatal(err)
	}
	// Split into 3 (+2), merge of 2 (+1), reshard: [() .. (20, 'r')) into
	// two (a split, +1) and [(20, 'r') .. <end>) into two (+1).
	if tc != (TableCounters{Splits: 4, Merges: 1}) {
		t.Fatalf("table counters %+v", tc)
	}
}

// TestDiffPivots pins the grouping of old and new shards.
func TestDiffPivots(t *testing.T) {
	p := func(vals ...int) [][]byte {
		out := [][]byte{key(7)}
		for _, v := range vals {
			out = append(out, key(7, v))
		}
		return out
	}
	for _, tc := range []struct {
		old, new [][]byte
		want     []group
	}{
		{p(), p(), []group{{0, 1, 0, 1}}},
		{p(10), p(10), []group{{0, 1, 0, 1}, {1, 2, 1, 2}}},
		{p(10), p(5, 10), []group{{0, 1, 0, 2}, {1, 2, 2, 3}}},
		{p(10, 20, 30), p(10, 30), []group{{0, 1, 0, 1}, {1, 3, 1, 2}, {3, 4, 2, 3}}},
		{p(10, 20), p(15, 25), []group{{0, 3, 0, 3}}},
		{p(10, 20, 30), p(), []group{{0, 4, 0, 1}}},
		{p(), p(1, 2, 3), []group{{0, 1, 0, 4}}},
	} {
		if got := diffPivots(tc.old, tc.new); !slices.Equal(got, tc.want) {
			t.Errorf("diff %d -> %d pivots: %v, want %v", len(tc.old), len(tc.new), got, tc.want)
		}
	}
}

// TestRecordLayout pins the persisted keys: they are the on-disk format.
func TestRecordLayout(t *testing.T) {
	for _, tc := range []struct {
		key  []byte
		want string
	}{
		{seqKey, "/System/017061727400010173657100 01"},
		{shardRecordKey(7, key(7)), "/System/01706172740001017368617264000101000000000000000701000 1"},
		// The pivot suffix 01 8000000000000000a is escaped: each 00 becomes 00 ff.
		{shardRecordKey(7, key(7, 10)), "/System/0170617274000101736861726400010100000000000000070101 8000ff00ff00ff00ff00ff00ff0a 0001"},
		{legacyStatsKey(7, 5), "/System/0170617274000101737461747300010100000000000000070100000000000000 05"},
		// Shard-local: 03 11 and the full pivot, unescaped.
		{statsKey(key(7)), "0x 0311 02 0000000000000007"},
		{statsKey(key(7, 10)), "0x 0311 02 0000000000000007 01 800000000000000a"},
		{pendingKey(7, 5), "/System/017061727400010170656e64696e6700010100000000000000070100000000000000 05"},
		{tableStatsKey(7), "/System/0170617274000101746162 6c6500010100000000000000 07"},
	} {
		want := string(bytes.ReplaceAll([]byte(tc.want), []byte(" "), nil))
		if got := storage.FormatKey(tc.key); got != want {
			t.Errorf("key %s, want %s", got, want)
		}
	}
	if tableID, pivot, err := decodeStatsKey(statsKey(key(7, 10))); err != nil || tableID != 7 || !bytes.Equal(pivot, key(7, 10)) {
		t.Fatalf("decode stats key: %d %s %v", tableID, fmtKey(7, pivot), err)
	}
	if !tableStatsSpan(7).Contains(statsKey(key(7))) || !tableStatsSpan(7).Contains(statsKey(key(7, 10))) || tableStatsSpan(7).Contains(statsKey(key(8))) {
		t.Fatalf("table 7's counter span %s", tableStatsSpan(7))
	}
	tableID, pivot, id, err := decodeShardRecord(shardRecordKey(7, key(7, 10)), encodeShardID(5))
	if err != nil || tableID != 7 || !bytes.Equal(pivot, key(7, 10)) || id != 5 {
		t.Fatalf("decode: %d %s %d %v", tableID, fmtKey(7, pivot), id, err)
	}
}
