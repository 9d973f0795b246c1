package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// Intents (issue 16 item 9, step 2): a transaction block whose batch grows
// past a size (sql/txn decides when) moves its versioned writes out of the
// batch into the store as intents, so its memory stays bounded however
// much it writes.
//
// An intent is a version at a timestamp above every read: wall time
// math.MaxInt64 (which no clock returns; MaxTimestamp, the newest state,
// is one wall nanosecond below) and logical part the transaction's
// sequence number at the flush. So every reader skips it as "too new"
// without looking at it, and GC keeps it (it is inside every window). One
// more rule makes a transaction see its own: a reader that belongs to the
// transaction (a Batch with intents, or a copy of one: ownIntents) shows
// the newest intent whose transaction id is its own and whose sequence
// number is below its limit, as if it were a write of its batch. Several
// sequence numbers can hold intents of one key: ROLLBACK TO SAVEPOINT
// deletes those at or above the savepoint's number and the older ones
// show again (no history to keep in a value), and a statement's read view
// (NewBatchCopy) sees only the intents flushed before it.
//
// The value follows storage/mvcc's intent layout (kind 0x03 value, 0x04
// delete; strength FOR UPDATE; txn meta with epoch 0, the sequence number
// and the intent's timestamp as write timestamp; the anchor of the
// transaction's record; no history), so that mvcc's lock code (AcquireLock,
// CheckLock) sees another transaction's intent as the conflict it is.
//
// Commit (commitIntents): the rest of the batch's versioned writes become
// intents too; the commit takes its timestamp and is registered in flight;
// the batch (system keys, statistics, the record turned COMMITTED by the
// caller's hook) lands synced; then ResolveIntents rewrites every intent
// in the written spans as a version at the commit timestamp, in unsynced
// chunks, and the caller's final hook (the lock records and the record)
// lands with the last chunk; only then does the commit leave the in-flight
// set, so every read at or above its timestamp waits for all of it. After
// a crash, the record says what to do: COMMITTED, resolve again at its
// timestamp (idempotent); PENDING, remove (sql/txn's Manager.Recover).
//
// On a replicated engine (issue 17; a cluster, or a one-node cluster)
// every write above goes through the replicator instead of this store's
// Pebble (commitShared), so that each shard's replicas hold their keys'
// intents and a node that takes over serving finds them:
//
//   - A flush's batch (the intents, the caller's record rewritten PENDING
//     with the spans) is one Replicate call without a commit timestamp
//     (a replica's clock must not learn the intents' wall time). The
//     replicator cuts it by shard group and commits it atomically across
//     groups (cluster/shardrepl's stage, decide, apply), so no replica
//     ever holds an intent that its record, in the anchor's group, does
//     not cover. Its lock-record deletions stay local (the replicator's
//     rule for 0x03 0x01): lock records are the serving node's state.
//   - Readers: the serving node reads its own store, a replica of every
//     group, where Replicate has applied the intents before it returns;
//     its own reads see them as on one node, others skip them (above every
//     read). A follower read skips them too.
//   - Commit: the batch with the COMMITTED record is the commit's
//     Replicate, as any commit (one Write, or the cross-group protocol
//     when its writes span groups): the record, in its anchor's group, is
//     the commit point, durable on a quorum. The resolution chunks follow,
//     each one Replicate at the commit timestamp (shardsm's closed
//     fence admits them: the commit stays in flight, so the serving node
//     closed nothing at or above it) carrying its keys' shard counters
//     (IntentStats), atomically per chunk. Reads at or above the
//     timestamp wait for the last chunk (in flight); follower reads do
//     too (nothing is closed at or above it until then).
//   - A commit whose record write has an unknown outcome (ErrOutcomeUnknown)
//     keeps its intents (RollbackIntents refuses) and makes the node stop
//     serving (BulkAbandoner); so does a failed resolution after the commit
//     point. The next serving node's recovery, under an epoch that fences
//     this node's late writes, settles it from the record.
//   - Rollback, ROLLBACK TO SAVEPOINT, recovery and the lock table's
//     removal of a dead transaction's intent (LocalBatch.CommitShared)
//     are replicated removals in chunks, as the resolution.
//   - Takeover: SetReplicator puts a hold on closed timestamps while the
//     store holds any transaction record (closedts.go), so the new serving
//     node closes nothing before its recovery (sql/txn's Manager.Recover,
//     before SQL serves) has resolved COMMITTED records at their timestamps
//     and removed the intents of PENDING ones.
//
// Memory: each Replicate call holds one chunk (about resolveChunkBytes,
// or the caller's flush size) and its encoding, so a block stays bounded
// on a cluster as on one node.

