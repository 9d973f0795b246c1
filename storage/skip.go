package storage

import (
	"bytes"

	"github.com/pivotdb/pivotdb/storage/enginekey"
)

// How a forward Iterator leaves a key for the next one (issue 16's scan
// target: a scan over rows with old versions inside the retention window
// should cost little more than one over rows without).
//
// Pebble's NextPrefix is itself a Next followed, when that Next lands on
// another version of the same key, by a skip to the next prefix (a bitmap
// seek in a columnar block, a skiplist seek in the memtable). So:
//
//   - a key with one version is left with one Next, which is cheaper than a
//     NextPrefix (no successor key is built, no prefix compared inside
//     Pebble);
//   - a key with older versions, stepped onto with a Next first, would pay
//     that Next, then NextPrefix's own Next and its skip: three steps where
//     NextPrefix alone takes two.
//
// Versions come in runs: a table updated all day has old versions on most
// of its rows, a freshly loaded one on none. So once a key shows older
// versions, the next olderRunKeys keys are left with NextPrefix straight
// away; then one Next probes again whether the rows still have them.
// BenchmarkEngineScanVersions measures both kinds of table.
const olderRunKeys = 32

// nextKey moves Pebble from the entry of the current key (forwards) to the
// first entry of the next key.
func (i *Iterator) nextKey() bool {
	if i.olderRun > 0 {
		i.olderRun--
		return i.it.NextPrefix()
	}
	// i.key aliases Pebble's buffer, which Next reuses.
	i.prefix = append(i.prefix[:0], i.key...)
	if !i.it.Next() {
		return false
	}
	k := i.it.Key()
	n := enginekey.Split(k)
	if n != len(i.prefix)+1 || !bytes.HasPrefix(k, i.prefix) {
		return true
	}
	i.olderRun = olderRunKeys
	return i.it.NextPrefix()
}
