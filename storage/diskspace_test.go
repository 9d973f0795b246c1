package storage

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

const mib = 1 << 20

// TestDiskGuard drives the disk guard through an in-memory filesystem whose
// reported usage the test sets: a 1 GiB disk keeps a 64 MiB reserve and a
// ballast of about 10 MiB (1/16 and 1%).
//
//	avail 100 MiB   commits pass, ballast present
//	avail  60 MiB   below the reserve: Commit fails with ErrDiskFull, writes nothing
//	avail 100 MiB   the same batch commits (no restart)
//	ENOSPC          ballast deleted; its 10 MiB still count as taken
//	avail 200 MiB   commits pass, ballast recreated
func TestDiskGuard(t *testing.T) {
	fs := vfs.NewMem()
	setAvail := func(avail uint64) {
		fs.TestingSetDiskUsage(vfs.DiskUsage{AvailBytes: avail, TotalBytes: 1 << 30, UsedBytes: 1<<30 - avail})
	}
	setAvail(100 * mib)
	e, err := Open("db", Options{FS: fs, Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ds := e.DiskSpace()
	if !ds.Enabled || ds.ReserveBytes != 64*mib || ds.BallastBytes != DefaultDiskBallast(1<<30) || !ds.BallastPresent {
		t.Fatalf("after open: %+v", ds)
	}
	if fi, err := fs.Stat("db/" + ballastName); err != nil || uint64(fi.Size()) != DefaultDiskBallast(1<<30) {
		t.Fatalf("ballast file: %v %v", fi, err)
	}

	put := func(key string) error {
		b := e.NewBatch()
		defer b.Close()
		if err := b.Set([]byte(key), []byte("v")); err != nil {
			t.Fatal(err)
		}
		return b.Commit()
	}
	if err := put("\x02a"); err != nil {
		t.Fatal(err)
	}

	setAvail(60 * mib)
	b := e.NewBatch()
	defer b.Close()
	b.Set([]byte("\x02b"), []byte("v"))
	err = b.Commit()
	var dfe *DiskFullError
	if !errors.Is(err, ErrDiskFull) || !errors.As(err, &dfe) || dfe.ReserveBytes != 64*mib {
		t.Fatalf("commit below the reserve: got %v, want ErrDiskFull", err)
	}
	if _, found, _ := e.Get([]byte("\x02b")); found {
		t.Fatal("a refused commit wrote its key")
	}
	if ds := e.DiskSpace(); !ds.Refusing || ds.Refused != 1 {
		t.Fatalf("after a refusal: %+v", ds)
	}
	// Reads go on.
	if _, found, err := e.Get([]byte("\x02a")); err != nil || !found {
		t.Fatalf("read while full: %v %v", found, err)
	}

	// A small drop (a range deletion) may use all but a quarter of the
	// reserve: that is how space is freed from SQL.
	d := e.NewBatch()
	defer d.Close()
	d.Set([]byte("\x01catalog"), []byte("dropped"))
	d.DeleteRange(Span{Start: []byte("\x02x"), End: []byte("\x02y")})
	if err := d.Commit(); err != nil {
		t.Fatalf("a drop below the reserve: %v", err)
	}
	setAvail(10 * mib) // below a quarter of the reserve: refused too
	d2 := e.NewBatch()
	defer d2.Close()
	d2.DeleteRange(Span{Start: []byte("\x02x"), End: []byte("\x02y")})
	if err := d2.Commit(); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("a drop below a quarter of the reserve: got %v, want ErrDiskFull", err)
	}

	setAvail(100 * mib)
	if err := b.Commit(); err != nil {
		t.Fatalf("retry after space returned: %v", err)
	}
	if _, found, _ := e.Get([]byte("\x02b")); !found {
		t.Fatal("retried commit lost")
	}
	if ds := e.DiskSpace(); ds.Refusing {
		t.Fatalf("still refusing: %+v", ds)
	}

	// A write of Pebble's hit ENOSPC: the ballast goes, and its room is not
	// given to clients.
	e.space.onDiskFull()
	if _, err := fs.Stat("db/" + ballastName); err == nil {
		t.Fatal("ballast not deleted")
	}
	setAvail(70 * mib) // 70 - 10 (missing ballast) < 64
	if err := put("\x02c"); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("with the ballast deleted: got %v, want ErrDiskFull", err)
	}
	setAvail(200 * mib)
	if err := put("\x02c"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !e.DiskSpace().BallastPresent {
		if time.Now().After(deadline) {
			t.Fatal("ballast not recreated")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestDiskGuardOpenBelowReserve checks that a store opened on a disk already
// below the reserve deletes its ballast (room for WAL replay) and refuses
// writes, and that an in-memory filesystem without usage is not guarded.
func TestDiskGuardOpenBelowReserve(t *testing.T) {
	fs := vfs.NewMem()
	fs.TestingSetDiskUsage(vfs.DiskUsage{AvailBytes: 500 * mib, TotalBytes: 1 << 30})
	e, err := Open("db", Options{FS: fs, Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	fs.TestingSetDiskUsage(vfs.DiskUsage{AvailBytes: 10 * mib, TotalBytes: 1 << 30})
	e, err = Open("db", Options{FS: fs, Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := fs.Stat("db/" + ballastName); err == nil || e.DiskSpace().BallastPresent {
		t.Fatal("ballast kept on a disk below the reserve")
	}
	b := e.NewBatch()
	defer b.Close()
	b.Set([]byte("\x02a"), nil)
	if err := b.Commit(); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("got %v, want ErrDiskFull", err)
	}

	m, err := Open("m", Options{FS: vfs.NewMem(), Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.DiskSpace().Enabled {
		t.Fatal("guard enabled on a filesystem without usage")
	}
}

// TestDiskGuardReusesReading checks when admission reuses a statfs reading:
// far above the reserve a reading serves the commits of statfsMaxAge (so a
// burst of small commits reads statfs a few times, not once each); a drop
// of free space is seen within statfsMaxAge, or at once by a commit that
// brings statfsMaxBytes since the reading; near the reserve every commit
// reads statfs.
func TestDiskGuardReusesReading(t *testing.T) {
	fs := vfs.NewMem()
	setAvail := func(avail uint64) {
		fs.TestingSetDiskUsage(vfs.DiskUsage{AvailBytes: avail, TotalBytes: 1 << 30, UsedBytes: 1<<30 - avail})
	}
	setAvail(900 * mib) // 64 MiB reserve, ~10 MiB ballast: far above statfsSlack
	e, err := Open("db", Options{FS: fs, Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	put := func(key string, size int) error {
		b := e.NewBatch()
		defer b.Close()
		if err := b.Set([]byte(key), make([]byte, size)); err != nil {
			t.Fatal(err)
		}
		return b.Commit()
	}
	reads := func() uint64 { return e.space.reads.Load() }

	const commits = 200
	r0, start := reads(), time.Now()
	for i := range commits {
		if err := put(fmt.Sprintf("\x02a%d", i), 10); err != nil {
			t.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	n := reads() - r0
	if limit := 2 + uint64(elapsed/statfsMaxAge); n > limit {
		t.Fatalf("%d commits in %v read statfs %d times, want at most %d", commits, elapsed, n, limit)
	}
	if elapsed < commits*statfsMaxAge/4 && n >= commits/2 {
		t.Fatalf("%d commits in %v read statfs %d times: the reading is not reused", commits, elapsed, n)
	}

	// The disk fills from elsewhere: refused once the reading is older
	// than statfsMaxAge.
	setAvail(60 * mib)
	time.Sleep(statfsMaxAge + time.Millisecond)
	if err := put("\x02b", 10); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("after statfsMaxAge below the reserve: got %v, want ErrDiskFull", err)
	}

	// Space returns; a fresh reading far above the reserve is taken by
	// the first commit. The disk then fills again: a commit bringing
	// statfsMaxBytes reads statfs at once and is refused.
	setAvail(900 * mib)
	if err := put("\x02c", 10); err != nil {
		t.Fatal(err)
	}
	setAvail(70 * mib)
	if err := put("\x02d", statfsMaxBytes); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("a commit of statfsMaxBytes after the disk filled: got %v, want ErrDiskFull", err)
	}

	// Near the reserve (within statfsSlack) every commit reads statfs.
	setAvail(100 * mib)
	r0 = reads()
	for i := range 10 {
		if err := put(fmt.Sprintf("\x02e%d", i), 10); err != nil {
			t.Fatal(err)
		}
	}
	if n := reads() - r0; n != 10 {
		t.Fatalf("10 commits near the reserve read statfs %d times, want 10", n)
	}
}

// BenchmarkDiskGuardAdmit is the admission of one small commit on the real
// filesystem of a temporary directory: "statfs" reads the disk usage every
// time (the guard before readings were reused, and near the reserve),
// "reused" is the usual case on a disk with room.
func BenchmarkDiskGuardAdmit(b *testing.B) {
	g, err := newDiskGuard(vfs.Default, b.TempDir(), Options{DiskBallastBytes: 1 << 20, Logger: quietLogger{}})
	if err != nil || g == nil {
		b.Skipf("no disk guard here: %v", err)
	}
	if u, err := vfs.Default.GetDiskUsage(g.dir); err != nil || u.AvailBytes < g.reserve+g.size+statfsSlack+statfsMaxBytes {
		b.Skipf("too little free space for reused readings: %v", err)
	}
	for _, force := range []bool{true, false} {
		name := map[bool]string{true: "statfs", false: "reused"}[force]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if force {
					g.reading.Store(nil)
				}
				if err := g.admit(100, false); err != nil {
					b.Fatal(err)
				}
				g.release(100)
			}
		})
	}
}
