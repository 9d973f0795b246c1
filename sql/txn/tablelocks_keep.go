package txn

// Weaken lowers owner's explicit (non-implicit) locks taken after mark
// that are stronger than mode to mode, in place: they stay the owner's
// (released with the rest, or by ReleaseTo a mark before them), with no
// moment in between at which a waiter could take a conflicting lock.
// Waiters look again. A schema change in a transaction block keeps its
// locks to the block's end this way (sql/tablelocks.go): ACCESS EXCLUSIVE
// becomes EXCLUSIVE, which still holds writers off but lets plain reads
// go on.
func (tl *TableLocks) Weaken(owner uint64, mark int, mode LockMode) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	hs := tl.held[owner]
	for i := mark; i < len(hs); i++ {
		h := &hs[i]
		if h.implicit || h.mode <= mode {
			continue
		}
		r := tl.rels[h.rel]
		if r == nil {
			continue
		}
		g := r.granted[owner]
		if g == nil {
			continue
		}
		if g.count[h.mode][1] > 0 {
			g.count[h.mode][1]--
		}
		if g.count[h.mode][1] == 0 {
			g.strong &^= bit(h.mode)
			if g.count[h.mode][0] == 0 {
				g.modes &^= bit(h.mode)
			}
		}
		g.count[mode][1]++
		g.strong |= bit(mode)
		g.modes |= bit(mode)
		h.mode = mode
		r.wake()
	}
}
