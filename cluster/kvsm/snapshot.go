package kvsm

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pivotdb/pivotdb/cluster/raft"
)

// A snapshot is the group's span read from a Pebble snapshot, streamed:
//
//	"PVKV" | version byte
//	{ uvarint len(key) | key | uvarint len(value) | value }   in key order
//	uvarint 0 | count (8 bytes BE)
//
// Keys are relative to the group prefix (the receiver's group id is its own),
// so they are never empty and a zero length ends the stream; the count
// catches a truncated one. The applied index is one of the keys: a replica
// that installs the snapshot has the applied index of the data it installed.
// Both sides hold one key and one value at a time, plus bufio's and the
// sstable writer's buffers: memory stays bounded whatever the group's size.
const (
	snapshotMagic   = "PVKV"
	snapshotVersion = 1
)

// maxValueLen bounds a value in a snapshot read from the network.
const maxValueLen = 1 << 30

func (m *stateMachine) PrepareSnapshot() (any, error) {
	// Called between two Apply calls: the Pebble snapshot holds the
	// applied index of exactly the data it holds.
	return m.store.db.NewSnapshot(), nil
}

func (m *stateMachine) SaveSnapshot(view any, w io.Writer, stop <-chan struct{}) error {
	snap := view.(*pebble.Snapshot)
	defer snap.Close()
	start, end := groupSpan(m.group)
	it, err := snap.NewIter(&pebble.IterOptions{LowerBound: start, UpperBound: end})
	if err != nil {
		return err
	}
	defer it.Close()
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(snapshotMagic)
	bw.WriteByte(snapshotVersion)
	var lenBuf [binary.MaxVarintLen64]byte
	writeBytes := func(b []byte) {
		bw.Write(lenBuf[:binary.PutUvarint(lenBuf[:], uint64(len(b)))])
		bw.Write(b)
	}
	var count uint64
	for ok := it.First(); ok; ok = it.Next() {
		if count%1024 == 0 {
			select {
			case <-stop:
				return raft.ErrStopped
			default:
			}
		}
		writeBytes(it.Key()[groupPrefixLen:])
		v, err := it.ValueAndErr()
		if err != nil {
			return err
		}
		writeBytes(v)
		count++
		// bufio keeps the first write error and returns it from every
		// later call; check it now and then to stop streaming to a peer
		// that went away.
		if count%1024 == 0 {
			if _, err := bw.Write(nil); err != nil {
				return err
			}
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	bw.WriteByte(0)
	var c [8]byte
	binary.BigEndian.PutUint64(c[:], count)
	bw.Write(c[:])
	if err := bw.Flush(); err != nil {
		return err
	}
	m.store.snapshotsSaved.Add(1)
	return nil
}

// RecoverFromSnapshot replaces the group's span with the snapshot's: the
// stream is written to a staging sstable, then IngestAndExcise swaps the
// span for the table's contents in one atomic, durable step. A crash before
// it leaves the old state (and old applied index), and the engine repeats
// the recovery from its snapshot file; a crash after it leaves the new one.
func (m *stateMachine) RecoverFromSnapshot(r io.Reader, stop <-chan struct{}) error {
	br := bufio.NewReaderSize(r, 64<<10)
	head := make([]byte, len(snapshotMagic)+1)
	if _, err := io.ReadFull(br, head); err != nil {
		return fmt.Errorf("kvsm: group %d: snapshot header: %w", m.group, err)
	}
	if string(head[:len(snapshotMagic)]) != snapshotMagic || head[len(snapshotMagic)] != snapshotVersion {
		return fmt.Errorf("kvsm: group %d: not a version %d snapshot", m.group, snapshotVersion)
	}
	fs := m.store.fs
	path := fs.PathJoin(m.store.staging, fmt.Sprintf("group-%d-replica-%d.sst", m.group, m.replica))
	// Ingestion links the file into the store; the staging name goes
	// either way.
	defer fs.Remove(path)
	f, err := fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("kvsm: group %d: %w", m.group, err)
	}
	db := m.store.db
	w := sstable.NewWriter(objstorageprovider.NewFileWritable(f), m.store.writerOpts)
	count, err := copySnapshot(br, w, groupPrefix(m.group), stop)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("kvsm: group %d: receiving snapshot: %w", m.group, err)
	}
	start, end := groupSpan(m.group)
	if count == 0 {
		// Nothing to ingest (a group that never applied a command): the
		// new state is the empty span.
		err = db.DeleteRange(start, end, pebble.Sync)
	} else {
		_, err = db.IngestAndExcise(context.Background(), []string{path}, nil, nil,
			pebble.KeyRange{Start: start, End: end})
	}
	if err != nil {
		return fmt.Errorf("kvsm: group %d: installing snapshot: %w", m.group, err)
	}
	m.store.snapshotsRecovered.Add(1)
	return nil
}

// copySnapshot reads snapshot records from r into w under prefix and checks
// the trailer; it returns the number of records.
func copySnapshot(r *bufio.Reader, w *sstable.Writer, prefix []byte, stop <-chan struct{}) (uint64, error) {
	key := append([]byte(nil), prefix...)
	var val []byte
	var count uint64
	readLen := func(limit uint64) (int, error) {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return 0, err
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
				return 0, raft.ErrStopped
			default:
			}
		}
		kl, err := readLen(maxKeyLen + 16)
		if err != nil {
			return 0, unexpectedEOF(err)
		}
		if kl == 0 {
			break
		}
		key = append(key[:len(prefix)], make([]byte, kl)...)
		if _, err := io.ReadFull(r, key[len(prefix):]); err != nil {
			return 0, unexpectedEOF(err)
		}
		vl, err := readLen(maxValueLen)
		if err != nil {
			return 0, unexpectedEOF(err)
		}
		val = append(val[:0], make([]byte, vl)...)
		if _, err := io.ReadFull(r, val); err != nil {
			return 0, unexpectedEOF(err)
		}
		if err := w.Set(key, val); err != nil {
			// Keys out of order: a corrupt stream.
			return 0, err
		}
		count++
	}
	var c [8]byte
	if _, err := io.ReadFull(r, c[:]); err != nil {
		return 0, unexpectedEOF(err)
	}
	if got := binary.BigEndian.Uint64(c[:]); got != count {
		return 0, fmt.Errorf("trailer counts %d records, stream had %d", got, count)
	}
	return count, nil
}

func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