const (
	intentWall        = math.MaxInt64
	tagIntent    byte = 0x03
	tagIntentDel byte = 0x04
	// intentStrength is mvcc.Update: an intent holds its key exclusively.
	intentStrength byte = 4
	// intentMetaFixed is the txn meta's fixed part: id, epoch, seq, ts.
	intentMetaFixed = TxnIDLen + 4 + 4 + 8 + 4
	// TxnIDLen is the length of a transaction id (mvcc.TxnID).
	TxnIDLen = 16
	// resolveChunkBytes is how much a resolution or removal writes per
	// batch.
	resolveChunkBytes = 4 << 20
)

// intentTimestamp is the timestamp of the intents flushed at seq.
func intentTimestamp(seq int32) hlc.Timestamp {
	return hlc.Timestamp{WallTime: intentWall, Logical: seq}
}

// isIntentTimestamp reports whether a version's timestamp is an intent's.
func isIntentTimestamp(ts hlc.Timestamp) bool { return ts.WallTime == intentWall }

// IntentOwner is the transaction a batch's intents belong to: its id and
// the anchor of its record (storage/mvcc's TxnMeta).
type IntentOwner struct {
	ID     [TxnIDLen]byte
	Anchor []byte
}

// intentState is what a batch knows of the intents it flushed.
type intentState struct {
	owner IntentOwner
	// spans cover every key that holds an intent of the transaction, one
	// per table (or system prefix): what resolution visits.
	spans []Span
	// count is the number of intents written (with repeats).
	count int64
	// outcomeUnknown: the commit's record went to the replicator and its
	// answer did not say whether it applied; nothing may remove the
	// intents here.
	outcomeUnknown bool
}

// ownIntents is a reader's view of its transaction's intents: those of id
// with a sequence number below `below`. A nil *ownIntents sees none.
type ownIntents struct {
	id    [TxnIDLen]byte
	below int32
}

// sees reports whether the version at key (an intent timestamp ts) with
// value v is one of the reader's own intents.
func (o *ownIntents) sees(ts hlc.Timestamp, v []byte) bool {
	return o != nil && ts.Logical < o.below && len(v) >= 2+TxnIDLen &&
		(v[0] == tagIntent || v[0] == tagIntentDel) && bytes.Equal(v[2:2+TxnIDLen], o.id[:])
}

// appendIntentValue encodes an intent of owner at seq: a delete when
// deleted, else the row value.
func appendIntentValue(buf []byte, owner *IntentOwner, seq int32, value []byte, deleted bool) []byte {
	tag := tagIntent
	if deleted {
		tag = tagIntentDel
	}
	buf = append(buf, tag, intentStrength)
	buf = append(buf, owner.ID[:]...)
	buf = binary.BigEndian.AppendUint32(buf, 0) // epoch
	buf = binary.BigEndian.AppendUint32(buf, uint32(seq))
	buf = binary.BigEndian.AppendUint64(buf, uint64(intentWall))
	buf = binary.BigEndian.AppendUint32(buf, uint32(seq))
	buf = binary.AppendUvarint(buf, uint64(len(owner.Anchor)))
	buf = append(buf, owner.Anchor...)
	buf = binary.AppendUvarint(buf, 0) // no history
	if !deleted {
		buf = append(buf, value...)
	}
	return buf
}

