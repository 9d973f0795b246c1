package exec

import (
	"hash/maphash"
)

// keySet is a set of byte strings, the table of a decorrelated EXISTS /
// NOT EXISTS keyed by text or by a tuple of keys (subhash.go). EXISTS
// only asks whether a key is present, so the set keeps no value per key.
//
// It is built for the hash semi join's build side: the keys are copied
// into one growing byte arena instead of one string each, so a build of n
// keys makes O(log n) allocations rather than n, none of them holding
// pointers for the garbage collector to scan, and a key read straight
// from a stored row (rowenc.ColumnText) is copied once. The table is open
// addressing with linear probing over slots that hold 32 bits of the
// key's hash beside its entry number, so a probe compares key bytes only
// on a likely match.
type keySet struct {
	seed  maphash.Seed
	slots []uint64 // 0: empty; else hash>>32 << 32 | entry number + 1
	ends  []int    // entry i's bytes are arena[ends[i-1]:ends[i]] (from 0 for i = 0)
	arena []byte
}

// keySetEntryBytes is what one entry costs beside its bytes, for the
// statement's memory account: two slots (the table stays at most half
// full) and its end offset.
const keySetEntryBytes = 2*8 + 8

// newKeySet returns a set sized for hint keys of bytes bytes in all.
func newKeySet(hint, bytes int) *keySet {
	s := &keySet{seed: maphash.MakeSeed()}
	n := 16
	for n < 2*hint {
		n *= 2
	}
	s.slots = make([]uint64, n)
	s.ends = make([]int, 0, hint)
	s.arena = make([]byte, 0, bytes)
	return s
}

// len is the number of keys in the set.
func (s *keySet) len() int { return len(s.ends) }

// key returns entry i's bytes.
func (s *keySet) key(i int) []byte {
	from := 0
	if i > 0 {
		from = s.ends[i-1]
	}
	return s.arena[from:s.ends[i]]
}

// add adds b (copied) unless present, reporting whether it did.
func (s *keySet) add(b []byte) bool { return keySetAdd(s, maphash.Bytes(s.seed, b), b) }

// addString is add of str's bytes.
func (s *keySet) addString(str string) bool { return keySetAdd(s, maphash.String(s.seed, str), str) }

// keySetAdd adds k, of hash h, to s unless present.
func keySetAdd[K string | []byte](s *keySet, h uint64, k K) bool {
	tag := h >> 32 << 32
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		e := s.slots[i]
		if e == 0 {
			s.arena = append(s.arena, k...)
			s.ends = append(s.ends, len(s.arena))
			s.slots[i] = tag | uint64(len(s.ends))
			if 2*len(s.ends) > len(s.slots) {
				s.grow()
			}
			return true
		}
		if e&^0xffffffff == tag && string(s.key(int(uint32(e))-1)) == string(k) {
			return false
		}
	}
}

// has reports whether b is in the set.
func (s *keySet) has(b []byte) bool { return keySetHas(s, maphash.Bytes(s.seed, b), b) }

// hasString reports whether str is in the set (maphash.String and Bytes
// hash the same bytes alike).
func (s *keySet) hasString(str string) bool { return keySetHas(s, maphash.String(s.seed, str), str) }

// keySetHas reports whether k, of hash h, is in s.
func keySetHas[K string | []byte](s *keySet, h uint64, k K) bool {
	tag := h >> 32 << 32
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		e := s.slots[i]
		if e == 0 {
			return false
		}
		if e&^0xffffffff == tag && string(s.key(int(uint32(e))-1)) == string(k) {
			return true
		}
	}
}

// grow doubles the slots and places every entry again (its hash is
// computed again from its bytes: a prepared plan's builds are presized,
// so this runs on first builds only).
func (s *keySet) grow() {
	slots := make([]uint64, 2*len(s.slots))
	mask := uint64(len(slots) - 1)
	for n := range s.ends {
		h := maphash.Bytes(s.seed, s.key(n))
		i := h & mask
		for slots[i] != 0 {
			i = (i + 1) & mask
		}
		slots[i] = h>>32<<32 | uint64(n+1)
	}
	s.slots = slots
}
