package shardsm

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// A snapshot is what a replica owns (dataSpans: the shard's rows, its three
// local spans, the group's own state with the applied index) read from a
// Pebble snapshot taken between two Applies, streamed:
//
//	"PVSH" | version byte
//	00, or 01 | uvarint len | descriptor
//	{ uvarint len(key) | key | uvarint len(value) | value }   engine keys, ascending
//	uvarint 0 | count (8 bytes BE)
//
// Both sides hold one key and one value at a time besides bufio's and the
// sstable writer's buffers, so memory stays bounded whatever the shard's
// size. The receiver checks that every key lies in a span of the
// descriptor it announced, in order, and that the count matches.
const (
	snapshotMagic   = "PVSH"
	snapshotVersion = 1
)

// maxValueLen bounds a value in a snapshot read from the network.
const maxValueLen = 1 << 30

// stagingBytesPerSync is how much of a received snapshot's staging
// sstable may be written before it is handed to the disk (Pebble's
// default for its own tables).
const stagingBytesPerSync = 512 << 10

func (m *stateMachine) PrepareSnapshot() (any, error) {
	return m.store.db.NewSnapshot(), nil
}

// snapshotProgressEvery is how many bytes of a stream go between two
// reports to its SnapshotProgress.
const snapshotProgressEvery = 1 << 20

// streamEstimate is about how many bytes a snapshot of a replica whose
// counter says st streams: its versions' keys and values, with two length
// prefixes each (the replica's own state and local keys are a few more).
func streamEstimate(st mvcc.Stats, localLocks bool) int64 {
	n := st.LiveBytes + st.OldBytes + st.IntentBytes + 4*(st.LiveCount+st.OldCount+st.IntentCount)
	if !localLocks {
		n += st.LockBytes + 4*st.LockCount
	}
	return n
}

