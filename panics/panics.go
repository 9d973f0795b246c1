package panics

import (
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// Error is a recovered panic.
type Error struct {
	// Where names the goroutine or job that panicked.
	Where string
	// Value is what was passed to panic.
	Value any
	// Stack is the panicking goroutine's stack.
	Stack []byte
}

func (e *Error) Error() string {
	return fmt.Sprintf("internal error: panic in %s: %v", e.Where, e.Value)
}

var (
	count  atomic.Uint64
	logger atomic.Pointer[slog.Logger]
)

// SetLogger sets where recovered panics are logged.
func SetLogger(l *slog.Logger) { logger.Store(l) }

func log() *slog.Logger {
	if l := logger.Load(); l != nil {
		return l
	}
	return slog.Default()
}

// Count returns the number of panics recovered since the process started.
func Count() uint64 { return count.Load() }

// Recover, deferred directly (defer panics.Recover("where", &err)), recovers
// a panic of the calling goroutine, logs it with its stack, counts it and
// stores it as an *Error in *err (err may be nil).
func Recover(where string, err *error) {
	r := recover()
	if r == nil {
		return
	}
	e := &Error{Where: where, Value: r, Stack: debug.Stack()}
	count.Add(1)
	log().Error("recovered panic", "where", where, "panic", fmt.Sprint(r), "stack", string(e.Stack))
	if err != nil {
		*err = e
	}
}

// Go runs fn on a new goroutine under Recover; a panic is logged and
// counted, and fn's goroutine ends.
func Go(where string, fn func()) {
	go func() {
		defer Recover(where, nil)
		fn()
	}()
}

// exit ends the process; tests of Crash run it in a child process.
var exit = os.Exit

// Crash, deferred directly at the start of a section where continuing
// after a panic could corrupt data, logs the panic with its stack and ends
// the process with exit status 2 (Go's own status for an unrecovered
// panic). Sections deferring it are listed in the package comment.
func Crash(where string) {
	r := recover()
	if r == nil {
		return
	}
	stack := debug.Stack()
	log().Error("panic in a critical section; stopping the server so that recovery can restore a consistent state",
		"where", where, "panic", fmt.Sprint(r), "stack", string(stack))
	fmt.Fprintf(os.Stderr, "panic in %s (critical section, not recovered): %v\n%s", where, r, stack)
	exit(2)
}

var (
	armedAny atomic.Int32 // number of armed points; 0 skips the map
	armedMu  sync.Mutex
	armed    = map[string]int{}
)

// Inject panics at point when a test armed it (Arm).
func Inject(point string) {
	if armedAny.Load() == 0 {
		return
	}
	armedMu.Lock()
	n := armed[point]
	if n > 0 {
		armed[point] = n - 1
		if n == 1 {
			delete(armed, point)
			armedAny.Add(-1)
		}
	}
	armedMu.Unlock()
	if n > 0 {
		panic(fmt.Sprintf("injected panic at %s", point))
	}
}

// Arm makes the next times calls of Inject(point) panic. disarm undoes
// what is left of it. For tests only.
func Arm(point string, times int) (disarm func()) {
	armedMu.Lock()
	if _, ok := armed[point]; !ok {
		armedAny.Add(1)
	}
	armed[point] = times
	armedMu.Unlock()
	return func() {
		armedMu.Lock()
		if _, ok := armed[point]; ok {
			delete(armed, point)
			armedAny.Add(-1)
		}
		armedMu.Unlock()
	}
}
