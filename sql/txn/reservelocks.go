package txn

import (
	"slices"

	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// ReserveLocks sizes t's bookkeeping of held keys for n more locks: a
// multi-row INSERT knows how many keys it is about to lock, and growing
// the map of held keys one doubling at a time was 4% of a 1,000-row
// INSERT's CPU. The map is sized only before t's first lock (a map
// cannot grow in place); the list of held keys always.
func (t *Txn) ReserveLocks(n int) {
	if n <= 0 {
		return
	}
	if t.held == nil {
		t.held = make(map[string]mvcc.Strength, n)
	}
	t.keys = slices.Grow(t.keys, n)
}
