package main

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// defaultMaxMemory is the default --max-memory: a quarter of the
// machine's RAM, as CockroachDB sizes --max-sql-memory, leaving the rest
// to Pebble's caches, the Go runtime's garbage and the operating system.
// Without /proc/meminfo (not Linux) it is 1 GiB.
func defaultMaxMemory() int64 {
	if total := memTotal("/proc/meminfo"); total > 0 {
		return total / 4
	}
	return 1 << 30
}

// memTotal reads MemTotal (in kB) from a meminfo file, in bytes; 0 when
// it cannot.
func memTotal(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
