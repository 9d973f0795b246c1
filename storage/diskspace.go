package storage

import (
	"errors"
	"fmt"
	"github.com/pivotdb/pivotdb/panics"
	iofs "io/fs"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// A full disk must not end the process, but Pebble ends it (Logger.Fatalf,
// "fatal commit error") when a WAL or MANIFEST write fails, and that cannot
// be caught. So the engine stops before the disk is full, as CockroachDB
// does:
//
//  1. Admission. Every Batch.Commit first asks the disk guard whether the
//     data directory's filesystem (statfs, through vfs.FS.GetDiskUsage) has
//     room for the batch above the reserve (Options.DiskReserveBytes, the
//     server's --disk-reserve). If not, Commit returns a *DiskFullError
//     (ErrDiskFull) and writes nothing: the statement fails with 53100, its
//     transaction rolls back, reads go on. Commits in flight count against
//     the room too, so concurrent writers cannot together overshoot it.
//     The reserve is what Pebble's own background writes (flushing the
//     memtables, compactions, the MANIFEST) live on once clients stop.
//
//  2. Ballast. A file of DiskBallastBytes, EMERGENCY_BALLAST, sits in the
//     data directory. Pebble's filesystem is wrapped with vfs.OnDiskFull:
//     when a write of Pebble's hits ENOSPC anyway (a compaction ate the
//     reserve, another process filled the disk), the ballast is deleted and
//     the write retried once, so the flush or MANIFEST update that would
//     otherwise be fatal gets through. Open deletes it too when the disk is
//     already below the reserve, so that WAL replay can flush. While the
//     ballast is missing its size still counts as taken for admission (so
//     clients cannot eat the room it freed), and it is recreated as soon as
//     the filesystem has room for it and the reserve again.
//
// A small batch that drops data (one with a range deletion of at most
// dropBatchMaxBytes: DROP TABLE, DROP INDEX, DROP DATABASE) may use all but
// a quarter of the reserve, so that space can be freed from SQL on a full
// disk. (It can still be refused for a moment while a compaction holds most
// of the reserve: the compaction's output is written before its inputs are
// deleted.) Pebble flushes a memtable holding a range deletion within
// flushDelayDeleteRange and then deletes the sstables it covers without
// rewriting them, which frees the space without needing any.
//
// Writes resume by themselves once space is freed (files deleted, the
// filesystem grown): near the reserve the guard reads statfs at every
// commit, so no restart and no polling interval is involved. Far from it
// (more than statfsSlack above the reserve and the ballast) a reading is
// reused for up to statfsMaxAge or statfsMaxBytes of admitted commits,
// whichever comes first, less the bytes admitted since it was read; that
// takes statfs off the commit path of a disk with room.
//
// Commits that bypass admission: CommitUnsynced (a shard map swap under a
// table's commit lock; a few hundred bytes that cannot be refused halfway
// through a reshape) and everything Pebble writes on its own.

// ErrDiskFull reports a write refused because the data directory's disk has
// less free space than the reserve. Nothing of the batch was written.
var ErrDiskFull = errors.New("storage: disk full")

// DiskFullError is the detail of ErrDiskFull.
type DiskFullError struct {
	// AvailBytes is the free space seen, minus the commits in flight and
	// the ballast while it is deleted.
	AvailBytes uint64
	// NeedBytes is the size of the refused batch.
	NeedBytes uint64
	// ReserveBytes is the free space kept back (Options.DiskReserveBytes).
	ReserveBytes uint64
}

func (e *DiskFullError) Error() string {
	return fmt.Sprintf("storage: disk full: %s free, a write of %s would leave less than the reserve of %s",
		FormatBytes(e.AvailBytes), FormatBytes(e.NeedBytes), FormatBytes(e.ReserveBytes))
}

// Is makes errors.Is(err, ErrDiskFull) true.
func (e *DiskFullError) Is(target error) bool { return target == ErrDiskFull }

// FormatBytes renders n as PostgreSQL's pg_size_pretty does (kB, MB, GB
// with 1024 steps), for messages.
func FormatBytes(n uint64) string {
	units := []string{"bytes", "kB", "MB", "GB", "TB"}
	v, i := float64(n), 0
	for v >= 10*1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%.0f %s", v, units[i])
}

// dropBatchMaxBytes bounds the batches that may use the lower half of the
// reserve (see above): a drop writes a few keys and tombstones.
const dropBatchMaxBytes = 64 << 10

// flushDelayDeleteRange is Pebble's FlushDelayDeleteRange: space covered by
// a range deletion is freed only once it is flushed.
const flushDelayDeleteRange = 2 * time.Second

// ballastName is the ballast file in the data directory. Pebble ignores
// files whose names it does not know.
const ballastName = "EMERGENCY_BALLAST"

// DefaultDiskReserve is the reserve for a filesystem of total bytes when
// Options.DiskReserveBytes is 0: 1/16 of the disk, at least 8 MiB and at
// most 1 GiB. Large disks keep 1 GiB, enough for Pebble's memtables to flush
// and a few compactions; a 64 MB test filesystem keeps 8 MiB, because there
// a compaction rewrites a large share of the data.
func DefaultDiskReserve(total uint64) uint64 {
	return min(max(total/16, 8<<20), 1<<30)
}

// DefaultDiskBallast is the ballast for a filesystem of total bytes when
// Options.DiskBallastBytes is 0: 1% of the disk (CockroachDB's share), at
// least 1 MiB and at most 64 MiB, room for a flush of a default memtable
// and the MANIFEST updates that follow it. It is allocated with fallocate,
// so creating it writes nothing.
func DefaultDiskBallast(total uint64) uint64 {
	return min(max(total/100, 1<<20), 64<<20)
}

// defaultMemTableSize scales the default memtable down on small disks: the
// WAL of a memtable is preallocated at 110% of its size and the memtable is
// flushed as one file, so a 64 MiB memtable cannot work on a disk of a few
// hundred MB. It keeps 1/32 of the disk, at least 1 MiB.
func defaultMemTableSize(total uint64) uint64 {
	if total == 0 {
		return DefaultMemTableSizeBytes
	}
	return min(DefaultMemTableSizeBytes, max(total/32, 1<<20))
}

// DiskSpace is the disk guard's view, for sys views, logs and tests.
type DiskSpace struct {
	// Enabled is false when the filesystem cannot report its usage (an
	// in-memory one in tests); nothing is then guarded.
	Enabled      bool
	AvailBytes   uint64
	TotalBytes   uint64
	ReserveBytes uint64
	BallastBytes uint64
	// BallastPresent is false after the ballast was deleted for room.
	BallastPresent bool
	// Refusing is true while writes are being refused.
	Refusing bool
	// Refused counts the commits refused since Open.
	Refused uint64
}

// diskGuard implements the admission and the ballast described above.
type diskGuard struct {
	fs      vfs.FS // the unwrapped filesystem
	dir     string
	ballast string // path of the ballast file
	reserve uint64
	size    uint64 // of the ballast
	log     *slog.Logger

	pending  atomic.Int64                 // bytes of admitted commits not yet finished
	admitted atomic.Uint64                // bytes ever admitted (or asked for), for the reuse of readings
	reading  atomic.Pointer[spaceReading] // the last statfs reading (avail)
	reads    atomic.Uint64                // statfs readings by admit, for tests
	present  atomic.Bool                  // the ballast exists
	refusing atomic.Bool                  // the last admission refused (for logging transitions)
	refused  atomic.Uint64
	creating atomic.Bool // a goroutine is recreating the ballast
	total    uint64
	mu       sync.Mutex // serialises ballast create and delete
}

// newDiskGuard returns the guard of dir, or nil when fs cannot report its
// usage. It deletes the ballast when the disk is already below the reserve
// (so that Pebble's open can replay and flush the WAL) and creates it when
// there is room.
func newDiskGuard(fs vfs.FS, dir string, opts Options) (*diskGuard, error) {
	usage, err := fs.GetDiskUsage(dir)
	if errors.Is(err, vfs.ErrUnsupported) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("storage: disk usage of %s: %w", dir, err)
	}
	g := &diskGuard{fs: fs, dir: dir, ballast: fs.PathJoin(dir, ballastName), total: usage.TotalBytes,
		reserve: uint64(opts.DiskReserveBytes), size: uint64(opts.DiskBallastBytes), log: opts.events()}
	if g.reserve == 0 {
		g.reserve = DefaultDiskReserve(usage.TotalBytes)
	}
	if g.size == 0 {
		g.size = DefaultDiskBallast(usage.TotalBytes)
	}
	// A ballast being created when the process died is left as .tmp.
	if err := fs.Remove(g.ballast + ".tmp"); err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return nil, fmt.Errorf("storage: removing a half-made ballast: %w", err)
	}
	if fi, err := fs.Stat(g.ballast); err == nil {
		g.present.Store(true)
		if uint64(fi.Size()) != g.size {
			// Resized by a new setting (or a crash while creating it):
			// drop it; it is recreated at the right size below.
			g.deleteBallast("ballast size changed")
		}
	}
	if usage.AvailBytes < g.reserve {
		g.deleteBallast("free space below the reserve at open")
	} else {
		g.maybeCreateBallast(usage.AvailBytes, false)
	}
	return g, nil
}

