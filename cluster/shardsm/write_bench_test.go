package shardsm

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage"
)

// BenchmarkApplyWrite applies single-row Writes (a new version of one of
// 10,000 rows, as a single-row UPSERT commits) to a store that recounts
// the touched row keys before and after, and to one in local-lock mode (a
// cluster node's), which counts the change in one read
// (mvcc.VersionStatsDelta) into an unindexed batch.
func BenchmarkApplyWrite(b *testing.B) {
	const rows = 10000
	for _, localLocks := range []bool{false, true} {
		b.Run(fmt.Sprintf("localLocks=%v", localLocks), func(b *testing.B) {
			s := openTestStore(b)
			if localLocks {
				s.SetLocalLocks()
			}
			a := &applier{t: b, m: s.NewStateMachine(1, 1)}
			if _, err := a.m.Open(nil); err != nil {
				b.Fatal(err)
			}
			if err := a.apply(mustEncode(b, Init{Descriptor: Descriptor{Span: tableSpan, Generation: 1}})); err != nil {
				b.Fatal(err)
			}
			at := int64(1)
			for i := 0; i < rows; i += 100 {
				ms := make([]storage.Mutation, 0, 100)
				for j := i; j < i+100; j++ {
					ms = append(ms, version(fmt.Sprintf("r%05d", j), at, "initial"))
				}
				if err := a.apply(encodeWrite(b, 1, ms...)); err != nil {
					b.Fatal(err)
				}
			}
			cmds := make([][]byte, 1000)
			var cpu cpuTimer
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i%len(cmds) == 0 {
					b.StopTimer()
					cpu.stop(b)
					for j := range cmds {
						at++
						cmds[j] = encodeWrite(b, 1, version(fmt.Sprintf("r%05d", (i+j)*7919%rows), at, "upserted"))
					}
					cpu.start(b)
					b.StartTimer()
				}
				if err := a.apply(cmds[i%len(cmds)]); err != nil {
					b.Fatal(err)
				}
			}
			cpu.stop(b)
			cpu.report(b)
		})
	}
}

// BenchmarkApplyWriteRuns is BenchmarkApplyWrite's local-lock case with
// the Writes handed to Apply in slices of n, as dragonboat hands a replica
// what committed since its last Update: with n > 1 they share one Pebble
// batch and one write of the state keys (applyrun.go). Per Write.
func BenchmarkApplyWriteRuns(b *testing.B) {
	const rows = 10000
	for _, n := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			s := openTestStore(b)
			s.SetLocalLocks()
			a := &applier{t: b, m: s.NewStateMachine(1, 1)}
			if _, err := a.m.Open(nil); err != nil {
				b.Fatal(err)
			}
			if err := a.apply(mustEncode(b, Init{Descriptor: Descriptor{Span: tableSpan, Generation: 1}})); err != nil {
				b.Fatal(err)
			}
			at := int64(1)
			for i := 0; i < rows; i += 100 {
				ms := make([]storage.Mutation, 0, 100)
				for j := i; j < i+100; j++ {
					ms = append(ms, version(fmt.Sprintf("r%05d", j), at, "initial"))
				}
				if err := a.apply(encodeWrite(b, 1, ms...)); err != nil {
					b.Fatal(err)
				}
			}
			cmds := make([][]byte, 1024)
			entries := make([]raft.Entry, n)
			var cpu cpuTimer
			b.ResetTimer()
			for i := 0; i < b.N; i += n {
				if i%len(cmds) < n {
					b.StopTimer()
					cpu.stop(b)
					for j := range cmds {
						at++
						cmds[j] = encodeWrite(b, 1, version(fmt.Sprintf("r%05d", (i+j)*7919%rows), at, "upserted"))
					}
					cpu.start(b)
					b.StartTimer()
				}
				for j := range entries {
					a.index++
					entries[j] = raft.Entry{Index: a.index, Cmd: cmds[(i+j)%len(cmds)]}
				}
				if err := a.m.Apply(entries); err != nil {
					b.Fatal(err)
				}
			}
			cpu.stop(b)
			cpu.report(b)
		})
	}
}

// cpuTimer adds up the CPU time (user and system, every thread of the
// process: Pebble's background work too) between start and stop, and
// reports it per operation as cpu-ns/op: on a shared machine the wall
// time per operation mostly measures the other load.
type cpuTimer struct {
	total   time.Duration
	started time.Duration
	running bool
}

func processCPUTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func (c *cpuTimer) start(b *testing.B) {
	c.started, c.running = processCPUTime(b), true
}

