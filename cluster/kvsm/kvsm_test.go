package kvsm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage/storagetest"
)

func openTestStore(t *testing.T) *Store {
	t.Helper()
	s, err := OpenStore("/store", &pebble.Options{FS: vfs.NewMem(), Logger: storagetest.QuietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func encode(t *testing.T, ops ...Op) []byte {
	t.Helper()
	b, err := Command{Ops: ops}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func put(k, v string) Op { return Op{Kind: OpPut, Key: []byte(k), Value: []byte(v)} }

// scan returns group g's data as "k=v" strings via Lookup.
func scan(t *testing.T, m raft.StateMachine) []string {
	t.Helper()
	v, err := m.Lookup(Scan{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, kv := range v.([]KV) {
		out = append(out, string(kv.Key)+"="+string(kv.Value))
	}
	return out
}

func TestCommandEncoding(t *testing.T) {
	c := Command{Ops: []Op{put("a", "1"), {Kind: OpDelete, Key: []byte("b")}, {Kind: OpAdd, Key: []byte("c"), Delta: -7}, put("d", "")}}
	b, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeCommand(b)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(c) {
		t.Fatalf("decoded %v, encoded %v", got, c)
	}
	// Every strict prefix, and any trailing byte, is refused.
	for i := 0; i < len(b); i++ {
		if _, err := decodeCommand(b[:i]); !errors.Is(err, errBadCommand) {
			t.Fatalf("prefix of %d bytes decoded: %v", i, err)
		}
	}
	if _, err := decodeCommand(append(b, 0)); !errors.Is(err, errBadCommand) {
		t.Fatalf("trailing byte decoded: %v", err)
	}
	for _, bad := range []Command{{}, {Ops: []Op{{Kind: OpPut}}}, {Ops: []Op{{Kind: 9, Key: []byte("k")}}}} {
		if _, err := bad.Encode(); err == nil {
			t.Fatalf("Encode(%v) accepted", bad)
		}
	}
}

// Apply writes the commands' effects and the last entry's index in one
// batch; OpAdd sees the earlier ops of the same batch; a malformed command
// changes nothing and says why; other groups are untouched.
func TestApply(t *testing.T) {
	s := openTestStore(t)
	m := s.NewStateMachine(5, 1)
	other := s.NewStateMachine(6, 1)
	if idx, err := m.Open(nil); err != nil || idx != 0 {
		t.Fatalf("Open of a new replica: %d, %v", idx, err)
	}
	if err := other.Apply([]raft.Entry{{Index: 3, Cmd: encode(t, put("a", "other"))}}); err != nil {
		t.Fatal(err)
	}
	entries := []raft.Entry{
		{Index: 10, Cmd: encode(t, put("a", "1"), put("b", "2"), Op{Kind: OpAdd, Key: []byte("n"), Delta: 2})},
		{Index: 11, Cmd: []byte("garbage")},
		{Index: 12, Cmd: encode(t, Op{Kind: OpDelete, Key: []byte("b")}, Op{Kind: OpAdd, Key: []byte("n"), Delta: 40})},
	}
	if err := m.Apply(entries); err != nil {
		t.Fatal(err)
	}
	if v, err := DecodeResult(entries[0].Result.Value, entries[0].Result.Data); err != nil || fmt.Sprint(v) != "[2]" {
		t.Fatalf("entry 10 result %v, %v", v, err)
	}
	if _, err := DecodeResult(entries[1].Result.Value, entries[1].Result.Data); !errors.Is(err, ErrMalformed) {
		t.Fatalf("entry 11 result: %v", err)
	}
	if v, err := DecodeResult(entries[2].Result.Value, entries[2].Result.Data); err != nil || fmt.Sprint(v) != "[42]" {
		t.Fatalf("entry 12 result %v, %v", v, err)
	}
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], 42)
	if got, want := fmt.Sprint(scan(t, m)), fmt.Sprint([]string{"a=1", "n=" + string(n[:])}); got != want {
		t.Fatalf("group 5 holds %s, want %s", got, want)
	}
	if got := fmt.Sprint(scan(t, other)); got != "[a=other]" {
		t.Fatalf("group 6 holds %s", got)
	}
	if idx, err := s.NewStateMachine(5, 1).Open(nil); err != nil || idx != 12 {
		t.Fatalf("Open after Apply: %d, %v", idx, err)
	}
	if v, err := m.Lookup(Applied{}); err != nil || v.(uint64) != 12 {
		t.Fatalf("Applied: %v, %v", v, err)
	}
	if v, err := m.Lookup(Get{Key: []byte("b")}); err != nil || v.(GetResult).Found {
		t.Fatalf("deleted key: %v, %v", v, err)
	}
	if err := s.DropGroup(5); err != nil {
		t.Fatal(err)
	}
	if got := scan(t, m); len(got) != 0 {
		t.Fatalf("dropped group holds %v", got)
	}
	if got := fmt.Sprint(scan(t, other)); got != "[a=other]" {
		t.Fatalf("dropping group 5 touched group 6: %s", got)
	}
}

// A snapshot of one store's group installs on another store: the group's
// span there becomes exactly the snapshot's (old keys gone, applied index
// taken over), neighbouring groups are untouched, and a truncated or corrupt
// stream is refused without changing anything.
func TestSnapshotRoundTrip(t *testing.T) {
	src, dst := openTestStore(t), openTestStore(t)
	from := src.NewStateMachine(5, 1)
	var want []string
	var ents []raft.Entry
	for i := 0; i < 3000; i++ {
		k, v := fmt.Sprintf("key%05d", i), fmt.Sprintf("%0*d", i%700, i)
		ents = append(ents, raft.Entry{Index: uint64(i + 1), Cmd: encode(t, put(k, v))})
		want = append(want, k+"="+v)
	}
	if err := from.Apply(ents); err != nil {
		t.Fatal(err)
	}
	// Neighbours in the source must not leak into the snapshot.
	if err := src.NewStateMachine(4, 1).Apply([]raft.Entry{{Index: 1, Cmd: encode(t, put("n4", "x"))}}); err != nil {
		t.Fatal(err)
	}
	if err := src.NewStateMachine(6, 1).Apply([]raft.Entry{{Index: 1, Cmd: encode(t, put("n6", "x"))}}); err != nil {
		t.Fatal(err)
	}
	view, err := from.PrepareSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	// Writes after PrepareSnapshot are not in the snapshot.
	if err := from.Apply([]raft.Entry{{Index: 3001, Cmd: encode(t, put("late", "x"))}}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := from.SaveSnapshot(view, &buf, nil); err != nil {
		t.Fatal(err)
	}

	to := dst.NewStateMachine(5, 2)
	if err := to.Apply([]raft.Entry{{Index: 7, Cmd: encode(t, put("stale", "gone"), put("key00001", "old"))}}); err != nil {
		t.Fatal(err)
	}
	neighbour := dst.NewStateMachine(6, 2)
	if err := neighbour.Apply([]raft.Entry{{Index: 2, Cmd: encode(t, put("mine", "kept"))}}); err != nil {
		t.Fatal(err)
	}
	before := fmt.Sprint(scan(t, to))
	for _, bad := range [][]byte{buf.Bytes()[:buf.Len()/2], buf.Bytes()[:buf.Len()-1], append([]byte("XXXX"), buf.Bytes()[4:]...)} {
		if err := to.RecoverFromSnapshot(bytes.NewReader(bad), nil); err == nil {
			t.Fatal("a damaged snapshot was installed")
		}
		if got := fmt.Sprint(scan(t, to)); got != before {
			t.Fatalf("a refused snapshot changed the group: %s", got)
		}
	}
	if err := to.RecoverFromSnapshot(bytes.NewReader(buf.Bytes()), nil); err != nil {
		t.Fatal(err)
	}
	if got := scan(t, to); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("installed group has %d keys, want %d", len(got), len(want))
	}
	if idx, err := to.Open(nil); err != nil || idx != 3000 {
		t.Fatalf("applied index after recovery %d, %v; want 3000", idx, err)
	}
	if got := fmt.Sprint(scan(t, neighbour)); got != "[mine=kept]" {
		t.Fatalf("recovery touched group 6: %s", got)
	}
	if st := dst.Stats(); st.SnapshotsRecovered != 1 {
		t.Fatalf("stats %+v", st)
	}
	// The snapshot of a group that never applied a command empties the
	// receiver's span.
	empty := src.NewStateMachine(9, 1)
	view, _ = empty.PrepareSnapshot()
	var ebuf bytes.Buffer
	if err := empty.SaveSnapshot(view, &ebuf, nil); err != nil {
		t.Fatal(err)
	}
	if err := neighbour.RecoverFromSnapshot(&ebuf, nil); err != nil {
		t.Fatal(err)
	}
	if got := scan(t, neighbour); len(got) != 0 {
		t.Fatalf("group 6 after an empty snapshot: %v", got)
	}
	if idx, err := neighbour.Open(nil); err != nil || idx != 0 {
		t.Fatalf("applied index after an empty snapshot %d, %v", idx, err)
	}
	// Stopping aborts both sides.
	stop := make(chan struct{})
	close(stop)
	view, _ = from.PrepareSnapshot()
	if err := from.SaveSnapshot(view, &bytes.Buffer{}, stop); !errors.Is(err, raft.ErrStopped) {
		t.Fatalf("SaveSnapshot with stop closed: %v", err)
	}
	if err := to.RecoverFromSnapshot(bytes.NewReader(buf.Bytes()), stop); !errors.Is(err, raft.ErrStopped) {
		t.Fatalf("RecoverFromSnapshot with stop closed: %v", err)
	}
}

// Apply does not sync; Sync makes everything applied so far durable. A crash
// (a clone of the file system with only what was synced) keeps the synced
// prefix, with its own applied index, and loses the rest.
func TestSyncAndCrash(t *testing.T) {
	fs := vfs.NewCrashableMem()
	open := func(fs vfs.FS) *Store {
		s, err := OpenStore("/store", &pebble.Options{FS: fs, Logger: storagetest.QuietLogger{}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open(fs)
	m := s.NewStateMachine(5, 1)
	for i := 1; i <= 10; i++ {
		if err := m.Apply([]raft.Entry{{Index: uint64(i), Cmd: encode(t, put(fmt.Sprint(i), "v"))}}); err != nil {
			t.Fatal(err)
		}
		if i == 6 {
			if err := m.Sync(); err != nil {
				t.Fatal(err)
			}
		}
	}
	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	s.Close()
	s = open(crashed)
	defer s.Close()
	m = s.NewStateMachine(5, 1)
	idx, err := m.Open(nil)
	if err != nil || idx != 6 {
		t.Fatalf("applied index after the crash %d, %v; want 6 (the last sync)", idx, err)
	}
	if got := len(scan(t, m)); got != 6 {
		t.Fatalf("%d keys after the crash, want the 6 synced", got)
	}
}
