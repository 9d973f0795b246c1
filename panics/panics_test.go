package panics

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
)

func TestRecover(t *testing.T) {
	before := Count()
	var err error
	func() {
		defer Recover("test job", &err)
		var m map[string]int
		m["x"] = 1 // a runtime error, as real bugs are
	}()
	var e *Error
	if !errors.As(err, &e) || e.Where != "test job" || !strings.Contains(string(e.Stack), "TestRecover") {
		t.Fatalf("got %v", err)
	}
	if !strings.HasPrefix(err.Error(), "internal error: panic in test job: assignment to entry in nil map") {
		t.Fatalf("message %q", err.Error())
	}
	if Count() != before+1 {
		t.Fatalf("count %d, want %d", Count(), before+1)
	}
	// No panic: err untouched.
	err = nil
	func() { defer Recover("quiet", &err) }()
	if err != nil || Count() != before+1 {
		t.Fatalf("a quiet function: %v, count %d", err, Count())
	}
}

func TestGo(t *testing.T) {
	before := Count()
	var wg sync.WaitGroup
	wg.Add(1)
	Go("test goroutine", func() {
		defer wg.Done()
		panic("boom")
	})
	wg.Wait()
	// The deferred Done runs before Recover, so wait for the count.
	for Count() != before+1 {
		runtime.Gosched()
	}
}

func TestInject(t *testing.T) {
	Inject("p") // unarmed: nothing
	disarm := Arm("p", 2)
	defer disarm()
	for i := range 3 {
		var err error
		func() {
			defer Recover("inject", &err)
			Inject("p")
		}()
		if (err != nil) != (i < 2) {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if armedAny.Load() != 0 {
		t.Fatal("point still armed")
	}
}

// TestCrash runs itself in a child process, where a panic through Crash
// must end the process with status 2 even though an outer Recover waits.
func TestCrash(t *testing.T) {
	if os.Getenv("PANICS_CRASH_CHILD") == "1" {
		var err error
		func() {
			defer Recover("outer", &err)
			defer Crash("critical section")
			panic("corrupting bug")
		}()
		os.Exit(0) // Not reached.
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestCrash$")
	cmd.Env = append(os.Environ(), "PANICS_CRASH_CHILD=1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "panic in critical section") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
