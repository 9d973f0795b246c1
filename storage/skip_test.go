package storage

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestScanOverVersionRuns checks nextKey's two ways of leaving a key
// (skip.go) against a model: rows in runs with and without older versions,
// some deleted, read at every commit's timestamp (so that some keys have
// versions above the read), with the rows in the memtable and flushed.
// Each scan's result must equal the model's state at its timestamp, and
// the forward scan must agree with the backward one (scanAll).
func TestScanOverVersionRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	e := openMem(t, NewMemFS(), Options{IdleFlushTick: -1})
	defer e.Close()
	const rows = 300
	key := func(i int) []byte { return binary.BigEndian.AppendUint64(TablePrefix(1), uint64(i)) }
	state := map[int]string{}
	type snap struct {
		view *View
		want string
	}
	render := func() string {
		var parts []string
		for i := range rows {
			if v, ok := state[i]; ok {
				parts = append(parts, fmt.Sprintf("%s=%s", key(i)[9:], v))
			}
		}
		return strings.Join(parts, " ")
	}
	var snaps []snap
	for round := range 12 {
		mustCommit(t, e, func(b *Batch) {
			for i := range rows {
				// Rows 60-139 and 200-229 change in most rounds, the rest
				// only in the first: runs of keys with many versions among
				// keys with one.
				hot := (i >= 60 && i < 140) || (i >= 200 && i < 230)
				if round > 0 && (!hot || r.IntN(4) == 0) {
					continue
				}
				if round > 0 && r.IntN(8) == 0 {
					must(t, b.Delete(key(i)))
					delete(state, i)
					continue
				}
				v := fmt.Sprintf("%d.%d", i, round)
				must(t, b.Set(key(i), []byte(v)))
				state[i] = v
			}
		})
		ts, err := e.ReadTimestamp()
		if err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, snap{view: e.At(ts), want: render()})
	}
	check := func(layout string) {
		for i, s := range snaps {
			if got := scanAll(t, s.view); got != s.want {
				t.Fatalf("%s, read after commit %d:\n got %s\nwant %s", layout, i, got, s.want)
			}
		}
	}
	check("memtable")
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	check("flushed")
}
