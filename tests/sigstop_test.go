package tests

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stopProcess sends SIGSTOP to p and returns once the kernel reports the
// process stopped (state T in /proc/<pid>/stat). kill(2) returns before
// every thread of a busy process has stopped, and on a loaded machine a
// thread already on a CPU may still finish a reply; a test that asserts
// "nothing answers after the stop" must start counting only from here.
func stopProcess(t testing.TB, p *clusterProc) {
	t.Helper()
	pid := p.cmd.Process.Pid
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if processState(pid) == 'T' {
			t.Logf("node %s stopped (SIGSTOP) at %s", p.sql, time.Now().UTC().Format("15:04:05.000000"))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s (pid %d) not stopped 10 s after SIGSTOP (state %q)", p.sql, pid, processState(pid))
		}
		time.Sleep(time.Millisecond)
	}
}

// processState returns the state letter of /proc/<pid>/stat (0 if it
// cannot be read, e.g. off Linux).
func processState(pid int) byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return 0
	}
	return s[i+2]
}
