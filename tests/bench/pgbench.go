package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// runPgbench runs a custom pgbench script (-n -M prepared) against in and
// measures it: throughput from pgbench's own report, latencies from its
// per-transaction log (-l), so both servers are timed by the same client.
func runPgbench(in *instance, script string, clients, rows int, d time.Duration) (measurement, error) {
	dir, err := os.MkdirTemp("", "pgbench")
	if err != nil {
		return measurement{}, err
	}
	defer os.RemoveAll(dir)
	scriptFile := filepath.Join(dir, "script.sql")
	if err := os.WriteFile(scriptFile, []byte(script), 0o644); err != nil {
		return measurement{}, err
	}
	secs := max(1, int(d.Round(time.Second)/time.Second))
	// One thread per client up to the core count: more threads only add
	// context switches on this 2-core machine.
	threads := min(clients, 2)
	cmd := exec.Command("pgbench", "-n", "-M", "prepared", "-f", scriptFile,
		"-c", strconv.Itoa(clients), "-j", strconv.Itoa(threads), "-T", strconv.Itoa(secs),
		"-D", "rows="+strconv.Itoa(rows),
		"-l", "--log-prefix", filepath.Join(dir, "log"),
		"-h", in.host(), "-p", in.port(), "-U", in.user, in.db)
	cmd.Env = append(os.Environ(), "PGSSLMODE=disable")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return measurement{}, fmt.Errorf("pgbench against %s: %v\n%s", in.name, err, out)
	}
	var m measurement
	for _, line := range strings.Split(string(out), "\n") {
		// "tps = 1234.567890 (without initial connection time)"
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "tps = "); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				m.ops, _ = strconv.ParseFloat(f[0], 64)
			}
		}
		if strings.Contains(line, "number of failed transactions") && !strings.Contains(line, ": 0 (") {
			return measurement{}, fmt.Errorf("pgbench against %s: %s", in.name, strings.TrimSpace(line))
		}
	}
	if m.ops == 0 {
		return measurement{}, fmt.Errorf("pgbench against %s printed no tps:\n%s", in.name, out)
	}
	lat, err := pgbenchLatencies(dir)
	if err != nil {
		return measurement{}, err
	}
	s := summarize(lat, time.Second)
	m.p50, m.p99 = s.p50, s.p99
	return m, nil
}

// pgbenchLatencies reads every per-transaction log in dir. A line is
// "client_id transaction_no time script_no time_epoch time_us", with time the
// transaction's latency in microseconds.
func pgbenchLatencies(dir string) ([]time.Duration, error) {
	files, err := filepath.Glob(filepath.Join(dir, "log.*"))
	if err != nil {
		return nil, err
	}
	var lat []time.Duration
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 3 {
				continue
			}
			us, err := strconv.ParseInt(fields[2], 10, 64)
			if err != nil {
				continue // "skipped" / "failed" markers
			}
			lat = append(lat, time.Duration(us)*time.Microsecond)
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	if len(lat) == 0 {
		return nil, fmt.Errorf("pgbench wrote no transaction log in %s", dir)
	}
	return lat, nil
}
