package hlc

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// DefaultPersistAhead is how far beyond the wall time of the newest
// timestamp the persisted high-water mark is set. A larger value means fewer
// synchronous writes (one per PersistAhead of wall time at most) and a larger
// jump of the clock after a restart whose physical clock went backwards.
const DefaultPersistAhead = 5 * time.Second

// Config configures NewClock.
type Config struct {
	// Physical returns the physical time in nanoseconds since the Unix
	// epoch; nil means time.Now().UnixNano(). Tests substitute a manual clock.
	Physical func() int64
	// MaxOffset bounds how far ahead of the local physical clock a remote
	// timestamp may be before Update refuses it (design §12: "a maximum clock
	// offset bounds HLC skew"). 0 turns the check off, which is right for a
	// single node: the only timestamps come from its own clock.
	MaxOffset time.Duration
	// Store persists the high-water mark that makes the clock monotonic
	// across restarts. nil means no persistence (tests, tools that only read).
	Store HighWaterStore
	// PersistAhead is how far ahead of use the high-water mark is written;
	// 0 means DefaultPersistAhead.
	PersistAhead time.Duration
}

// Clock is a hybrid logical clock (Kulkarni et al., as CockroachDB has it):
// its timestamps follow the physical clock when that moves forward and fall
// back on the logical counter when it does not, so they never go backwards
// and are unique per clock. Update folds in timestamps seen from other nodes,
// so that causally later events get later timestamps across nodes.
//
// Monotonic across restarts: before handing out a timestamp whose wall time
// reaches the persisted high-water mark, the clock durably moves the mark
// PersistAhead further. Every timestamp handed out has a wall time below the
// persisted mark, and a restarted clock starts at the mark, so it can only
// hand out later timestamps even if the machine's clock was set back. The
// mark is moved in the background once half of PersistAhead is used up, so
// Now waits for the disk only when the background write falls behind.
//
// A Clock is safe for concurrent use.
type Clock struct {
	physical     func() int64
	maxOffset    time.Duration
	store        HighWaterStore
	persistAhead int64

	mu struct {
		sync.Mutex
		// last is the newest timestamp handed out or learnt by Update.
		last Timestamp
		// highWater is the persisted bound: every timestamp in last so far
		// has WallTime < highWater (when a store is configured).
		highWater int64
		// persisting is closed when the background write of the mark in
		// flight finishes; nil when none is.
		persisting chan struct{}
	}
}

// ErrPersist wraps a failure to persist the high-water mark. Now and Update
// return it without advancing the clock past the mark on disk.
var ErrPersist = errors.New("hlc: cannot persist the clock's high-water mark")

// OffsetError reports a remote timestamp further ahead of the local physical
// clock than Config.MaxOffset allows: either the remote or the local clock is
// wrong, and taking the timestamp would push every later timestamp here out
// of line with real time.
type OffsetError struct {
	Remote    Timestamp
	Physical  int64
	MaxOffset time.Duration
}

func (e *OffsetError) Error() string {
	return fmt.Sprintf("hlc: remote timestamp %s is %s ahead of the local clock (maximum offset %s)",
		e.Remote, time.Duration(e.Remote.WallTime-e.Physical), e.MaxOffset)
}

// NewClock returns a clock that starts after every timestamp a previous
// clock on the same Store handed out.
func NewClock(cfg Config) (*Clock, error) {
	c := &Clock{
		physical:     cfg.Physical,
		maxOffset:    cfg.MaxOffset,
		store:        cfg.Store,
		persistAhead: int64(cfg.PersistAhead),
	}
	if c.physical == nil {
		c.physical = func() int64 { return time.Now().UnixNano() }
	}
	if c.persistAhead <= 0 {
		c.persistAhead = int64(DefaultPersistAhead)
	}
	if c.store != nil {
		hw, err := c.store.Load()
		if err != nil {
			return nil, fmt.Errorf("hlc: load high-water mark: %w", err)
		}
		// Every earlier timestamp had WallTime < hw, so starting at (hw, 0)
		// makes the next one later than all of them.
		c.mu.last = Timestamp{WallTime: hw}
		c.mu.highWater = hw
	}
	return c, nil
}

