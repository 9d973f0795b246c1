package tests

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stopProcess sends SIGSTOP to p and returns once the kernel reports every
// thread of the process stopped (state T in /proc/<pid>/task/*/stat: the
// group stop reaches the threads one by one, the main thread's state alone
// says little). kill(2) returns before every thread of a busy process has
// stopped, and on a loaded machine a thread already on a CPU may still
// finish a reply; a test that asserts "nothing answers after the stop"
// must start counting only from here.
func stopProcess(t testing.TB, p *clusterProc) {
	t.Helper()
	pid := p.cmd.Process.Pid
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if allThreadsStopped(pid) {
			t.Logf("node %s stopped (SIGSTOP) at %s, %s after kill(2) returned", p.sql, time.Now().UTC().Format("15:04:05.000000"),
				time.Since(sent).Round(time.Microsecond))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s (pid %d) not stopped 10 s after SIGSTOP (state %q)", p.sql, pid, processState(pid))
		}
		time.Sleep(time.Millisecond)
	}
}

// allThreadsStopped reports whether every thread of process pid is in
// state T (false if they cannot be read).
func allThreadsStopped(pid int) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, task := range tasks {
		if statState(dir+"/"+task.Name()+"/stat") != 'T' {
			return false
		}
	}
	return true
}

// processState returns the state letter of /proc/<pid>/stat (0 if it
// cannot be read, e.g. off Linux).
func processState(pid int) byte {
	return statState("/proc/" + strconv.Itoa(pid) + "/stat")
}

// statState returns the state letter of a /proc stat file (0 if it
// cannot be read).
func statState(path string) byte {
	b, err := os.ReadFile(path)
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
