package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// rowKey builds a row key of table id with a uint64 primary key.
func rowKey(table, k uint64) []byte {
	return AppendUint64(AppendTablePrefix(nil, table), k)
}

// TestKeyFilterRandomized checks the one property a filter must never break:
// every present key is found, whatever the history of the setting. It runs
// random writes, deletes, filter toggles of three tables, flushes,
// compactions and restarts against a map, and after each step looks up
// present and absent keys through Engine.Get, Batch.Get, Snapshot.Get and a
// PointReader.
func TestKeyFilterRandomized(t *testing.T) {
	r := newRand(t)
	fs := NewMemFS()
	opts := Options{MemTableSizeBytes: 64 << 10}
	e := openMem(t, fs, opts)
	defer func() { e.Close() }()

	const tables = 3
	on := [tables + 1]bool{}
	model := map[string]string{}
	var history []string
	defer func() {
		if t.Failed() {
			t.Logf("history: %s", strings.Join(history[max(0, len(history)-20):], " "))
		}
	}()
	randKey := func() []byte { return rowKey(1+r.Uint64N(tables), r.Uint64N(3000)) }

	check := func(step int) {
		snap := e.NewSnapshot()
		defer snap.Close()
		b := e.NewBatch()
		defer b.Close()
		pr, err := e.NewPointReader()
		if err != nil {
			t.Fatal(err)
		}
		defer pr.Close()
		for range 60 {
			key := randKey()
			if r.IntN(2) == 0 && len(model) > 0 {
				for k := range model { // a present key
					key = []byte(k)
					break
				}
			}
			want, wantOK := model[string(key)]
			for name, rd := range map[string]interface {
				Get([]byte) ([]byte, bool, error)
			}{"engine": e, "snapshot": snap, "batch": b, "pointreader": pr} {
				got, ok, err := rd.Get(key)
				if err != nil {
					t.Fatalf("step %d %s Get(%s): %v", step, name, FormatKey(key), err)
				}
				if ok != wantOK || string(got) != want {
					t.Fatalf("step %d %s Get(%s) = %q, %v; want %q, %v (filters %v)",
						step, name, FormatKey(key), got, ok, want, wantOK, on)
				}
			}
		}
	}

	steps := 400
	if raceEnabled || testing.Short() {
		steps = 150
	}
	for step := range steps {
		op := r.IntN(100)
		history = append(history, fmt.Sprintf("%d:%d", step, op))
		switch {
		case op < 60:
			b := e.NewBatch()
			for range 1 + r.IntN(100) {
				key := randKey()
				if r.IntN(5) == 0 {
					if err := b.Delete(key); err != nil {
						t.Fatal(err)
					}
					delete(model, string(key))
					continue
				}
				v := fmt.Sprint(step)
				if err := b.Set(key, []byte(v)); err != nil {
					t.Fatal(err)
				}
				model[string(key)] = v
			}
			if err := b.Commit(); err != nil {
				t.Fatal(err)
			}
			b.Close()
		case op < 75:
			id := 1 + r.Uint64N(tables)
			on[id] = !on[id]
			e.SetKeyFilter(id, on[id])
			history = append(history, fmt.Sprintf("filter(%d)=%v", id, on[id]))
		case op < 85:
			if err := e.Flush(); err != nil {
				t.Fatal(err)
			}
		case op < 90:
			if err := e.Compact(context.Background(), Span{}); err != nil {
				t.Fatal(err)
			}
		case op < 94:
			if err := e.CompactTable(context.Background(), 1+r.Uint64N(tables)); err != nil {
				t.Fatal(err)
			}
		default:
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			e = openMem(t, fs, opts)
			// A restart forgets the set until the catalog is loaded again
			// (the sql layer does that); reapply only some of it, so that
			// sstables are also written while the memory disagrees.
			for id := uint64(1); id <= tables; id++ {
				if on[id] && r.IntN(2) == 0 {
					e.SetKeyFilter(id, true)
				} else {
					on[id] = false
				}
			}
		}
		check(step)
	}
}