func (m *stateMachine) SaveSnapshot(view any, w io.Writer, stop <-chan struct{}) (err error) {
	snap := view.(*pebble.Snapshot)
	defer snap.Close()
	start := time.Now()
	cw := &countingWriter{w: w, pace: m.store.paceSnapshot, stop: stop}
	w = cw
	desc, ok, err := readDescriptor(snap, m.group)
	if err != nil {
		return err
	}
	st, err := readStats(snap, m.group)
	if err != nil {
		return err
	}
	cw.estimate = streamEstimate(st, m.store.localLocks.Load())
	if cw.track = m.store.trackSnapshot(m.group, cw.estimate); cw.track != nil {
		defer func() {
			if err == nil {
				cw.track.Progress(cw.n, cw.n)
			}
			cw.track.Finish(err)
		}()
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(snapshotMagic)
	bw.WriteByte(snapshotVersion)
	var lenBuf [binary.MaxVarintLen64]byte
	writeBytes := func(b []byte) {
		bw.Write(lenBuf[:binary.PutUvarint(lenBuf[:], uint64(len(b)))])
		bw.Write(b)
	}
	var dp *Descriptor
	if ok {
		dp = &desc
		bw.WriteByte(1)
		writeBytes(encodeDescriptor(desc))
	} else {
		bw.WriteByte(0)
	}
	var count uint64
	for _, sp := range dataSpans(m.group, dp, m.store.localLocks.Load()) {
		it, err := snap.NewIter(&pebble.IterOptions{LowerBound: sp[0], UpperBound: sp[1]})
		if err != nil {
			return err
		}
		for valid := it.First(); valid; valid = it.Next() {
			if count%1024 == 0 {
				select {
				case <-stop:
					it.Close()
					return raft.ErrStopped
				default:
				}
				// bufio keeps the first write error: stop streaming to a
				// peer that went away.
				if _, err := bw.Write(nil); err != nil {
					it.Close()
					return err
				}
			}
			v, err := it.ValueAndErr()
			if err != nil {
				it.Close()
				return err
			}
			writeBytes(it.Key())
			writeBytes(v)
			count++
		}
		if err := it.Close(); err != nil {
			return err
		}
	}
	bw.WriteByte(0)
	var c [8]byte
	binary.BigEndian.PutUint64(c[:], count)
	bw.Write(c[:])
	if err := bw.Flush(); err != nil {
		return err
	}
	m.store.snapshotsSaved.Add(1)
	m.store.snapshotBytesSaved.Add(cw.n)
	m.store.logSnapshot("group %d: streamed a snapshot of %d keys, %.1f MB, in %s",
		m.group, count, float64(cw.n)/(1<<20), time.Since(start).Round(time.Millisecond))
	return nil
}

// countingWriter counts the bytes written through it, has pace hold
// each write back to the store's snapshot rate, and tells track (if any)
// how far the stream got.
type countingWriter struct {
	w    io.Writer
	n    int64
	pace func(n int, stop <-chan struct{}) error
	stop <-chan struct{}

	track    SnapshotProgress
	estimate int64 // the stream's estimated bytes
	reported int64 // n when track last heard
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if err := c.pace(len(p), c.stop); err != nil {
		return 0, err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	if c.track != nil && c.n-c.reported >= snapshotProgressEvery {
		c.reported = c.n
		// The estimate may fall short (keys written since the
		// counter, framing): the total is never below what was sent.
		c.track.Progress(c.n, max(c.estimate, c.n+1))
	}
	return n, err
}

// countingReader counts the bytes read through it, and has pace hold
// each read back to the store's snapshot rate: installing a snapshot
// (checksums, parsing, building the staging sstable) costs about as much
// CPU per byte as streaming it, and a node installing one at full speed
// takes that CPU from the replicas beside it.
type countingReader struct {
	r    io.Reader
	n    int64
	pace func(n int, stop <-chan struct{}) error
	stop <-chan struct{}
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if perr := c.pace(n, c.stop); perr != nil && err == nil {
		err = perr
	}
	return n, err
}

// RecoverFromSnapshot replaces what the replica owns with the snapshot's
// state in one atomic, durable step: the stream becomes one staging
// sstable holding a range deletion over each span the shard owns (its data
// spans under the snapshot's descriptor and its own state) and the
// snapshot's keys, and Pebble ingests it as a whole. An ingested table's
// keys all get one sequence number, so its range deletions remove what the
// store held in those spans and not the table's own keys. A crash before
// the ingestion leaves the old state and old applied index (the engine
// repeats the recovery from its snapshot file); after it, the new.
//
// Only the new descriptor's spans are cleared. A replica whose shard was
// wider (it missed a split and now receives the parent after it) keeps its
// old copy of the child's span until the child's own snapshot replaces it:
// clearing it here could delete a child that arrived first.
func (m *stateMachine) RecoverFromSnapshot(r io.Reader, stop <-chan struct{}) error {
	m.recent.reset() // the Writes it recorded are not what the snapshot holds
	start := time.Now()
	cr := &countingReader{r: r, pace: m.store.paceSnapshot, stop: stop}
	br := bufio.NewReaderSize(cr, 64<<10)
	head := make([]byte, len(snapshotMagic)+2)
	if _, err := io.ReadFull(br, head); err != nil {
		return fmt.Errorf("shardsm: group %d: snapshot header: %w", m.group, err)
	}
	if string(head[:len(snapshotMagic)]) != snapshotMagic || head[len(snapshotMagic)] != snapshotVersion {
		return fmt.Errorf("shardsm: group %d: not a version %d shard snapshot", m.group, snapshotVersion)
	}
	var dp *Descriptor
	switch head[len(snapshotMagic)+1] {
	case 0:
	case 1:
		n, err := binary.ReadUvarint(br)
		if err != nil || n > 2*maxKeyLen+16 {
			return fmt.Errorf("shardsm: group %d: snapshot descriptor: %v", m.group, unexpectedEOF(err))
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return fmt.Errorf("shardsm: group %d: snapshot descriptor: %w", m.group, unexpectedEOF(err))
		}
		d, err := decodeDescriptor(b)
		if err == nil {
			err = d.validate()
		}
		if err != nil {
			return fmt.Errorf("shardsm: group %d: snapshot: %w", m.group, err)
		}
		dp = &d
	default:
		return fmt.Errorf("shardsm: group %d: snapshot header flag %d", m.group, head[len(snapshotMagic)+1])
	}
	spans := dataSpans(m.group, dp, m.store.localLocks.Load())

	fs := m.store.fs
	path := fs.PathJoin(m.store.staging, fmt.Sprintf("group-%d-replica-%d.sst", m.group, m.replica))
	defer fs.Remove(path)
	f, err := fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("shardsm: group %d: %w", m.group, err)
	}
	// Written out as it goes (sync_file_range every stagingBytesPerSync,
	// as Pebble does with its own tables) rather than all at Close: the
	// page cache here lets gigabytes stay dirty, and one fsync of them all
	// fills the disk's queue for seconds, in front of the Raft log's
	// fsyncs on every node of this machine, which the group's writes wait
	// for.
	f = vfs.NewSyncingFile(f, vfs.SyncingFileOptions{BytesPerSync: stagingBytesPerSync})
	w := sstable.NewWriter(objstorageprovider.NewFileWritable(f), m.store.writerOpts)
	err = nil
	for _, sp := range spans {
		if err = w.DeleteRange(sp[0], sp[1]); err != nil {
			break
		}
	}
	var count uint64
	if err == nil {
		count, err = copySnapshot(br, w, spans, stop)
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("shardsm: group %d: receiving snapshot: %w", m.group, err)
	}
	staged := time.Now()
	if err := m.store.db.Ingest(context.Background(), []string{path}); err != nil {
		return fmt.Errorf("shardsm: group %d: installing snapshot: %w", m.group, err)
	}
	if err := m.load(); err != nil {
		return err
	}
	m.store.snapshotsRecovered.Add(1)
	m.store.snapshotBytesRecv.Add(cr.n)
	m.store.logSnapshot("group %d: installed a snapshot of %d keys, %.1f MB: read and staged in %s, ingested in %s",
		m.group, count, float64(cr.n)/(1<<20), staged.Sub(start).Round(time.Millisecond), time.Since(staged).Round(time.Millisecond))
	return nil
}

// copySnapshot reads records from r into w, checking that the keys ascend
// and each lies in one of spans (ascending, disjoint), and checks the
// trailer. It returns the number of records.
func copySnapshot(r *bufio.Reader, w *sstable.Writer, spans [][2][]byte, stop <-chan struct{}) (uint64, error) {
	var key, val []byte
	var count uint64
	span := 0
	readLen := func(limit uint64) (int, error) {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return 0, unexpectedEOF(err)
		}
		if n > limit {
			return 0, fmt.Errorf("length %d over %d", n, limit)
		}
		return int(n), nil
	}
	for {
		if count%1024 == 0 {
			select {
			case <-stop:
				return count, raft.ErrStopped
			default:
			}
		}
		kl, err := readLen(maxKeyLen + 64)
		if err != nil {
			return count, err
		}
		if kl == 0 {
			break
		}
		key = append(key[:0], make([]byte, kl)...)
		if _, err := io.ReadFull(r, key); err != nil {
			return count, unexpectedEOF(err)
		}
		vl, err := readLen(maxValueLen)
		if err != nil {
			return count, err
		}
		val = append(val[:0], make([]byte, vl)...)
		if _, err := io.ReadFull(r, val); err != nil {
			return count, unexpectedEOF(err)
		}
		for span < len(spans) && !lessEngine(key, spans[span][1]) {
			span++
		}
		if span == len(spans) || lessEngine(key, spans[span][0]) {
			return count, fmt.Errorf("key %x outside the shard's spans", key)
		}
		if err := w.Set(key, val); err != nil {
			return count, err // keys out of order: a corrupt stream
		}
		count++
	}
	var c [8]byte
	if _, err := io.ReadFull(r, c[:]); err != nil {
		return count, unexpectedEOF(err)
	}
	if got := binary.BigEndian.Uint64(c[:]); got != count {
		return count, fmt.Errorf("trailer counts %d records, stream had %d", got, count)
	}
	return count, nil
}

func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
