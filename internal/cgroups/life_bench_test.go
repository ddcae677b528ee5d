package cgroups

import (
	"strconv"
	"syscall"
	"testing"
	"time"
)

// BenchmarkJobGroupLife is what a batch job's groups cost the agent, as it
// makes them (issue 16): the job's group with its CPUs and memory limits,
// its batch step's inside it, the step's statistics read at its end, both
// removed. No process is placed (the supervisor's share). Reports the CPU
// time of this process per job (the kernel's work on cgroup directories
// is charged to the caller), beside wall time. Needs root and cgroups.
func BenchmarkJobGroupLife(b *testing.B) {
	b.Run("remove", func(b *testing.B) { jobGroupLife(b, false) })
	// The job's tree kept for the next job (recycle_v1.go).
	b.Run("recycle", func(b *testing.B) { jobGroupLife(b, true) })
}

func jobGroupLife(b *testing.B, recycle bool) {
	m := testV1(b)
	ru := func() time.Duration {
		var r syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r)
		return time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	c0 := ru()
	for i := 0; b.Loop(); i++ {
		job := "job_" + strconv.Itoa(i)
		jg, err := m.Create(job, Limits{CPUs: "0", MemoryBytes: 256 << 20, MemSwapBytes: 256 << 20})
		if err != nil {
			b.Fatal(err)
		}
		var sg Group
		if cm, ok := m.(ChildMaker); ok { // as the agent makes it
			sg, err = cm.CreateChild(jg, "step_batch", Limits{InParentFreezer: true})
		} else {
			sg, err = m.Create(job+"/step_batch", Limits{InParentFreezer: true})
		}
		if err != nil {
			b.Fatal(err)
		}
		if _, err := sg.Stats(); err != nil {
			b.Fatal(err)
		}
		if r, ok := jg.(Recycler); recycle && ok && r.Recycle() {
			continue
		}
		if err := sg.Delete(); err != nil {
			b.Fatal(err)
		}
		if err := jg.Delete(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((ru()-c0).Microseconds())/float64(b.N), "cpu-µs/op")
}