// decodeIntentValue returns the row value of an intent's value (deleted
// for an intent delete) and its transaction id.
func decodeIntentValue(v []byte) (value []byte, deleted bool, id []byte, err error) {
	bad := fmt.Errorf("%w: bad intent value", ErrCorruptEncoding)
	if len(v) < 2+intentMetaFixed || (v[0] != tagIntent && v[0] != tagIntentDel) {
		return nil, false, nil, bad
	}
	id = v[2 : 2+TxnIDLen]
	rest := v[2+intentMetaFixed:]
	n, k := binary.Uvarint(rest)
	if k <= 0 || uint64(len(rest)-k) < n {
		return nil, false, nil, bad
	}
	rest = rest[k+int(n):]
	h, k := binary.Uvarint(rest)
	if k <= 0 || h != 0 {
		// This engine writes no history (see above); mvcc's intents with
		// one are not the engine's.
		return nil, false, nil, bad
	}
	rest = rest[k:]
	if v[0] == tagIntentDel {
		return nil, true, id, nil
	}
	return rest, false, id, nil
}

// HasIntents reports whether the batch moved writes to the store as
// intents (FlushIntents): then its commit resolves them.
func (b *Batch) HasIntents() bool { return b.intents != nil }

// IntentSpans returns the spans that cover the batch's intents (nil if
// none): what a transaction record lists for recovery.
func (b *Batch) IntentSpans() []Span {
	if b.intents == nil {
		return nil
	}
	return b.intents.spans
}

// CanFlushIntents reports whether FlushIntents may run: the batch holds
// no range deletion (its order against later writes would be lost). On a
// replicated engine the intents go through the replicator like a commit
// (see "On a replicated engine" above).
func (b *Batch) CanFlushIntents() bool {
	return b.check() == nil && !b.rangeDels
}

// FlushIntents moves the batch's versioned writes into the store as
// intents of owner (see above) and keeps its other writes (system keys)
// in the batch, which is empty of versioned writes afterwards. record
// runs with the spans covering every intent of the batch so far, the user
// keys this flush wrote (in the batch's order, repeats included) and a
// batch of engine keys that lands with the intents: the caller writes its
// transaction record there (unsynced: a crash leaves the record PENDING,
// and recovery removes the intents it lists), and may drop lock records
// the intents replace. Readers made from the batch before the flush keep
// reading their own copy of its old writes.
func (b *Batch) FlushIntents(owner IntentOwner, record func(w *LocalBatch, spans []Span, flushed [][]byte) error) error {
	if err := b.check(); err != nil {
		return err
	}
	if !b.CanFlushIntents() {
		return fmt.Errorf("storage: this batch cannot move its writes to intents")
	}
	if b.intents == nil {
		b.intents = &intentState{owner: IntentOwner{ID: owner.ID, Anchor: bytes.Clone(owner.Anchor)}}
	} else if b.intents.owner.ID != owner.ID {
		return fmt.Errorf("storage: intents of two transactions in one batch")
	}
	st := b.intents
	if b.own == nil {
		b.own = &ownIntents{id: st.owner.ID, below: math.MaxInt32}
	}
	seq := b.seq
	wb := b.e.db.NewBatch()
	defer func() {
		if wb != nil {
			wb.Close()
		}
	}()
	nb := b.e.db.NewIndexedBatch()
	r := b.b.Reader()
	var kbuf, vbuf []byte
	var flushed [][]byte
	for {
		kind, k, v, ok, err := r.Next()
		if err != nil {
			nb.Close()
			return err
		}
		if !ok {
			break
		}
		if kind == pebble.InternalKeyKindSet && len(k) > 0 && k[len(k)-1] == 0 && isVersioned(k[:len(k)-1]) {
			uk := k[:len(k)-1]
			if len(v) == 0 || (v[0] != tagValue && v[0] != tagTombstone) {
				nb.Close()
				return fmt.Errorf("%w: batch write of %s", ErrCorruptEncoding, FormatKey(uk))
			}
			kbuf = enginekey.AppendVersionKey(kbuf[:0], uk, intentTimestamp(seq))
			vbuf = appendIntentValue(vbuf[:0], &st.owner, seq, v[1:], v[0] == tagTombstone)
			if err := wb.Set(kbuf, vbuf, nil); err != nil {
				nb.Close()
				return err
			}
			st.cover(uk)
			st.count++
			flushed = append(flushed, bytes.Clone(uk))
			continue
		}
		switch kind {
		case pebble.InternalKeyKindSet:
			err = nb.Set(k, v, nil)
		case pebble.InternalKeyKindDelete:
			err = nb.Delete(k, nil)
		case pebble.InternalKeyKindSingleDelete:
			err = nb.SingleDelete(k, nil)
		case pebble.InternalKeyKindMerge:
			err = nb.Merge(k, v, nil)
		case pebble.InternalKeyKindLogData:
		default:
			err = fmt.Errorf("storage: batch holds a %s write, which cannot become intents", kind)
		}
		if err != nil {
			nb.Close()
			return err
		}
	}
	if b.space != nil {
		// Admitted like a commit (diskspace.go), before record changes
		// anything of the caller's.
		n := wb.Len()
		if err := b.space.admit(n, false); err != nil {
			nb.Close()
			return err
		}
		defer b.space.release(n)
	}
	if err := record(&LocalBatch{b: wb, e: b.e}, st.spans, flushed); err != nil {
		nb.Close()
		return err
	}
	// No commit timestamp: intents are above every read, and a replica's
	// clock must not learn their wall time (intentWall).
	if err := b.e.commitShared(wb, hlc.Timestamp{}); err != nil {
		nb.Close()
		return err
	}
	// The old batch is left to the garbage collector, not closed: an
	// iterator made from it (a cursor, a scan still open) reads its memory,
	// which Close would hand back to Pebble's pool for reuse.
	b.b = nb
	b.versioned = false
	return nil
}

