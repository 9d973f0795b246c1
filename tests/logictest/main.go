package logictest

import (
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Main is the "logictest" command:
//
//	logictest [flags] FILE|DIR...
//
// Directories are searched for *.test files (in lexical order). Flags may
// come before or after the files. For each file it prints
// "FILE: N passed, N failed, N skipped" to stdout, then
// "total: N passed, N failed, N skipped". Notes (known failures, fixed
// records, file-level errors) go to stderr. The exit status is 0 when
// nothing failed, 1 when a record failed or a file could not be run, and 2
// for bad usage.
func Main(args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("logictest", flag.ContinueOnError)
	fset.SetOutput(stderr)
	var (
		opts      Options
		knownFile string
		writeFile string
	)
	fset.StringVar(&opts.Addr, "addr", "127.0.0.1:5433", "server `HOST:PORT`")
	fset.StringVar(&opts.User, "user", "pivotdb", "user name")
	fset.StringVar(&opts.Database, "database", "pivotdb", "database name")
	fset.StringVar(&opts.Password, "password", "", "password (default: $PGPASSWORD or ~/.pgpass)")
	fset.StringVar(&opts.SSLMode, "sslmode", "", "libpq sslmode (default: prefer)")
	fset.StringVar(&opts.Engine, "engine", "pivotdb", "engine name for skipif/onlyif")
	fset.BoolVar(&opts.Verbose, "v", false, "print each failing record with expected and actual results")
	fset.StringVar(&knownFile, "known-failures", "", "`FILE` listing known failures, one FILE:LINE [REASON] per line")
	fset.BoolVar(&opts.RunKnownFailures, "run-known-failures", false, "run listed known failures too and report the fixed ones")
	fset.StringVar(&writeFile, "write-failures", "", "write this run's failures (plus unfixed known ones) to `FILE` in --known-failures format")
	fset.DurationVar(&opts.FileTimeout, "timeout", 30*time.Minute, "time limit per file (0: none)")
	fset.DurationVar(&opts.RecordTimeout, "record-timeout", 0, "time limit per statement or query (0: none)")
	times := fset.Bool("times", false, "print each file's run time to stderr")
	fset.BoolVar(&opts.FreshDatabase, "fresh-db", false, "run each file in a database created for it (and dropped after)")
	fset.Usage = func() {
		fmt.Fprintln(stderr, "usage: logictest [flags] FILE|DIR...")
		fset.PrintDefaults()
	}

	// Accept flags after file names too.
	var paths []string
	rest := args
	for {
		if err := fset.Parse(rest); err != nil {
			if err == flag.ErrHelp {
				return 0
			}
			return 2
		}
		rest = fset.Args()
		if len(rest) == 0 {
			break
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			paths = append(paths, rest...)
			break
		}
		paths = append(paths, rest[0])
		rest = rest[1:]
	}
	if len(paths) == 0 {
		fmt.Fprintln(stderr, "logictest: no test files")
		fset.Usage()
		return 2
	}
	if pw := os.Getenv("PIVOTDB_PASSWORD"); opts.Password == "" && pw != "" {
		opts.Password = pw
	}
	if knownFile != "" {
		f, err := os.Open(knownFile)
		if err != nil {
			fmt.Fprintln(stderr, "logictest:", err)
			return 2
		}
		opts.KnownFailures, err = ParseKnownFailures(f)
		f.Close()
		if err != nil {
			fmt.Fprintf(stderr, "logictest: %s: %v\n", knownFile, err)
			return 2
		}
	}
	files, err := expandPaths(paths)
	if err != nil {
		fmt.Fprintln(stderr, "logictest:", err)
		return 2
	}
	opts.Out = stdout

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	var results []FileResult
	var total FileResult
	status := 0
	for _, file := range files {
		if ctx.Err() != nil {
			status = 1
			fmt.Fprintln(stderr, "logictest: interrupted")
			break
		}
		fr := RunFile(ctx, opts, file)
		results = append(results, fr)
		fmt.Fprintln(stdout, fr.Summary())
		if *times {
			fmt.Fprintf(stderr, "%s: ran in %v\n", fr.File, fr.Elapsed.Round(time.Millisecond))
		}
		if fr.Err != nil {
			fmt.Fprintf(stderr, "%s: error: %v\n", fr.File, fr.Err)
		}
		if fr.Halted {
			fmt.Fprintf(stderr, "%s: halted\n", fr.File)
		}
		if fr.Known > 0 || fr.Fixed > 0 {
			fmt.Fprintf(stderr, "%s: %d known failures (counted as skipped), %d fixed\n", fr.File, fr.Known, fr.Fixed)
			for _, l := range fr.FixedLines {
				fmt.Fprintf(stderr, "%s:%d: known failure now passes\n", fr.File, l)
			}
		}
		total.Passed += fr.Passed
		total.Failed += fr.Failed
		total.Skipped += fr.Skipped
		if !fr.OK() {
			status = 1
		}
	}
	total.File = "total"
	fmt.Fprintln(stdout, total.Summary())

	if writeFile != "" {
		f, err := os.Create(writeFile)
		if err == nil {
			err = WriteKnownFailures(f, results)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintln(stderr, "logictest:", err)
			status = 1
		}
	}
	return status
}

// expandPaths replaces each directory by the *.test files under it.
func expandPaths(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(d.Name(), ".test") {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		sort.Strings(found)
		files = append(files, found...)
	}
	return files, nil
}