// admit checks that a commit of n bytes leaves the reserve free and counts
// it as in flight; release(n) must be called once the commit returns.
func (g *diskGuard) admit(n int, drops bool) error {
	avail, fresh, ok := g.avail(n, false)
	if !ok {
		// statfs failing is not a full disk; let Pebble find out.
		return nil
	}
	pending := g.pending.Add(int64(n))
	taken := uint64(pending) // includes n
	if !g.present.Load() {
		taken += g.size
	}
	reserve := g.reserve
	if drops && n <= dropBatchMaxBytes {
		reserve /= 4
	}
	if (avail < taken || avail-taken < reserve) && !fresh {
		// Refused on a reused reading (many bytes in flight): decide
		// on the filesystem's figure, which is never refused for a
		// reading's age.
		if avail, _, ok = g.avail(0, true); !ok {
			g.release(n)
			return nil
		}
	}
	if avail < taken || avail-taken < reserve {
		g.release(n)
		g.refused.Add(1)
		if !g.refusing.Swap(true) {
			g.log.Error("storage: disk space is below the reserve; refusing writes until space is freed",
				"dir", g.dir, "avail", FormatBytes(avail), "reserve", FormatBytes(g.reserve))
		}
		free := uint64(0)
		if avail > taken-uint64(n) {
			free = avail - (taken - uint64(n))
		}
		return &DiskFullError{AvailBytes: free, NeedBytes: uint64(n), ReserveBytes: g.reserve}
	}
	if avail-taken >= g.reserve && g.refusing.Load() && g.refusing.Swap(false) {
		g.log.Info("storage: disk space is above the reserve again; writes resumed",
			"dir", g.dir, "avail", FormatBytes(avail))
	}
	if !g.present.Load() {
		g.maybeCreateBallast(avail, true)
	}
	return nil
}

