package node

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// The clock-shift testing knob. Tests of the clock offset bound need nodes
// whose clocks disagree, on one machine: TESTING ONLY, never set in
// production. The process reads two environment variables once, at start:
//
//	PIVOTDB_TESTING_CLOCK_SHIFT=1.5s        a fixed shift (a Go duration,
//	                                         may be negative)
//	PIVOTDB_TESTING_CLOCK_SHIFT_FILE=PATH   a file holding the shift, read
//	                                         again every 100 ms, so a test
//	                                         can move the clock while the
//	                                         node runs
//
// The shift moves the wall clock the process's HLC (storage.Options.
// Physical) and its pings (Config.Physical) read, not the operating
// system's; timers, leases and timeouts keep the monotonic clock. A file
// that cannot be read or parsed keeps the last shift (a test writing it
// may be caught half-way). The server logs a warning naming the knob when
// either is set.

// Environment variables of the clock-shift testing knob.
const (
	TestingClockShiftEnv     = "PIVOTDB_TESTING_CLOCK_SHIFT"
	TestingClockShiftFileEnv = "PIVOTDB_TESTING_CLOCK_SHIFT_FILE"
)

// clockShiftPoll is how often the shift file is read again.
const clockShiftPoll = 100 * time.Millisecond

// TestingClockFromEnv returns the wall clock the process should use (ns
// since the Unix epoch) and, when the testing knob is set, a description
// of it for a warning ("" when unset). The file's poller runs until ctx
// ends. A malformed value is an error.
func TestingClockFromEnv(ctx context.Context) (physical func() int64, knob string, err error) {
	fixed, path := os.Getenv(TestingClockShiftEnv), os.Getenv(TestingClockShiftFileEnv)
	if fixed == "" && path == "" {
		return func() int64 { return time.Now().UnixNano() }, "", nil
	}
	var shift atomic.Int64
	if fixed != "" {
		d, err := time.ParseDuration(strings.TrimSpace(fixed))
		if err != nil {
			return nil, "", fmt.Errorf("%s=%q: %w", TestingClockShiftEnv, fixed, err)
		}
		shift.Store(int64(d))
		knob = fmt.Sprintf("%s=%s", TestingClockShiftEnv, d)
	}
	if path != "" {
		if fixed != "" {
			return nil, "", fmt.Errorf("%s and %s are both set: give one", TestingClockShiftEnv, TestingClockShiftFileEnv)
		}
		d, err := readClockShift(path)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", TestingClockShiftFileEnv, err)
		}
		shift.Store(int64(d))
		knob = fmt.Sprintf("%s=%s (now %s)", TestingClockShiftFileEnv, path, d)
		go func() {
			t := time.NewTicker(clockShiftPoll)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					if d, err := readClockShift(path); err == nil {
						shift.Store(int64(d))
					}
				}
			}
		}()
	}
	return func() int64 { return time.Now().UnixNano() + shift.Load() }, knob, nil
}

func readClockShift(path string) (time.Duration, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	d, err := time.ParseDuration(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}
