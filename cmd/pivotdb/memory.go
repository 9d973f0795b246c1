package main

import (
	"bufio"
	"os"
	"runtime/debug"
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

// storageHeadroom is what the process needs beside statements: Pebble's
// block cache and memtables (storage.DefaultCacheSizeBytes and two
// DefaultMemTableSizeBytes), the catalog, goroutines and the runtime.
const storageHeadroom = 256 << 20

// setMemoryLimit makes the Go garbage collector hold the heap near
// --max-memory plus storageHeadroom (runtime/debug.SetMemoryLimit), so
// that the heap statements leave behind is collected before the process
// grows past that instead of at twice the live heap (GOGC's default).
// Reservations keep the live heap of statements within --max-memory; this
// keeps the garbage around them small. A GOMEMLIMIT set by the operator
// wins; --max-memory 0 sets nothing.
func setMemoryLimit(maxMem int64) {
	if maxMem <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(maxMem + storageHeadroom)
}