// Now returns a timestamp later than every timestamp this clock returned or
// was updated with before (also before a restart, with a Store). It fails
// only when the high-water mark cannot be persisted (ErrPersist).
func (c *Clock) Now() (Timestamp, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		next := c.mu.last.Next()
		if phys := c.physical(); phys > next.WallTime {
			next = Timestamp{WallTime: phys}
		}
		waited, err := c.ensurePersistedLocked(next.WallTime)
		if err != nil {
			return Timestamp{}, err
		}
		if waited {
			continue // others may have moved the clock meanwhile
		}
		c.mu.last = next
		return next, nil
	}
}

// Update folds in a timestamp received from another node (design §12), so
// that every later Now is after it. It refuses (OffsetError) a timestamp
// more than MaxOffset ahead of the local physical clock.
func (c *Clock) Update(remote Timestamp) error {
	phys := c.physical()
	if c.maxOffset > 0 && remote.WallTime-phys > int64(c.maxOffset) {
		return &OffsetError{Remote: remote, Physical: phys, MaxOffset: c.maxOffset}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if !c.mu.last.Less(remote) {
			return nil
		}
		waited, err := c.ensurePersistedLocked(remote.WallTime)
		if err != nil {
			return err
		}
		if !waited {
			c.mu.last = remote
			return nil
		}
	}
}

// Last returns the newest timestamp handed out or learnt, without advancing
// the clock (for introspection and tests).
func (c *Clock) Last() Timestamp {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.last
}

// PhysicalNow returns the physical clock's reading, for computing times
// relative to now such as AS OF SYSTEM TIME '-10s' and GC thresholds.
func (c *Clock) PhysicalNow() int64 { return c.physical() }

// MaxOffset returns the configured maximum clock offset (0: unchecked).
func (c *Clock) MaxOffset() time.Duration { return c.maxOffset }

// ensurePersistedLocked makes sure the persisted high-water mark is above
// wall before a timestamp with that wall time is handed out. Past half of
// the margin it starts moving the mark in the background; at the mark it
// writes the mark itself, or waits for the background write — releasing
// the lock, so it then returns waited and the caller starts over, since
// other callers may have moved the clock meanwhile.
func (c *Clock) ensurePersistedLocked(wall int64) (waited bool, err error) {
	if c.store == nil {
		return false, nil
	}
	if wall >= c.mu.highWater {
		if done := c.mu.persisting; done != nil {
			c.mu.Unlock()
			<-done
			c.mu.Lock()
			return true, nil
		}
		hw := wall + c.persistAhead
		if err := c.store.Store(hw); err != nil {
			return false, fmt.Errorf("%w: %w", ErrPersist, err)
		}
		c.mu.highWater = hw
		return false, nil
	}
	if c.mu.persisting == nil && wall >= c.mu.highWater-c.persistAhead/2 {
		done := make(chan struct{})
		c.mu.persisting = done
		hw := wall + c.persistAhead
		go func() {
			// A failure is left to the synchronous write at the mark,
			// which reports it to its caller.
			err := c.store.Store(hw)
			c.mu.Lock()
			if err == nil && hw > c.mu.highWater {
				c.mu.highWater = hw
			}
			c.mu.persisting = nil
			c.mu.Unlock()
			close(done)
		}()
	}
	return false, nil
}

// Close waits for a background write of the high-water mark in flight, so
// that nothing writes the store after it returns. The clock stays usable.
func (c *Clock) Close() {
	c.mu.Lock()
	done := c.mu.persisting
	c.mu.Unlock()
	if done != nil {
		<-done
	}
}
