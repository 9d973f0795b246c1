package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/pivotdb/pivotdb/storage"
)

// runRawPebble measures synced single-row commits straight into the storage
// engine PivotDB uses (same Pebble options, same sync setting), from
// `writers` goroutines: the physical limit that single-row UPSERT throughput
// can approach. Rows are the size of the UPSERT workload's rows.
func runRawPebble(writers int, d time.Duration) (measurement, error) {
	dir, err := os.MkdirTemp("", "pebble-bench")
	if err != nil {
		return measurement{}, err
	}
	defer os.RemoveAll(dir)
	eng, err := storage.Open(dir, storage.Options{})
	if err != nil {
		return measurement{}, err
	}
	defer eng.Close()

	var mu sync.Mutex
	var lat []time.Duration
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	val := []byte(value(0))
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			key := make([]byte, 16)
			local := make([]time.Duration, 0, 4096)
			var err error
			for i := 0; err == nil && time.Now().Before(deadline); i++ {
				binary.BigEndian.PutUint64(key, uint64(w))
				binary.BigEndian.PutUint64(key[8:], uint64(i))
				t := time.Now()
				b := eng.NewBatch()
				if err = b.Set(key, val); err == nil {
					err = b.Commit()
				}
				b.Close()
				local = append(local, time.Since(t))
			}
			mu.Lock()
			lat = append(lat, local...)
			if err != nil && firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	if firstErr != nil {
		return measurement{}, fmt.Errorf("raw Pebble writes: %w", firstErr)
	}
	return summarize(lat, time.Since(start)), nil
}
