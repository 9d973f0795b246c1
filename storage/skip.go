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
//
// BenchmarkEngineScanVersions, cpu-ns/op per 1,000-row scan, this against
// the old way (Next, then NextPrefix) alternated on the shared machine:
// compacted, 10 old versions per row, 265-313k against 317-376k; but in the
// memtable, 10 versions per row, 1.21-1.45M against 0.78-0.89M, though
// Pebble reports 2 points per row against 3. That depends on how the
// versions fall into memtables, and is not a better way in general: a
// memtable's NextPrefix (arenaskl) is a SeekGE that first tries 5 Nexts and
// then seeks from the top of the skiplist (the profile: the seek and its
// key comparisons are most of the scan), so one more Next before it can
// save the seek, or not. The benchmark's memtable layout is 4 memtables
// (Pebble grows them from small). Straight over Pebble's iterator (thread
// CPU per scan, load 17), NextPrefix against Next-then-NextPrefix: 3 old
// versions 391k against 499k, 5: 711k against 758k, 7: 652k against 731k,
// 10: 1.24M against 0.85M. So NextPrefix stays. Memtables that stop
// receiving writes are flushed (idleflush.go), so the compacted figures are
// the steady state. Over the wire (server's BenchmarkWire/rangeVersions,
// the SQL range scan, compacted, client included) 10 old versions per row
// cost 1.15-1.25x the scan without (0.97-1.02M against 0.79-0.89M
// cpu-ns/op), against 2.1-2.4x the old way.
//
// Against no old versions (the 1.3x target at this layer), at
// 2cf1a57 on the shared machine: compacted, 10 old versions 228-272k
// against 123-194k cpu-ns/op (about 1.8x); memtable 1.2-1.9M against
// 95-102k. Not met, and not reachable through Pebble's Iterator with this
// key layout: BenchmarkEngineScanVersionsRatio times, in one loop, this
// Iterator's two scans and Pebble's iterator alone doing the same steps
// (NextPrefix per row with old versions, Next per row without, no version
// decoding). Three runs at load 12-16, thread CPU per scan: compacted,
// Pebble alone 259-333k over 10 old versions against 112-140k over none
// (2.27-2.42x), this Iterator 291-382k against 149-191k (1.96-2.00x);
// flushed (L0) 2.30-2.36x and 1.98-2.03x; memtable 14.6-16.5x and
// 11.0-12.4x. Pebble alone over the old versions already costs more than
// 1.3 times this Iterator's whole scan without them (259k > 1.3 x 149k), so
// no code above Pebble's iterator can meet the target with versions
// interleaved in the key order; the Iterator's ratio is lower than Pebble's
// only because its own cost per row is the same in both scans. Pebble's
// other ways are dearer still: Next over every version, or a SeekGE to the
// next prefix (below). In the compacted profile the cost is Pebble's: its
// Iterator.NextPrefix is a Next (onto the key's second version, which
// decodes and materializes it) followed by the merging iterator's
// NextPrefix, two internal steps where a row without old versions takes
// one. A top-level SeekGE to the next prefix instead (TrySeekUsingNext)
// measured 0.97-1.33M, four times worse; Pebble's obsolete-point bitmap
// (HideObsoletePoints) marks shadowed entries of one user key only, not
// older versions of a prefix.
//
// Where a range scan's time goes (issue 23; the server's profile of the
// bench's 1,000-row range scan of kv at 4 clients, no old versions,
// 8c1f5e9): Iterator.Next 41% of the CPU, of which Pebble's Next 33%
// (its sstable block iterator 12%, materializing each key from the
// columnar block 9%, read sampling 3%) and the rest, about 8%, here
// (settleForward 4.5%, of which Pebble's ValueAndErr 2%; nextKey's copy
// and compare of the key 2%); opening the iterator and its first seek
// 5.5%. Read sampling stays on: it buys Pebble's read-triggered
// compactions, and turning it off showed nothing over the wire (server's
// BenchmarkWire, commit 2bc40a6). BenchmarkEngineScanVersions'
// compacted/raw (Pebble's iterator alone) against compacted/versions=0 is
// the same split. Decoding the key's suffix and the value's tag in one
// pass (instead of enginekey.Split, DecodeVersion and decodeVersioned)
// showed no difference through the noise of a shared machine (load 18),
// so it was not kept.
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