// cover widens the spans to include the versioned user key uk. Spans are
// per table (0x02 <table id>), so there are few, and resolution visits
// the keys between a table's first and last intent.
func (st *intentState) cover(uk []byte) {
	pfx := uk[:1]
	if _, _, err := DecodeTablePrefix(uk); err == nil {
		pfx = uk[:tablePrefixLen]
	}
	for i := range st.spans {
		s := &st.spans[i]
		if !bytes.HasPrefix(s.Start, pfx) {
			continue
		}
		if bytes.Compare(uk, s.Start) < 0 {
			s.Start = bytes.Clone(uk)
		}
		if bytes.Compare(uk, s.End) >= 0 {
			s.End = append(bytes.Clone(uk), 0)
		}
		return
	}
	st.spans = append(st.spans, Span{Start: bytes.Clone(uk), End: append(bytes.Clone(uk), 0)})
}

// IntentStats counts what a commit's intents change, as they are
// resolved (partition's shard statistics): a transaction whose writes went
// to the store as intents keeps no list of its keys in memory, so the
// resolution, which visits every one, tells the counter instead.
type IntentStats interface {
	// Resolved is called for each key whose intent becomes a version, with
	// the committed version it goes over (prevLive false: none, or a
	// tombstone; prevLen the row value's length) and what it is (live
	// false: a tombstone; newLen the row value's length). The key is only
	// valid during the call.
	Resolved(userKey []byte, prevLive bool, prevLen int, live bool, newLen int)
	// Commit adds the counts of the keys resolved since the last Commit to
	// w, then calls commit, which commits w: the counts land in the same
	// batch as the versions they count (exactly once, also when a crash
	// cuts the resolution short and recovery finishes it). An error from
	// commit is returned.
	Commit(w *LocalBatch, commit func() error) error
}

// ResolveIntents turns the intents of transaction id in spans into
// versions at commitTS (commit) or removes them (!commit), in unsynced
// batches of about resolveChunkBytes; last, when set, adds the caller's
// final writes to the last batch; stats, when set and committing, counts
// each resolved key into the batch that resolves it. Of several intents of
// one key the newest (highest sequence number) is the transaction's write.
// It is idempotent: a second run finds nothing left to do, so recovery can
// finish a commit that a crash cut short.
func (e *Engine) ResolveIntents(id [TxnIDLen]byte, spans []Span, commitTS hlc.Timestamp, commit bool, stats IntentStats, last func(w *LocalBatch) error) (resolved int, err error) {
	if !commit {
		stats = nil
	}
	return e.resolveIntents(id, spans, commitTS, commit, -1, stats, last)
}

// RemoveIntentsFrom removes the intents of transaction id in spans whose
// sequence number is at least seq (ROLLBACK TO SAVEPOINT).
func (e *Engine) RemoveIntentsFrom(id [TxnIDLen]byte, spans []Span, seq int32) (int, error) {
	return e.resolveIntents(id, spans, hlc.Timestamp{}, false, seq, nil, nil)
}

