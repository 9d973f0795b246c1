package history

import (
	"slices"
	"testing"
)

// Helpers that spell hand-made histories compactly: a(k, v) appends, r(k,
// list...) reads, txn(id, status, invoke, complete, ops...).
func a(k, v int) Op           { return Op{Kind: Append, Key: k, Value: v} }
func r(k int, list ...int) Op { return Op{Kind: Read, Key: k, List: append([]int{}, list...)} }
func ok(id int, inv, done int64, ops ...Op) Txn {
	return Txn{ID: id, Process: id, Ops: ops, Status: StatusOK, Invoke: inv, Complete: done}
}
func failed(id int, ops ...Op) Txn { return Txn{ID: id, Process: id, Ops: ops, Status: StatusFail} }
func info(id int, inv int64, ops ...Op) Txn {
	return Txn{ID: id, Process: id, Ops: ops, Status: StatusInfo, Invoke: inv}
}

func TestListAppendAnomalies(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    []Txn
		// kinds are the anomalies that must be found (exactly these).
		kinds []string
		// validUpTo is the strongest level the history passes at (0: none;
		// every level when kinds is empty).
		validUpTo Level
	}{
		{
			name: "serial history",
			h: []Txn{
				ok(1, 0, 10, a(1, 1), a(2, 1)),
				ok(2, 20, 30, r(1, 1), a(1, 2)),
				ok(3, 40, 50, r(1, 1, 2), r(2, 1)),
			},
			validUpTo: ReadCommitted,
		},
		{
			name: "concurrent but serializable",
			h: []Txn{
				ok(1, 0, 100, a(1, 1)),
				ok(2, 0, 100, r(1), a(2, 1)),
				ok(3, 200, 300, r(1, 1), r(2, 1)),
			},
		},
		{
			name: "aborted read (G1a)",
			h: []Txn{
				failed(1, a(1, 1)),
				ok(2, 0, 10, r(1, 1)),
			},
			kinds: []string{"G1a"},
		},
		{
			name: "intermediate read (G1b)",
			h: []Txn{
				ok(1, 0, 10, a(1, 1), a(1, 2)),
				ok(2, 0, 10, r(1, 1)),
				ok(3, 20, 30, r(1, 1, 2)),
			},
			// T2's read also misses T1's second append, which comes
			// next: Elle reports the read-write cycle too.
			kinds: []string{"G-single", "G1b"},
		},
		{
			name: "dirty write cycle (G0)",
			h: []Txn{
				ok(1, 0, 10, a(1, 1), a(2, 2)),
				ok(2, 0, 10, a(1, 2), a(2, 1)),
				ok(3, 20, 30, r(1, 1, 2), r(2, 1, 2)),
			},
			kinds: []string{"G0"},
		},
		{
			name: "circular information flow (G1c)",
			h: []Txn{
				ok(1, 0, 10, a(1, 1), r(2, 1)),
				ok(2, 0, 10, a(2, 1), r(1, 1)),
			},
			kinds: []string{"G1c"},
		},
		{
			// T2 sees T1's append to key 1 but not to key 2: a read skew
			// that READ COMMITTED allows and snapshot isolation does not.
			name: "read skew (G-single)",
			h: []Txn{
				ok(1, 0, 10, a(1, 1), a(2, 1)),
				ok(2, 0, 10, r(1, 1), r(2)),
				ok(3, 20, 30, r(2, 1)),
			},
			kinds:     []string{"G-single"},
			validUpTo: ReadCommitted,
		},
		{
			// Write skew: each reads the key the other appends to, and
			// misses it. Snapshot isolation allows it.
			name: "write skew (G2-item)",
			h: []Txn{
				ok(1, 0, 10, r(1), a(2, 1)),
				ok(2, 0, 10, r(2), a(1, 1)),
				ok(3, 20, 30, r(1, 1), r(2, 1)),
			},
			kinds:     []string{"G2-item"},
			validUpTo: RepeatableRead,
		},
		{
			// T2 starts after T1 committed yet misses its append: a stale
			// read, serializable in the order T2, T1 but not in real time.
			name: "stale read (G-single-realtime)",
			h: []Txn{
				ok(1, 0, 10, a(1, 1)),
				ok(2, 20, 30, r(1)),
				ok(3, 40, 50, r(1, 1)),
			},
			kinds:     []string{"G-single-realtime"},
			validUpTo: Serializable,
		},
		{
			name: "own write not seen (internal)",
			h: []Txn{
				ok(1, 0, 10, a(1, 1), r(1)),
			},
			kinds: []string{"internal"},
		},
		{
			name: "duplicate elements",
			h: []Txn{
				ok(1, 0, 10, a(1, 1)),
				ok(2, 20, 30, r(1, 1, 1)),
			},
			kinds: []string{"duplicate-elements"},
		},
		{
			name: "garbage read",
			h: []Txn{
				ok(1, 0, 10, a(1, 1)),
				ok(2, 20, 30, r(1, 1, 3)),
			},
			kinds: []string{"garbage-read"},
		},
		{
			name: "incompatible orders",
			h: []Txn{
				ok(1, 0, 10, a(1, 1)),
				ok(2, 0, 10, a(1, 2)),
				ok(3, 20, 30, r(1, 1, 2)),
				ok(4, 20, 30, r(1, 2, 1)),
			},
			kinds: []string{"incompatible-order"},
		},
		{
			// An unknown outcome whose append was seen committed.
			name: "info transaction seen",
			h: []Txn{
				info(1, 0, a(1, 1)),
				ok(2, 20, 30, r(1, 1)),
				info(3, 0, a(1, 2)),
			},
			validUpTo: ReadCommitted,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := CheckListAppend(tc.h, StrictSerializable)
			if got := res.Kinds(); !slices.Equal(got, tc.kinds) {
				t.Fatalf("anomalies %v, want %v\n%s", got, tc.kinds, res)
			}
			for l := ReadCommitted; l <= StrictSerializable; l++ {
				want := l <= tc.validUpTo
				if tc.kinds == nil {
					want = true
				}
				if got := CheckListAppend(tc.h, l); got.Valid() != want {
					t.Errorf("level %d: valid %v, want %v\n%s", l, got.Valid(), want, got)
				}
			}
		})
	}
}