// TestKeyFilterSkipsBlocks checks that the filter is used at all: lookups of
// absent keys of a table with the setting on are answered by filters (Pebble
// counts them as filter hits) on every level including the bottom one, while
// a table without it never consults one.
func TestKeyFilterSkipsBlocks(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{})
	defer e.Close()
	e.SetKeyFilter(1, true)
	b := e.NewBatch()
	for k := uint64(0); k < 20000; k += 2 {
		for _, id := range []uint64{1, 2} {
			if err := b.Set(rowKey(id, k), []byte("v")); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if err := e.Compact(context.Background(), Span{}); err != nil {
		t.Fatal(err)
	}
	if n := e.Metrics().Levels[6].TablesCount; n == 0 {
		t.Fatalf("expected the data in L6 after a full compaction")
	}
	lookups := func(id uint64) (hits int64) {
		before := e.Metrics().Filter.Hits
		for k := uint64(1); k < 20000; k += 2 { // absent keys
			if _, ok, err := e.Get(rowKey(id, k)); err != nil || ok {
				t.Fatalf("Get(%d, %d) = %v, %v", id, k, ok, err)
			}
		}
		return e.Metrics().Filter.Hits - before
	}
	if hits := lookups(1); hits < 9000 {
		t.Errorf("table with a filter: %d filter hits for 10000 absent keys, want most of them", hits)
	}
	if hits := lookups(2); hits != 0 {
		t.Errorf("table without a filter: %d filter hits, want 0", hits)
	}
	bytesByTable, err := e.KeyFilterBytes()
	if err != nil {
		t.Fatal(err)
	}
	// 10000 keys at 10 bits each.
	if got := bytesByTable[1]; got < 10000*KeyFilterBitsPerKey/8 || got > 2*10000*KeyFilterBitsPerKey/8 {
		t.Errorf("filter bytes of table 1 = %d, want about %d", got, 10000*KeyFilterBitsPerKey/8)
	}
	if got, ok := bytesByTable[2]; ok {
		t.Errorf("filter bytes of table 2 = %d, want none", got)
	}

	// Turning it off: Compact alone leaves bottom-level sstables as they
	// are; CompactTable rewrites them without the filter.
	e.SetKeyFilter(1, false)
	if err := e.CompactTable(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	e.SetKeyFilter(1, true) // so that the lookups would use a filter if there were one
	if hits := lookups(1); hits != 0 {
		t.Errorf("after DISABLED and compaction: %d filter hits, want 0", hits)
	}
	if bytesByTable, _ := e.KeyFilterBytes(); len(bytesByTable) != 0 {
		t.Errorf("filter bytes after DISABLED and compaction: %v", bytesByTable)
	}
	// And on again.
	if err := e.CompactTable(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if hits := lookups(1); hits < 9000 {
		t.Errorf("after ENABLED and CompactTable: %d filter hits", hits)
	}
}

// TestKeyFilterFormat checks MayContain's conservative answers on blocks it
// cannot vouch for, and its exact answers on a block it wrote.
func TestKeyFilterFormat(t *testing.T) {
	tables := &keyFilterTables{}
	tables.setTable(7, true)
	p := keyFilterPolicy{tables: tables}
	w := p.NewWriter(pebble.TableFilter)
	for k := uint64(0); k < 100; k++ {
		w.AddKey(bareKey(rowKey(5, k))) // not covered
		w.AddKey(bareKey(rowKey(7, k)))
	}
	f := w.Finish(nil)
	bloomBits, entries, ok := parseKeyFilter(f)
	if !ok || len(bloomBits) == 0 || !bytes.Equal(entries, binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, 7), 100)) {
		t.Fatalf("parse: ok=%v bloom=%d entries=%x", ok, len(bloomBits), entries)
	}
	absent := 0
	for k := uint64(0); k < 1000; k++ {
		if !p.MayContain(pebble.TableFilter, f, bareKey(rowKey(5, k))) {
			t.Fatalf("uncovered table key %d: filtered out", k)
		}
		in := p.MayContain(pebble.TableFilter, f, bareKey(rowKey(7, k)))
		if k < 100 && !in {
			t.Fatalf("present key %d: filtered out", k)
		}
		if k >= 100 && !in {
			absent++
		}
	}
	if absent < 850 {
		t.Errorf("only %d of 900 absent keys filtered", absent)
	}
	for _, bad := range [][]byte{nil, {1}, f[:len(f)-1], append(bytes.Clone(f[:len(f)-1]), 9)} {
		if !p.MayContain(pebble.TableFilter, bad, rowKey(7, 500)) {
			t.Errorf("malformed block %x: filtered out", bad)
		}
	}
	if !p.MayContain(pebble.TableFilter, f, []byte{SystemPrefix, 1}) {
		t.Errorf("system key filtered out")
	}
	// A writer with nothing covered writes an empty block.
	w = p.NewWriter(pebble.TableFilter)
	w.AddKey(rowKey(5, 1))
	if f := w.Finish(nil); len(f) != 0 {
		t.Errorf("uncovered sstable: filter of %d bytes", len(f))
	}
}