// resolvedKey is the key whose newest own intent resolveIntents turned into
// a version, until it has seen what committed version lies below (for
// IntentStats).
type resolvedKey struct {
	active  bool
	uk      []byte
	live    bool
	valueLn int
}

func (e *Engine) resolveIntents(id [TxnIDLen]byte, spans []Span, commitTS hlc.Timestamp, commit bool, fromSeq int32, stats IntentStats, last func(w *LocalBatch) error) (n int, err error) {
	if commit && isIntentTimestamp(commitTS) {
		return 0, fmt.Errorf("storage: resolution at an intent timestamp")
	}
	wb := e.db.NewBatch()
	defer func() { wb.Close() }()
	// A chunk that writes versions carries the commit timestamp to the
	// replicas (their clocks and closed-timestamp fence, as a commit's
	// Write); a removal writes none.
	var chunkTS hlc.Timestamp
	if commit {
		chunkTS = commitTS
	}
	commitChunk := func() error {
		if stats == nil {
			return e.commitShared(wb, chunkTS)
		}
		return stats.Commit(&LocalBatch{b: wb, e: e}, func() error { return e.commitShared(wb, chunkTS) })
	}
	// seeker finds the blocks with intents of each span (intentblocks.go).
	seeker := &intentSeeker{e: e}
	defer seeker.close()
	own := ownIntents{id: id, below: math.MaxInt32}
	var kbuf []byte
	var cur resolvedKey
	// emit tells stats about cur, given the committed version below it.
	emit := func(prevLive bool, prevLen int) {
		if cur.active {
			cur.active = false
			stats.Resolved(cur.uk, prevLive, prevLen, cur.live, cur.valueLn)
		}
	}
	for _, span := range spans {
		lower, upper := engineBounds(span)
		it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
		if err != nil {
			return n, err
		}
		var prefix []byte
		doneKey := false // the key's newest own intent was handled
		// plain counts the keys in a row with no intent; past
		// intentSkipKeys the loop seeks to the next block that has
		// intents (intentblocks.go).
		plain, sawIntent := 0, false
		if err := seeker.reset(lower, upper); err != nil {
			it.Close()
			return n, err
		}
		valid := it.First()
		for valid {
			k := it.Key()
			uk, ts, versioned := enginekey.DecodeVersion(k)
			if !versioned {
				valid = it.Next()
				continue
			}
			sp := enginekey.Split(k)
			if prefix == nil || !bytes.Equal(k[:sp], prefix) {
				// A new key: the last one had no committed version below
				// its intents. Between two keys a chunk may end (never
				// between a key's version and its count).
				emit(false, 0)
				if wb.Len() >= resolveChunkBytes {
					if err := commitChunk(); err != nil {
						it.Close()
						return n, err
					}
					wb.Close()
					wb = e.db.NewBatch()
				}
				prefix = append(prefix[:0], k[:sp]...)
				doneKey, sawIntent = false, false
			}
			if !isIntentTimestamp(ts) {
				// Intents come first among a key's versions: this is the
				// newest committed one.
				if cur.active {
					v, err := it.ValueAndErr()
					if err != nil {
						it.Close()
						return n, err
					}
					emit(len(v) > 0 && v[0] == tagValue, max(len(v)-1, 0))
				}
				if sawIntent {
					plain = 0
				} else if plain++; plain > intentSkipKeys {
					plain = 0
					next, ok, err := seeker.next(uk)
					if err != nil {
						it.Close()
						return n, err
					}
					valid = ok && it.SeekGE(next)
					continue
				}
				valid = it.NextPrefix()
				continue
			}
			sawIntent = true
			v, err := it.ValueAndErr()
			if err != nil {
				it.Close()
				return n, err
			}
			if !own.sees(ts, v) {
				valid = it.Next()
				continue // another transaction's
			}
			if fromSeq >= 0 {
				if ts.Logical >= fromSeq {
					if err := wb.Delete(k, nil); err != nil {
						it.Close()
						return n, err
					}
					n++
				}
			} else {
				if commit && !doneKey {
					val, deleted, _, err := decodeIntentValue(v)
					if err != nil {
						it.Close()
						return n, err
					}
					kbuf = enginekey.AppendVersionKey(kbuf[:0], uk, commitTS)
					if deleted {
						err = wb.Set(kbuf, []byte{tagTombstone}, nil)
					} else {
						op := wb.SetDeferred(len(kbuf), len(val)+1)
						copy(op.Key, kbuf)
						op.Value[0] = tagValue
						copy(op.Value[1:], val)
						err = op.Finish()
					}
					if err != nil {
						it.Close()
						return n, err
					}
					if stats != nil {
						cur = resolvedKey{active: true, uk: append(cur.uk[:0], uk...), live: !deleted, valueLn: len(val)}
					}
				}
				doneKey = true
				if err := wb.Delete(k, nil); err != nil {
					it.Close()
					return n, err
				}
				n++
			}
			// k and v alias the iterator's buffers: move on only now.
			valid = it.Next()
		}
		emit(false, 0)
		err = it.Error()
		if cerr := it.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return n, err
		}
	}
	if last != nil {
		if err := last(&LocalBatch{b: wb, e: e}); err != nil {
			return n, err
		}
	}
	if wb.Empty() {
		return n, nil
	}
	return n, commitChunk()
}

