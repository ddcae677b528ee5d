package controller

import (
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/clock"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
	"github.com/drover-hpc/drover/internal/service"
	"github.com/drover-hpc/drover/internal/state"
)

// The slicer swaps two gang jobs sharing a node once the running one's
// slice is over, and not before; a preemption victim stays suspended
// while its preemptor waits.
func TestSliceOnce(t *testing.T) {
	st := state.New(1)
	d := &direct{f: fsm.New(st, nil)}
	clk := clock.NewFake(time.Unix(1000, 0))
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	c := New(log, st, d, clk)
	c.SetService(service.New(log, st, d, clk, nil,
		&service.Settings{Preempt: sched.Preempt{Mode: "SUSPEND", Gang: true, TimeSlice: 10}}))
	must := func(t fsm.Type, body any) any {
		r, err := d.Apply(t, body)
		if err != nil {
			panic(err)
		}
		return r
	}
	must(fsm.TypeSetConfig, &fsm.SetConfig{Nodes: []*model.Node{{Name: "n1", CPUs: 2, Memory: 1000}},
		Partitions: []*model.Partition{{Name: "p", Nodes: []string{"n1"}, OverSubscribe: "FORCE:2", MaxTime: model.Unlimited}}})
	must(fsm.TypeNodeRegister, &fsm.NodeRegister{Node: "n1", CPUs: 2, Memory: 1000, Now: 1000})
	spec := &model.JobSpec{Name: "j", Script: "#!/bin/sh\n", TimeLimit: model.Unset, MinNodes: model.Unset,
		NTasks: model.Unset, CPUsPerTask: model.Unset, MemPerNode: model.Unset}
	for range 2 {
		must(fsm.TypeSubmit, &fsm.Submit{Spec: spec, Partition: "p", User: "u", Now: 1000})
	}
	all := []model.NodeAlloc{{Node: "n1", CPUs: 2, CPUIDs: model.BitmapOf(0, 1)}}
	must(fsm.TypeSchedule, &fsm.Schedule{Now: 1000, Starts: []fsm.StartEntry{{Job: 1, Alloc: all}}})
	must(fsm.TypeSchedule, &fsm.Schedule{Now: 1001, Preempt: []fsm.PreemptEntry{{Job: 1, Mode: "GANG", For: 2}}})

	// Job 2 still waits to start: job 1 stays suspended for it.
	c.sliceOnce(1001)
	if j := st.Snapshot().Job(1); !j.SchedSuspended {
		t.Fatal("the victim resumed while its preemptor waited")
	}
	must(fsm.TypeSchedule, &fsm.Schedule{Now: 1002, Starts: []fsm.StartEntry{{Job: 2, Alloc: all}}})
	c.sliceOnce(1005) // job 2's slice is not over
	if j := st.Snapshot().Job(2); j.Suspended {
		t.Fatal("job 2 suspended before its slice was over")
	}
	c.sliceOnce(1013)
	snap := st.Snapshot()
	if j1, j2 := snap.Job(1), snap.Job(2); j1.Suspended || !j2.SchedSuspended {
		t.Fatalf("after the slice: job 1 suspended=%v, job 2 suspended=%v", j1.Suspended, j2.Suspended)
	}
	if n := snap.Node("n1"); n.AllocCPUs != 2 || !slices.Equal(n.AllocCores.IDs(), []int{0, 1}) {
		t.Fatalf("node after the swap: %d CPUs %q", n.AllocCPUs, n.AllocCores)
	}
	// Job 1 ran 1000-1001 and 1013-1020: 8 s of run time out of 20.
	if j := snap.Job(1); 1020-j.StartTime-j.SuspendedFor(1020) != 8 {
		t.Errorf("job 1 run time %d, want 8", 1020-j.StartTime-j.SuspendedFor(1020))
	}
}
