package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/pivotdb/pivotdb/storage"
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

// storageHeadroom is what the process needs beside statements and the
// block cache (which --max-memory holds, splitMemory): Pebble's memtables
// (two DefaultMemTableSizeBytes), the catalog, goroutines and the runtime.
const storageHeadroom = 256 << 20

// cacheShareOfMaxMemory is the part of --max-memory that the storage
// engine's block cache takes when --cache-size is not given: a quarter.
// Issue 23's growth rows showed why a fixed 64 MiB was wrong: a 10M-row
// table (~274 MB of sstables) read at random missed the cache on most
// point SELECTs (2.57x the cost at 100k rows at 16 clients; 1.19x with
// a 512 MiB cache). With the default --max-memory (a quarter of RAM) this
// is a sixteenth of RAM; under a small --max-memory (the memory tests'
// 256 MiB) it is the old 64 MiB. Statements keep the other three
// quarters, so the cache never pushes the process past --max-memory.
const cacheShareOfMaxMemory = 4

// splitMemory divides --max-memory between the block cache and the
// statements' budget (memory.Monitor). cacheFlag is --cache-size, 0 when
// not given. With --max-memory 0 (no budget) the cache is --cache-size,
// else storage.DefaultCacheSizeBytes, and statements are unlimited. With
// a budget the cache is --cache-size, else a cacheShareOfMaxMemory-th of
// the budget, and statements get the rest; a --cache-size that leaves
// statements nothing is an error rather than a silently larger process.
func splitMemory(maxMem, cacheFlag int64) (cache, statements int64, err error) {
	if maxMem == 0 {
		if cacheFlag == 0 {
			return storage.DefaultCacheSizeBytes, 0, nil
		}
		return cacheFlag, 0, nil
	}
	cache = cacheFlag
	if cache == 0 {
		cache = maxMem / cacheShareOfMaxMemory
	}
	if cache >= maxMem {
		return 0, 0, fmt.Errorf("--cache-size %d must be below --max-memory %d, which holds it", cache, maxMem)
	}
	return cache, maxMem - cache, nil
}

// setMemoryLimit makes the Go garbage collector hold the heap near
// maxMem (the statements' share of --max-memory, splitMemory: the block
// cache lives outside the Go heap, in Pebble's manually allocated memory)
// plus storageHeadroom (runtime/debug.SetMemoryLimit), so
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

// defaultGCPercent is the garbage collector's GOGC while a memory limit
// holds the heap (setGCPercent). A server's live heap is small (the
// catalog, sessions, statements in flight) and most of what a statement
// allocates is garbage by its end, so at GOGC's default of 100 the
// collector runs every few megabytes of statements: 5-9% of a point
// SELECT's CPU in the profiles of issue 23, plus the write barriers and
// assists while it marks. At 400 it runs a quarter as often; the memory
// limit (setMemoryLimit) still makes it collect as the heap nears
// --max-memory plus storageHeadroom, which is what bounds the process, so
// a higher GOGC trades only memory the limit has set aside anyway.
const defaultGCPercent = 400

// gcPercent returns the GOGC to set: defaultGCPercent when the operator
// set no GOGC and a memory limit is in effect (limit below math.MaxInt64,
// Go's "no limit"), else ok is false and the runtime's setting stands.
// Without a limit (--max-memory 0 and no GOMEMLIMIT) a raised GOGC would
// let the heap grow to five times the live heap unchecked.
func gcPercent(gogcEnv string, limit int64) (percent int, ok bool) {
	if gogcEnv != "" || limit >= math.MaxInt64 {
		return 0, false
	}
	return defaultGCPercent, true
}

// setGCPercent raises GOGC as gcPercent says; call it after
// setMemoryLimit.
func setGCPercent() {
	if p, ok := gcPercent(os.Getenv("GOGC"), debug.SetMemoryLimit(-1)); ok {
		debug.SetGCPercent(p)
	}
}
