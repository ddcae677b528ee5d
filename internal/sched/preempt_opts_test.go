package sched_test

import (
	"slices"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
	"github.com/drover-hpc/drover/internal/sched/schedtest"
)

// PreemptMode=WITHIN (preempt/qos): jobs of one QOS preempt jobs of the
// same QOS of lower priority, never of equal or higher; globally or on
// the QOS. Without it a QOS never preempts itself. A QOS mode stored as
// "WITHIN,CANCEL" preempts its victims by CANCEL.
func TestPreemptWithin(t *testing.T) {
	setup := func() (*schedtest.Cluster, map[string]*model.QOS) {
		c := schedtest.New()
		oneNode(c, 4, 8000)
		for _, prio := range []uint32{10, 30} {
			j := submit(c, 1, inQOS("normal", 2))
			j.Priority = prio
			runAll(t, c, 10, sched.Config{})
		}
		return c, qosTable()
	}
	// Equal to job 2's priority: may take job 1 only.
	c, qos := setup()
	j := submit(c, 1, inQOS("normal", 2))
	j.Priority = 30
	if p := scheduleQOS(t, c, 100, qosRequeue, qos); len(p.Preempts) != 0 {
		t.Fatalf("preempted %v within one QOS without WITHIN", victimIDs(p))
	}
	within := qosRequeue
	within.Preempt.Within = true
	p := scheduleQOS(t, c, 100, within, qos)
	if got := victimIDs(p); !slices.Equal(got, []model.JobID{1}) || p.Preempts[0].Victims[0].Mode != "REQUEUE" {
		t.Fatalf("WITHIN: preemptions %+v, want job 1 requeued", p.Preempts)
	}
	// A job of equal priority to both running jobs preempts nobody.
	j.Priority = 10
	c.Jobs[2].Priority = 10
	if p := scheduleQOS(t, c, 100, within, qos); len(p.Preempts) != 0 {
		t.Fatalf("WITHIN preempted %v of equal priority", victimIDs(p))
	}
	// On the QOS: its own mode (less WITHIN) is the victim's.
	c, qos = setup()
	j = submit(c, 1, inQOS("normal", 2))
	j.Priority = 20
	qos["normal"].PreemptMode = "WITHIN,CANCEL"
	p = scheduleQOS(t, c, 100, qosRequeue, qos)
	if got := victimIDs(p); !slices.Equal(got, []model.JobID{1}) || p.Preempts[0].Victims[0].Mode != "CANCEL" {
		t.Fatalf("QOS WITHIN,CANCEL: preemptions %+v, want job 1 cancelled", p.Preempts)
	}
}

// PreemptParameters=youngest_first: victims by start time alone. Here the
// oldest running job has the lowest priority, which the default order
// would take; youngest_first takes the most recently started.
func TestPreemptYoungestFirst(t *testing.T) {
	c := schedtest.New()
	oneNode(c, 4, 8000)
	old := submit(c, 1, inQOS("low", 2))
	old.Priority = 1
	runAll(t, c, 10, sched.Config{})
	young := submit(c, 1, inQOS("low", 2))
	young.Priority = 50
	runAll(t, c, 20, sched.Config{})
	qos := qosTable()
	submit(c, 1, inQOS("high", 2))
	if got := victimIDs(scheduleQOS(t, c, 100, qosRequeue, qos)); !slices.Equal(got, []model.JobID{old.ID}) {
		t.Fatalf("default order: victims %v, want the lowest priority %d", got, old.ID)
	}
	yf := qosRequeue
	yf.Preempt.YoungestFirst = true
	if got := victimIDs(scheduleQOS(t, c, 100, yf, qos)); !slices.Equal(got, []model.JobID{young.ID}) {
		t.Fatalf("youngest_first: victims %v, want the youngest %d", got, young.ID)
	}
}
