package partition

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/storagetest"
)

// newRand returns the randomness of one randomized test; its seed is
// printed if the test fails, for replaying it with -seed.
func newRand(t testing.TB) *rand.Rand { return storagetest.NewRand(t, "./partition/") }

// quietLogger keeps Pebble's informational lines out of the tests' output.
type quietLogger = storagetest.QuietLogger

// The tables of the tests have the primary key (a Int64, b Utf8), both
// nullable; a pivot may hold a prefix of it.

// key encodes a key tuple of table id: each value is an int (a), a string
// (b) or nil (NULL).
func key(id uint64, vals ...any) []byte {
	k := storage.TablePrefix(id)
	for i, v := range vals {
		switch v := v.(type) {
		case nil:
			k = storage.AppendNull(k)
		case int:
			if i != 0 {
				panic("column b is Utf8")
			}
			k = storage.AppendInt64(k, int64(v))
		case string:
			if i != 1 {
				panic("column a is Int64")
			}
			k = storage.AppendString(k, v)
		default:
			panic(fmt.Sprintf("bad key value %T", v))
		}
	}
	return k
}

// keyColumns is the KeyColumnsFunc of the tests' tables.
func keyColumns(tableID uint64, k []byte, ends []int) ([]int, error) {
	prefix := storage.TablePrefix(tableID)
	if !bytes.HasPrefix(k, prefix) {
		return ends, fmt.Errorf("not a key of table %d", tableID)
	}
	rest := k[len(prefix):]
	var err error
	for col := 0; len(rest) > 0; col++ {
		switch {
		case col >= 2:
			return ends, fmt.Errorf("more than 2 key columns")
		case storage.PeekNull(rest):
			rest, err = storage.DecodeNull(rest)
		case col == 0:
			_, rest, err = storage.DecodeInt64(rest)
		default:
			_, rest, err = storage.DecodeString(rest)
		}
		if err != nil {
			return ends, err
		}
		ends = append(ends, len(k)-len(rest))
	}
	return ends, nil
}