// IntentCommit is the caller's part of the commit of a batch with intents
// (SetIntentCommit): the transaction record is the caller's (sql/txn
// writes it with storage/mvcc).
type IntentCommit struct {
	// Flush is FlushIntents's record function, for the commit's flush of
	// the batch's last versioned writes.
	Flush func(w *LocalBatch, spans []Span, flushed [][]byte) error
	// Committed writes the record COMMITTED at ts, listing spans, into w,
	// which lands synced with the batch's other writes: the commit point.
	Committed func(w *LocalBatch, ts hlc.Timestamp, spans []Span) error
	// Last writes what goes once every intent is resolved (the lock
	// records, the record) into w, the last resolution batch.
	Last func(w *LocalBatch) error
	// Stats, if set, counts the resolved keys into the resolution's
	// batches (the shards' statistics).
	Stats IntentStats
}

// SetIntentCommit sets the caller's part of the commit of a batch that
// has intents; Commit fails without one.
func (b *Batch) SetIntentCommit(c IntentCommit) { b.finishIntents = c }

// IntentResolveError is a commit whose record is COMMITTED, durably, but
// whose intents could not all be resolved: its writes are not visible
// until a restart's recovery finishes the resolution.
type IntentResolveError struct{ Err error }

func (e *IntentResolveError) Error() string {
	return "storage: committed, but resolving the intents failed: " + e.Err.Error()
}

func (e *IntentResolveError) Unwrap() error { return e.Err }

// commitIntents commits a batch with intents (see the top of this file).
// The commit is registered in flight from taking its timestamp until
// every intent is resolved, with unknown keys (a read refresh waits for
// it), so no read at or above the timestamp opens a view before all of
// the transaction's versions are in place.
func (b *Batch) commitIntents(opts *pebble.WriteOptions) error {
	c := b.finishIntents
	if c.Flush == nil || c.Committed == nil {
		return fmt.Errorf("storage: commit of a batch with intents without SetIntentCommit")
	}
	if b.rangeDels {
		// The range deletion would land before the intents it covers are
		// resolved, and miss them. sql/txn defers a block's drops to
		// after its commit, so no caller does this.
		return fmt.Errorf("storage: a range deletion in a batch with intents")
	}
	if b.versioned {
		if err := b.FlushIntents(b.intents.owner, c.Flush); err != nil {
			return err
		}
	}
	ts, id, err := b.e.commits.beginWith(nil)
	if err != nil {
		return err
	}
	defer b.e.commits.end(id)
	if b.commitCheck != nil {
		if err := b.commitCheck(ts, b.e.commits.inFlightBelow(id)); err != nil {
			return err
		}
	}
	nb := b.e.db.NewBatchWithSize(b.b.Len() + 256)
	defer nb.Close()
	if err := rewriteVersioned(nb, b.b, ts); err != nil {
		return err
	}
	spans := b.intents.spans
	if err := c.Committed(&LocalBatch{b: nb, e: b.e}, ts, spans); err != nil {
		return err
	}
	if err := b.e.apply(nb, ts, opts); err != nil {
		if b.e.repl != nil && errors.Is(err, ErrOutcomeUnknown) {
			// The record may yet turn COMMITTED (a proposal that went
			// unanswered): the intents must stay for whoever settles the
			// commit from the record, so RollbackIntents leaves them, and
			// the node stops serving; the next serving node's recovery,
			// under an epoch that fences this node's late writes, finds
			// the record one way or the other.
			b.intents.outcomeUnknown = true
			b.e.abandonServing(err)
		}
		return err
	}
	b.committed = true
	if _, err := b.e.ResolveIntents(b.intents.owner.ID, spans, ts, true, c.Stats, c.Last); err != nil {
		// COMMITTED, part of it resolved: on a cluster the node stops
		// serving (its reads could see the part), and the next serving
		// node resolves the rest before it serves (Manager.Recover).
		b.e.abandonServing(err)
		return &IntentResolveError{Err: err}
	}
	if b.onCommitted != nil {
		b.onCommitted(ts)
	}
	return nil
}

