package fsm

import (
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

// A finished step sheds its environment and --multi-prog argv from the
// replicated record, whether it ended itself or with its job; a running
// step keeps them (an agent relaunching it needs them), and a snapshot
// taken before the end still sees them.
func TestFinishedStepShedsEnv(t *testing.T) {
	h := newHarness(t)
	h.apply(TypeSubmit, &Submit{Spec: spec(), Partition: "p", Now: 1})
	h.apply(TypeSchedule, &Schedule{Now: 2, Starts: []StartEntry{{Job: 1, Alloc: []model.NodeAlloc{{Node: "n1", CPUs: 1}}}}})
	for i := 0; i < 2; i++ {
		h.apply(TypeCreateStep, &CreateStep{Job: 1, Now: 2, Layout: []model.StepNode{{Node: "n1", CPUs: 1, Tasks: []int{0}}},
			Spec: &model.StepSpec{Overlap: true, Argv: []string{"true"}, Env: []string{"BIG=x"}, TaskArgv: [][]string{{"a"}}}})
	}
	before := h.snap()
	h.apply(TypeStepEnded, &StepEnded{Job: 1, Step: 0, Node: "n1", Now: 3})
	j := h.snap().Job(1)
	if s := j.Step(0); !s.Finished() || s.Spec.Env != nil || s.Spec.TaskArgv != nil || len(s.Spec.Argv) != 1 {
		t.Fatalf("ended step 0: finished %v env %q task argv %q argv %q", s.Finished(), s.Spec.Env, s.Spec.TaskArgv, s.Spec.Argv)
	}
	if s := j.Step(1); s.Finished() || len(s.Spec.Env) != 1 || len(s.Spec.TaskArgv) != 1 {
		t.Fatalf("running step 1 lost its spec: env %q task argv %q", s.Spec.Env, s.Spec.TaskArgv)
	}
	if s := before.Job(1).Step(0); len(s.Spec.Env) != 1 {
		t.Fatalf("the earlier snapshot's step changed: env %q", s.Spec.Env)
	}
	h.apply(TypeJobEnded, &JobEnded{Job: 1, StartTime: 2, Run: 1, Now: 4})
	if s := h.snap().Job(1).Step(1); !s.Finished() || s.Spec.Env != nil || s.Spec.TaskArgv != nil {
		t.Fatalf("step 1 after its job ended: finished %v env %q task argv %q", s.Finished(), s.Spec.Env, s.Spec.TaskArgv)
	}
}