// fmtKey renders a key or pivot of the tests' tables as a tuple: (), (1),
// (1, 'x'), (NULL); the end of the table as <end>.
func fmtKey(tableID uint64, k []byte) string {
	if k == nil || bytes.Equal(k, storage.TableSpan(tableID).End) {
		return "<end>"
	}
	prefix := storage.TablePrefix(tableID)
	if !bytes.HasPrefix(k, prefix) {
		return storage.FormatKey(k)
	}
	rest := k[len(prefix):]
	var parts []string
	for col := 0; len(rest) > 0; col++ {
		var err error
		switch {
		case storage.PeekNull(rest):
			rest, err = storage.DecodeNull(rest)
			parts = append(parts, "NULL")
		case col == 0:
			var v int64
			v, rest, err = storage.DecodeInt64(rest)
			parts = append(parts, strconv.FormatInt(v, 10))
		default:
			var v string
			v, rest, err = storage.DecodeString(rest)
			parts = append(parts, "'"+v+"'")
		}
		if err != nil || col >= 2 {
			return storage.FormatKey(k)
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// parseKey parses the notation of fmtKey: "()", "(5)", "(5, 'x')", "(NULL)".
func parseKey(t testing.TB, id uint64, s string) []byte {
	t.Helper()
	s = strings.TrimSpace(s)
	if s == "<end>" {
		return storage.TableSpan(id).End
	}
	if !strings.HasPrefix(s, "(") || !strings.HasSuffix(s, ")") {
		t.Fatalf("bad key %q", s)
	}
	inner := strings.TrimSpace(s[1 : len(s)-1])
	var vals []any
	if inner != "" {
		for i, p := range strings.Split(inner, ",") {
			p = strings.TrimSpace(p)
			switch {
			case p == "NULL":
				vals = append(vals, nil)
			case i == 0:
				n, err := strconv.Atoi(p)
				if err != nil {
					t.Fatalf("bad key %q: %v", s, err)
				}
				vals = append(vals, n)
			default:
				vals = append(vals, strings.Trim(p, "'"))
			}
		}
	}
	return key(id, vals...)
}

// env is an engine on an in-memory filesystem and a manager over it; reopen
// closes and reopens both, as a restart would.
type env struct {
	t    testing.TB
	fs   storage.FS
	eng  *storage.Engine
	m    *Manager
	opts Options
}

func newEnv(t testing.TB) *env {
	e := &env{t: t, fs: storage.NewMemFS(), opts: Options{KeyColumns: keyColumns}}
	e.open()
	t.Cleanup(func() {
		if e.eng != nil {
			e.eng.Close()
		}
	})
	return e
}

func (e *env) open() {
	e.t.Helper()
	eng, err := storage.Open("db", storage.Options{FS: e.fs, Logger: quietLogger{}})
	if err != nil {
		e.t.Fatal(err)
	}
	e.eng = eng
	m, err := Load(eng, e.opts)
	if err != nil {
		e.t.Fatal(err)
	}
	e.m = m
}

func (e *env) reopen() {
	e.t.Helper()
	if err := e.eng.Close(); err != nil {
		e.t.Fatal(err)
	}
	e.eng = nil
	e.open()
}

// create creates an empty table with the given split points.
func (e *env) create(id uint64, splits ...[]byte) {
	e.t.Helper()
	ch := e.m.Begin()
	b := e.m.store.NewBatch()
	defer b.Close()
	if err := ch.Create(b, id, splits); err != nil {
		ch.Abort()
		e.t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		ch.Abort()
		e.t.Fatal(err)
	}
	ch.Install()
}

// write commits one transaction of puts (value != nil) and deletes (value ==
// nil), recording the deltas against the committed state, which the caller
// vouches nobody else changes meanwhile (tests give each writer its own
// keys).
func (e *env) write(id uint64, keys [][]byte, values [][]byte) error {
	b := e.eng.NewBatch()
	defer b.Close()
	var w Writes
	for i, k := range keys {
		old, existed, err := b.Get(k)
		if err != nil {
			return err
		}
		if values[i] != nil {
			if err := b.Set(k, values[i]); err != nil {
				return err
			}
			w.RecordPut(id, k, len(values[i]), existed, len(old))
		} else {
			if err := b.Delete(k); err != nil {
				return err
			}
			w.RecordDelete(id, k, existed, len(old))
		}
	}
	return e.m.Commit(b, &w)
}

func (e *env) mustWrite(id uint64, keys [][]byte, values [][]byte) {
	e.t.Helper()
	if err := e.write(id, keys, values); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) check() {
	e.t.Helper()
	if err := e.m.CheckInvariants(); err != nil {
		e.t.Fatal(err)
	}
}

// checkStats compares every shard's statistics with a count of its span and
// expects none pending.
func (e *env) checkStats(id uint64) {
	e.t.Helper()
	sm := e.m.Map(id)
	st, err := e.m.Stats(sm)
	if err != nil {
		e.t.Fatal(err)
	}
	for k, s := range sm.Shards() {
		rows, size, err := countSpan(e.eng, s.Span, nil)
		if err != nil {
			e.t.Fatal(err)
		}
		if st[k].Pending || st[k].Rows != rows || st[k].Bytes != size {
			e.t.Fatalf("shard %d #%d %s: stats %+v, counted %d rows, %d bytes\n%s", k, s.ID, s.Span, st[k], rows, size, sm)
		}
	}
}

// mapString renders a map with fmtKey: one line per shard.
func mapString(sm *ShardMap) string {
	var sb strings.Builder
	for k, s := range sm.shards {
		fmt.Fprintf(&sb, "%d: [%s .. %s)\n", k, fmtKey(sm.tableID, s.Span.Start), fmtKey(sm.tableID, s.Span.End))
	}
	return sb.String()
}

// scan calls fn for every key and value of span.
func scan(r storage.Reader, span storage.Span, fn func(k, v []byte) error) error {
	return storage.Scan(r, span, fn)
}
