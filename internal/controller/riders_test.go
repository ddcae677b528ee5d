package controller

import (
	"sync"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/nodemsg"
	"github.com/drover-hpc/drover/internal/state"
)

// deferring commits at once like direct, and records the wait each
// command offered one was given (none: Apply, at once).
type deferring struct {
	direct
	wmu   sync.Mutex
	waits map[fsm.Type][]time.Duration
}

func (d *deferring) ApplyDeferred(t fsm.Type, body any, wait time.Duration) (any, error) {
	d.wmu.Lock()
	d.waits[t] = append(d.waits[t], wait)
	d.wmu.Unlock()
	return d.Apply(t, body)
}

func (d *deferring) ended(t *testing.T, c *Controller, job model.JobID, run uint32) time.Duration {
	return d.endedAs(t, c, &nodemsg.JobEnded{Job: job, Run: run})
}

func (d *deferring) endedAs(t *testing.T, c *Controller, e *nodemsg.JobEnded) time.Duration {
	job := e.Job
	t.Helper()
	d.wmu.Lock()
	before := len(d.waits[fsm.TypeJobEnded])
	d.wmu.Unlock()
	s := &ackScript{want: 1, acks: make(chan struct{}, 4), in: []nodemsg.FromNode{
		&nodemsg.Register{Node: "n1", CPUs: 2, Memory: 1000, Ended: []model.JobID{job}},
		e,
	}}
	if err := c.ServeAgent(s, "127.0.0.1", "n1"); err != nil {
		t.Fatal(err)
	}
	if j := c.store.Snapshot().Job(job); j == nil || j.State == model.JobRunning {
		t.Fatalf("job %d still running: %+v", job, j)
	}
	d.wmu.Lock()
	defer d.wmu.Unlock()
	w := d.waits[fsm.TypeJobEnded]
	if len(w) == before {
		return 0 // committed at once, through Apply
	}
	return w[len(w)-1]
}

// TestEndsWaitOnlyWhenNothingWaitsForThem: a job's end may wait for a
// companion commit while the queue is empty or holds only jobs no pass
// has seen yet (their own pass commits soon), and goes at once when a
// queued job waits for resources, which the end may be freeing.
func TestEndsWaitOnlyWhenNothingWaitsForThem(t *testing.T) {
	st := state.New(1)
	d := &deferring{direct: direct{f: fsm.New(st, nil)}, waits: map[fsm.Type][]time.Duration{}}
	c, run := oneJobFixture(t, st, d, 2) // job 1 holds both CPUs of n1
	now := time.Now().Unix()
	submit := func() model.JobID {
		spec := &model.JobSpec{Name: "q", Script: "#!/bin/sh\n", TimeLimit: model.Unset, MinNodes: model.Unset,
			NTasks: model.Unset, CPUsPerTask: model.Unset, MemPerNode: model.Unset}
		res, err := d.Apply(fsm.TypeSubmit, &fsm.Submit{Spec: spec, Partition: "p", User: "u", Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return res.(fsm.SubmitResult).JobID
	}
	start := func(id model.JobID) uint32 {
		if _, err := d.Apply(fsm.TypeSchedule, &fsm.Schedule{Now: now,
			Starts: []fsm.StartEntry{{Job: id, Alloc: []model.NodeAlloc{{Node: "n1", CPUs: 1}}}}}); err != nil {
			t.Fatal(err)
		}
		return st.Snapshot().Job(id).Run()
	}

	// A queued job that a pass left waiting for resources: the end goes
	// at once.
	waiting := submit()
	if _, err := d.Apply(fsm.TypeSchedule, &fsm.Schedule{Now: now,
		Reasons: map[model.JobID]string{waiting: model.ReasonResources}}); err != nil {
		t.Fatal(err)
	}
	if w := d.ended(t, c, 1, run); w != 0 {
		t.Errorf("an end with a job waiting for resources was offered a wait of %v, want none", w)
	}

	// Only jobs no pass has seen yet: the end may wait.
	run2 := start(waiting)
	fresh := submit()
	if w := d.ended(t, c, waiting, run2); w != endWait {
		t.Errorf("an end with only a fresh job queued was offered a wait of %v, want %v", w, endWait)
	}

	// Nothing queued: the end may wait.
	run3 := start(fresh)
	if w := d.ended(t, c, fresh, run3); w != endWait {
		t.Errorf("an end with nothing queued was offered a wait of %v, want %v", w, endWait)
	}

	// A requeue (a launch that failed on the node): at once, even with
	// nothing queued.
	id := submit()
	run5 := start(id)
	if w := d.endedAs(t, c, &nodemsg.JobEnded{Job: id, Run: run5, Requeue: true}); w != 0 {
		t.Errorf("a requeue was offered a wait of %v, want none", w)
	}
	if j := st.Snapshot().Job(id); j == nil || j.State != model.JobPending {
		t.Fatalf("requeued job: %+v, want PENDING", j)
	}
	if _, err := d.Apply(fsm.TypeCancel, &fsm.Cancel{Jobs: []model.JobID{id}, Now: now}); err != nil {
		t.Fatal(err)
	}

	// More fresh jobs than endsMayWait looks at: at once.
	id = submit()
	run4 := start(id)
	for range maxFreshQueue + 1 {
		submit()
	}
	if w := d.ended(t, c, id, run4); w != 0 {
		t.Errorf("an end with %d jobs queued was offered a wait of %v, want none", maxFreshQueue+1, w)
	}
}
