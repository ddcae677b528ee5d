package wire

import (
	"reflect"
	"slices"
	"testing"

	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/wiretest"
)

// diffFields names the top-level fields of a and b (same struct type) that
// differ, except those in skip.
func diffFields(a, b any, skip ...string) []string {
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	var out []string
	for i := range va.NumField() {
		name := va.Type().Field(i).Name
		if slices.Contains(skip, name) || !va.Type().Field(i).IsExported() {
			continue
		}
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			out = append(out, name)
		}
	}
	return out
}

func filled[T any](t *testing.T) *T {
	t.Helper()
	return wiretest.Filled[T]()
}

// TestEveryFieldRoundTrips: each model type the wire carries comes back
// whole, every field set. A field deliberately left off the wire is named
// here with the reason.
func TestEveryFieldRoundTrips(t *testing.T) {
	t.Run("JobSpec", func(t *testing.T) {
		s := filled[model.JobSpec](t)
		s.KillInvalidDep = 1
		// GPUReq fields and the array's task list are checked below / by
		// TestFullRoundTrip; the dependency's terms carry typed values.
		if d := diffFields(s, SpecFromPB(SpecToPB(s)), "Dependency", "Array"); len(d) > 0 {
			t.Errorf("JobSpec fields lost on the wire: %v", d)
		}
	})
	t.Run("StepSpec", func(t *testing.T) {
		s := filled[model.StepSpec](t)
		if d := diffFields(s, StepSpecFromPB(StepSpecToPB(s))); len(d) > 0 {
			t.Errorf("StepSpec fields lost on the wire: %v", d)
		}
	})
	t.Run("GPUReq", func(t *testing.T) {
		g := filled[model.GPUReq](t)
		if d := diffFields(g, GPUReqFromPB(GPUReqToPB(g))); len(d) > 0 {
			t.Errorf("GPUReq fields lost on the wire: %v", d)
		}
	})
	t.Run("Usage", func(t *testing.T) {
		u := filled[model.Usage](t)
		if d := diffFields(u, UsageFromPB(UsageToPB(u))); len(d) > 0 {
			t.Errorf("Usage fields lost on the wire: %v", d)
		}
	})
	t.Run("Node", func(t *testing.T) {
		nd := filled[model.Node](t)
		// The controller's own bookkeeping: how the node's size was
		// learnt and who drained it (health or an administrator); Resv is
		// derived by the client from the reservations.
		if d := diffFields(nd, NodeFromPB(NodeToPB(nd)), "DetectCPUs", "DetectMemory", "HealthDrain", "Resv"); len(d) > 0 {
			t.Errorf("Node fields lost on the wire: %v", d)
		}
	})
	t.Run("Partition", func(t *testing.T) {
		p := filled[model.Partition](t)
		if d := diffFields(p, PartitionFromPB(PartitionToPB(p))); len(d) > 0 {
			t.Errorf("Partition fields lost on the wire: %v", d)
		}
	})
	t.Run("AcctJob", func(t *testing.T) {
		j := filled[acct.Job](t)
		if d := diffFields(j, AcctJobFromPB(AcctJobToPB(j))); len(d) > 0 {
			t.Errorf("acct.Job fields lost on the wire: %v", d)
		}
	})
}

func TestEveryJobFieldRoundTrips(t *testing.T) {
	j := filled[model.Job](t)
	j.Spec.KillInvalidDep = 1
	// Left off on purpose: the controller's bookkeeping (PrioritySet,
	// BeginTime, Preempted, Released), earlier runs (sacct reads them from
	// accounting), PlannedStart (sent as a pending job's StartTime) and
	// Steps (sent in their short form; the Step check below is the full one).
	// The scheduler's suspension bookkeeping (SchedSuspended, PreemptedFor,
	// SliceTime, SuspendsVictims) stays in the controller too: users see
	// the state and Suspended time, which are carried.
	skip := []string{"PrioritySet", "BeginTime", "Runs", "PlannedStart", "Preempted", "Released", "Steps",
		"SchedSuspended", "PreemptedFor", "SliceTime", "SuspendsVictims"}
	if d := diffFields(j, JobFromPB(JobToPB(j, Full)), skip...); len(d) > 0 {
		t.Errorf("Job fields lost on the wire: %v", d)
	}
	s := filled[model.Step](t)
	// A step's SuspendedSecs is accounting's (it reaches sacct in the
	// accounting record, acct.Step.Suspended), not the step listings'.
	if d := diffFields(s, StepFromPB(StepToPB(s, true)), "SuspendedSecs"); len(d) > 0 {
		t.Errorf("Step fields lost on the wire: %v", d)
	}
}