func (c *cpuTimer) stop(b *testing.B) {
	if c.running {
		c.total += processCPUTime(b) - c.started
		c.running = false
	}
}

func (c *cpuTimer) report(b *testing.B) {
	b.ReportMetric(float64(c.total.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// BenchmarkApplyWriteHinted is BenchmarkApplyWriteRuns with entries=1 and
// entries=16 for Writes that carry their stats change (statshint.go), as a
// cluster node proposes them: a follower takes the change and reads
// nothing. The proposer's read (AddStatsHint) is not timed: it is the
// serving node's, once per commit. hinted/op says how many were taken.
func BenchmarkApplyWriteHinted(b *testing.B) {
	const rows = 10000
	for _, n := range []int{1, 16} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			s := openTestStore(b)
			s.SetLocalLocks()
			a := &applier{t: b, m: s.NewStateMachine(1, 1)}
			if _, err := a.m.Open(nil); err != nil {
				b.Fatal(err)
			}
			if err := a.apply(mustEncode(b, Init{Descriptor: Descriptor{Span: tableSpan, Generation: 1}})); err != nil {
				b.Fatal(err)
			}
			at := int64(1)
			for i := 0; i < rows; i += 100 {
				ms := make([]storage.Mutation, 0, 100)
				for j := i; j < i+100; j++ {
					ms = append(ms, version(fmt.Sprintf("r%05d", j), at, "initial"))
				}
				if err := a.apply(encodeWrite(b, 1, ms...)); err != nil {
					b.Fatal(err)
				}
			}
			// 128 commands read at one base: fewer than a replica
			// remembers, and of different keys, so each is taken.
			cmds := make([][]byte, 128)
			entries := make([]raft.Entry, n)
			var cpu cpuTimer
			b.ResetTimer()
			for i := 0; i < b.N; i += n {
				if i%len(cmds) < n {
					b.StopTimer()
					cpu.stop(b)
					for j := range cmds {
						at++
						w := Write{Generation: 1, Timestamp: ts(at),
							Mutations: []storage.Mutation{version(fmt.Sprintf("r%05d", (i+j)*7919%rows), at, "upserted")}}
						if err := AddStatsHint(s.DB(), 1, &w); err != nil {
							b.Fatal(err)
						}
						var err error
						if cmds[j], err = EncodeWrite(w); err != nil {
							b.Fatal(err)
						}
					}
					cpu.start(b)
					b.StartTimer()
				}
				for j := range entries {
					a.index++
					entries[j] = raft.Entry{Index: a.index, Cmd: cmds[(i+j)%len(cmds)]}
				}
				if err := a.m.Apply(entries); err != nil {
					b.Fatal(err)
				}
			}
			cpu.stop(b)
			cpu.report(b)
			b.ReportMetric(float64(s.Stats().HintedWrites)/float64(b.N), "hinted/op")
		})
	}
}

// BenchmarkAddStatsHint is the proposing node's read of a single-row
// Write's stats change (statshint.go) on a store of 10,000 rows.
func BenchmarkAddStatsHint(b *testing.B) {
	const rows = 10000
	s := openTestStore(b)
	s.SetLocalLocks()
	a := &applier{t: b, m: s.NewStateMachine(1, 1)}
	if _, err := a.m.Open(nil); err != nil {
		b.Fatal(err)
	}
	if err := a.apply(mustEncode(b, Init{Descriptor: Descriptor{Span: tableSpan, Generation: 1}})); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < rows; i += 100 {
		ms := make([]storage.Mutation, 0, 100)
		for j := i; j < i+100; j++ {
			ms = append(ms, version(fmt.Sprintf("r%05d", j), 1, "initial"))
		}
		if err := a.apply(encodeWrite(b, 1, ms...)); err != nil {
			b.Fatal(err)
		}
	}
	ws := make([]Write, 1000)
	for i := range ws {
		ws[i] = Write{Generation: 1, Timestamp: ts(2),
			Mutations: []storage.Mutation{version(fmt.Sprintf("r%05d", i*7919%rows), 2, "upserted")}}
	}
	var cpu cpuTimer
	b.ResetTimer()
	cpu.start(b)
	for i := 0; i < b.N; i++ {
		w := &ws[i%len(ws)]
		if err := AddStatsHint(s.DB(), 1, w); err != nil || w.Stats == nil {
			b.Fatal(err, w.Stats)
		}
	}
	cpu.stop(b)
	cpu.report(b)
}
