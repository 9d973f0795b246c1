package storage

import (
	"errors"
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
