//go:build !unix

package rowenc

// processCPU is unavailable here; benchmarks then report 0 CPU time.
func processCPU() int64 { return 0 }