// release ends the admission of a commit of n bytes.
func (g *diskGuard) release(n int) { g.pending.Add(-int64(n)) }

// avail returns the free space for a commit of n bytes: the filesystem's
// figure less what was admitted since it was read. A reading is reused
// while it is younger than statfsMaxAge, fewer than statfsMaxBytes were
// admitted since, and it leaves more than statfsSlack above the reserve
// and the ballast (see "Admission" above); otherwise statfs is read again.
// force reads statfs regardless. fresh is true when statfs was read; ok
// is false when it fails.
func (g *diskGuard) avail(n int, force bool) (avail uint64, fresh, ok bool) {
	admitted := g.admitted.Add(uint64(n))
	if r := g.reading.Load(); r != nil && !force {
		since := admitted - r.admitted // includes n
		if since < statfsMaxBytes && time.Since(r.at) < statfsMaxAge &&
			r.avail > since && r.avail-since > g.reserve+g.size+statfsSlack {
			return r.avail - since, false, true
		}
	}
	usage, err := g.fs.GetDiskUsage(g.dir)
	if err != nil {
		g.reading.Store(nil)
		return 0, false, false
	}
	g.reads.Add(1)
	// The reading counts what was admitted before it, n included: a
	// commit admitted now is not yet on disk, but the next statfsMaxBytes
	// cannot slip past the reserve.
	g.reading.Store(&spaceReading{avail: usage.AvailBytes, at: time.Now(), admitted: admitted - uint64(n)})
	return usage.AvailBytes, true, true
}

// How long and for how many admitted bytes a statfs reading is reused,
// and how far above the reserve it must be to be reused at all. statfs
// costs a system call (~2-3% of a node's CPU under single-row writes when
// read at every commit); reused for 10 ms it costs at most 100 calls a
// second. What the reuse can miss is what other writers (other processes,
// Pebble's own flushes and compactions) take within 10 ms: 64 MiB in
// 10 ms is 6.4 GB/s, faster than the disks this runs on, and the ballast
// covers the rest (vfs.OnDiskFull). Nearer the reserve than statfsSlack,
// every commit reads statfs, so the refusal point is exact and writes
// resume at the first commit after space is freed.
const (
	statfsMaxAge   = 10 * time.Millisecond
	statfsMaxBytes = 16 << 20
	statfsSlack    = 64 << 20
)

// spaceReading is one statfs reading of the disk guard.
type spaceReading struct {
	avail    uint64    // free bytes the filesystem reported
	at       time.Time // when (monotonic)
	admitted uint64    // diskGuard.admitted before the commit that read it
}