// RollbackIntents removes every intent the batch flushed (ROLLBACK), in
// unsynced batches; last adds the caller's final writes (lock records,
// the record) to the last one. A crash in between leaves the record
// PENDING, and recovery removes the rest.
func (b *Batch) RollbackIntents(last func(w *LocalBatch) error) error {
	if b.intents == nil {
		return nil
	}
	if b.intents.outcomeUnknown {
		return fmt.Errorf("storage: the commit's outcome is unknown; its intents stay for the next serving node's recovery")
	}
	_, err := b.e.ResolveIntents(b.intents.owner.ID, b.intents.spans, hlc.Timestamp{}, false, nil, last)
	return err
}

// IntentSeq is the sequence number below which a copy (NewBatchCopy)
// sees its transaction's intents: a savepoint's number.
func (b *Batch) IntentSeq() int32 { return b.seq }

// RollbackTo returns the transaction's batch as it was when saved (a
// NewBatchCopy of it) was made: a copy of saved's writes that keeps b's
// intents minus those flushed since (ROLLBACK TO SAVEPOINT), which it
// removes from the store. b stays readable (cursors made earlier).
func (e *Engine) RollbackTo(b, saved *Batch) (*Batch, error) {
	from := saved.seq
	nb, err := e.NewBatchCopy(saved)
	// NewBatchCopy moved saved's number on; it stays the savepoint's, for
	// the next ROLLBACK TO it.
	saved.seq = from
	if err != nil {
		return nil, err
	}
	nb.SetReadTimestamp(b.ReadTimestamp())
	nb.seq = b.seq
	if b.intents != nil {
		if _, err := e.RemoveIntentsFrom(b.intents.owner.ID, b.intents.spans, from); err != nil {
			nb.Close()
			return nil, err
		}
		nb.intents = b.intents
		nb.own = b.own
		nb.finishIntents = b.finishIntents
	}
	return nb, nil
}

// Intents calls fn with the user key of each key in spans that holds an
// intent of transaction id (once per key, in key order): what pg_locks
// lists of a transaction whose intents hold its keys (sql/txn).
func (e *Engine) Intents(id [TxnIDLen]byte, spans []Span, fn func(userKey []byte) error) error {
	own := ownIntents{id: id, below: math.MaxInt32}
	for _, span := range spans {
		lower, upper := engineBounds(span)
		// Only blocks that hold intents (intentblocks.go): the committed
		// versions are not needed here.
		filters := make([]pebble.BlockPropertyFilter, 1, 2)
		filters[0] = intentBlockFilter()
		it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper, PointKeyFilters: filters})
		if err != nil {
			return err
		}
		valid := it.First()
		for valid {
			uk, ts, versioned := enginekey.DecodeVersion(it.Key())
			if !versioned {
				valid = it.Next()
				continue
			}
			if isIntentTimestamp(ts) {
				v, err := it.ValueAndErr()
				if err != nil {
					it.Close()
					return err
				}
				if own.sees(ts, v) {
					if err := fn(uk); err != nil {
						it.Close()
						return err
					}
				}
			}
			// One intent per key is enough; the older versions are
			// not intents.
			valid = it.NextPrefix()
		}
		err = it.Error()
		if cerr := it.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}
