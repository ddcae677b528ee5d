package cgroups

import (
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// BenchmarkJoinKeptTree is what a launch's joins cost the node supervisor
// when each job's groups are an earlier job's, kept (recycle_v1.go): the
// job's and batch step's groups taken, a thread moved into their targets
// and back, the tree kept again. Reports this process's CPU time per job.
// Needs root and cgroups v1.
func BenchmarkJoinKeptTree(b *testing.B) {
	m, ok := testV1(b).(*v1Manager)
	if !ok {
		b.Skip("v1 only")
	}
	ru := func() time.Duration {
		var r syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r)
		return time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0 := ru()
	for i := 0; b.Loop(); i++ {
		job := "job_" + strconv.Itoa(i)
		jg, err := m.Create(job, Limits{CPUs: "0", MemoryBytes: 256 << 20})
		if err != nil {
			b.Fatal(err)
		}
		sg, err := m.Create(job+"/step_batch", Limits{InParentFreezer: true})
		if err != nil {
			b.Fatal(err)
		}
		dirs, _ := sg.Targets()
		restore, err := EnterThread(dirs)
		if err != nil {
			b.Fatal(err)
		}
		if err := restore(); err != nil {
			b.Fatal(err)
		}
		if !jg.(Recycler).Recycle() {
			_ = sg.Delete()
			_ = jg.Delete()
		}
	}
	b.ReportMetric(float64((ru()-c0).Microseconds())/float64(b.N), "cpu-µs/op")
}