// maybeCreateBallast creates the ballast when avail leaves room for it
// above the reserve (with as much again to spare, so that a disk hovering
// at the limit does not create and delete it in turn). async runs the
// creation on its own goroutine, off the commit path.
func (g *diskGuard) maybeCreateBallast(avail uint64, async bool) {
	if g.present.Load() || avail < g.reserve+2*g.size {
		return
	}
	if !g.creating.CompareAndSwap(false, true) {
		return
	}
	create := func() {
		defer g.creating.Store(false)
		if err := g.createBallast(); err != nil {
			g.log.Warn("storage: cannot create the emergency ballast", "path", g.ballast, "err", err)
		}
	}
	if async {
		panics.Go("storage: creating the emergency ballast", create)
	} else {
		create()
	}
}

func (g *diskGuard) createBallast() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.present.Load() {
		return nil
	}
	tmp := g.ballast + ".tmp"
	f, err := g.fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	err = fillFile(f, int64(g.size))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = g.fs.Rename(tmp, g.ballast)
	}
	if err != nil {
		g.fs.Remove(tmp)
		return err
	}
	g.present.Store(true)
	g.log.Info("storage: emergency ballast created", "path", g.ballast, "size", FormatBytes(g.size))
	return nil
}

// deleteBallast removes the ballast to give Pebble room.
func (g *diskGuard) deleteBallast(why string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.fs.Remove(g.ballast); err != nil && !errors.Is(err, iofs.ErrNotExist) {
		g.log.Error("storage: cannot delete the emergency ballast", "path", g.ballast, "err", err)
		return
	}
	if g.present.Swap(false) {
		g.log.Warn("storage: emergency ballast deleted to make room", "path", g.ballast,
			"size", FormatBytes(g.size), "reason", why)
	}
}

// onDiskFull is vfs.OnDiskFull's callback: a write of Pebble's hit ENOSPC.
// Pebble's writes are blocked while it runs, so it only deletes a file.
func (g *diskGuard) onDiskFull() {
	g.reading.Store(nil) // it missed what filled the disk
	g.deleteBallast("a write hit ENOSPC")
}

func (g *diskGuard) status() DiskSpace {
	s := DiskSpace{Enabled: true, ReserveBytes: g.reserve, BallastBytes: g.size,
		BallastPresent: g.present.Load(), Refusing: g.refusing.Load(), Refused: g.refused.Load(), TotalBytes: g.total}
	if u, err := g.fs.GetDiskUsage(g.dir); err == nil {
		s.AvailBytes, s.TotalBytes = u.AvailBytes, u.TotalBytes
	}
	return s
}

// DiskSpace returns the disk guard's view of the data directory.
func (e *Engine) DiskSpace() DiskSpace {
	if e.space == nil {
		return DiskSpace{}
	}
	return e.space.status()
}

// events returns the logger for the guard's and Pebble's events: the slog
// logger under Options.Logger when it is a SlogLogger, else slog's default.
func (o Options) events() *slog.Logger {
	if l, ok := o.Logger.(SlogLogger); ok && l.L != nil {
		return l.L
	}
	return slog.Default()
}

// fillFile gives f size bytes of allocated space: fallocate where the
// filesystem has it (no data written, so a 256 MiB ballast costs nothing),
// else zeros.
func fillFile(f vfs.File, size int64) error {
	if fd := f.Fd(); fd != vfs.InvalidFd {
		if err := fallocate(fd, size); err == nil {
			return nil
		}
	}
	zeros := make([]byte, 1<<20)
	for size > 0 {
		n := min(size, int64(len(zeros)))
		if _, err := f.Write(zeros[:n]); err != nil {
			return err
		}
		size -= n
	}
	return nil
}

// backgroundErrorLog logs Pebble's background errors (failed flushes and
// compactions, which Pebble retries) instead of ending the process, at most
// once per interval for a run of errors: a flush that fails for want of
// space is retried at once and would otherwise flood the log.
type backgroundErrorLog struct {
	log      *slog.Logger
	interval time.Duration
	mu       sync.Mutex
	last     time.Time
	dropped  int
}

func (b *backgroundErrorLog) report(err error) {
	b.mu.Lock()
	now := time.Now()
	if now.Sub(b.last) < b.interval {
		b.dropped++
		b.mu.Unlock()
		return
	}
	dropped := b.dropped
	b.last, b.dropped = now, 0
	b.mu.Unlock()
	b.log.Error("storage: background error (Pebble retries it)", "err", err, "suppressed", dropped)
}
