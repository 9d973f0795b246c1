package logictest

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// KnownFailures lists records that are expected to fail: file → record line
// → reason. The file key is matched against the path a file was given as
// (cleaned, with "/" separators), so it may be the full path, the base name
// ("select1.test"), or any trailing run of path elements
// ("index/in/slt_good_5.test"). The line is the line of the record's
// "statement"/"query" line — the line failures are reported at.
type KnownFailures map[string]map[int]string

// Add lists the record at line of file with a reason.
func (k KnownFailures) Add(file string, line int, reason string) {
	file = filepath.ToSlash(filepath.Clean(file))
	m := k[file]
	if m == nil {
		m = make(map[int]string)
		k[file] = m
	}
	m[line] = reason
}

// Lookup reports whether the record at line of path is listed, and why.
func (k KnownFailures) Lookup(path string, line int) (reason string, ok bool) {
	if len(k) == 0 {
		return "", false
	}
	p := filepath.ToSlash(filepath.Clean(path))
	for {
		if m, found := k[p]; found {
			if r, listed := m[line]; listed {
				return r, true
			}
		}
		i := strings.IndexByte(p, '/')
		if i < 0 {
			return "", false
		}
		p = p[i+1:]
	}
}

// ParseKnownFailures reads a known-failures list. Each non-blank line that
// does not start with "#" is
//
//	FILE:LINE [REASON...]
//
// for example "select1.test:1234 CASE without ELSE". FILE is matched as
// described at KnownFailures. The format is what WriteKnownFailures writes,
// and FILE:LINE is how failures are reported, so a run's failures can be
// turned into a list.
func ParseKnownFailures(r io.Reader) (KnownFailures, error) {
	k := KnownFailures{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		loc, reason, _ := strings.Cut(line, " ")
		if i := strings.IndexByte(loc, '\t'); i >= 0 {
			loc, reason = loc[:i], loc[i+1:]+" "+reason
		}
		reason = strings.TrimSpace(reason)
		i := strings.LastIndexByte(loc, ':')
		if i <= 0 {
			return nil, fmt.Errorf("known failures line %d: want FILE:LINE [REASON], got %q", n, line)
		}
		num, err := strconv.Atoi(loc[i+1:])
		if err != nil || num <= 0 {
			return nil, fmt.Errorf("known failures line %d: bad line number in %q", n, loc)
		}
		k.Add(loc[:i], num, reason)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return k, nil
}

// WriteKnownFailures writes the failures of results together with the
// listed known failures that did not pass (FileResult.KnownFailures: not run,
// or run and still failing) in the format ParseKnownFailures reads, sorted by
// file and line: a new list for the next run, without the fixed records.
func WriteKnownFailures(w io.Writer, results []FileResult) error {
	var all []Failure
	for _, fr := range results {
		for _, f := range fr.Failures {
			if f.Line > 0 {
				all = append(all, f)
			}
		}
		for _, f := range fr.KnownFailures {
			if f.Line > 0 {
				all = append(all, f)
			}
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].File != all[j].File {
			return all[i].File < all[j].File
		}
		return all[i].Line < all[j].Line
	})
	bw := bufio.NewWriter(w)
	for _, f := range all {
		msg := strings.Join(strings.Fields(f.Message), " ")
		if len(msg) > 200 {
			msg = msg[:200]
		}
		fmt.Fprintf(bw, "%s:%d %s\n", filepath.ToSlash(f.File), f.Line, msg)
	}
	return bw.Flush()
}
