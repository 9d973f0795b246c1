package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// defaultPGOWorkloads are the workloads `make pgo` profiles, each at the
// client count where its bench row matters most: the reads and writes
// issue 23 measures (point SELECT, UPSERT, range scan, IN-list, mixed).
// The bulk load and the analytical rows are left out: their hot code
// (COPY, the executor's operators) would crowd out the per-statement
// paths, where inlining pays most.
const defaultPGOWorkloads = "point SELECT@16;single-row UPSERT@16;1,000-row range scan@4;IN-list of 100 keys@4;mixed 80/20 read/write@16"

// runPGO profiles PivotDB running each of specs (WORKLOAD@CLIENTS, ';'
// separated) for seconds each and merges the profiles into out with `go
// tool pprof -proto`: the profile go build uses for profile-guided
// optimisation when it is the main package's default.pgo. Re-run it (make
// pgo) when the hot paths change; a stale profile only optimises less.
func runPGO(ctx context.Context, pivot *instance, debugAddr, specs, out string, seconds, rows int) error {
	dir, err := os.MkdirTemp("", "pivotdb-pgo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var parts []string
	for i, spec := range strings.Split(specs, ";") {
		spec = strings.TrimSpace(spec)
		if spec == "" {
			continue
		}
		part := filepath.Join(dir, fmt.Sprintf("%d.pprof", i))
		if err := runProfile(ctx, pivot, debugAddr, spec, rows, part, seconds); err != nil {
			return err
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return fmt.Errorf("--pgo: no workloads in %q", specs)
	}
	merged, err := exec.Command("go", append([]string{"tool", "pprof", "-proto"}, parts...)...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return fmt.Errorf("go tool pprof -proto: %v: %s", err, ee.Stderr)
		}
		return fmt.Errorf("go tool pprof -proto: %v", err)
	}
	if err := os.WriteFile(out, merged, 0o644); err != nil {
		return err
	}
	progress("wrote %s: %d workloads merged, %d bytes", out, len(parts), len(merged))
	return nil
}
