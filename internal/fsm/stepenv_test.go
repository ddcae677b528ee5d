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

// A job's running steps hold at most ExecBudget bytes of argv and
// environment; a finished step frees its share, and an entry logged
// without a budget (before it existed) is applied as it was then.
func TestStepExecBudget(t *testing.T) {
	h := newHarness(t)
	h.apply(TypeSubmit, &Submit{Spec: spec(), Partition: "p", Now: 1})
	h.apply(TypeSchedule, &Schedule{Now: 2, Starts: []StartEntry{{Job: 1, Alloc: []model.NodeAlloc{{Node: "n1", CPUs: 1}}}}})
	big := string(make([]byte, 1000))
	create := func(budget int64) CreateStepResult {
		return h.apply(TypeCreateStep, &CreateStep{Job: 1, Now: 2, ExecBudget: budget,
			Layout: []model.StepNode{{Node: "n1", CPUs: 1, Tasks: []int{0}}},
			Spec:   &model.StepSpec{Overlap: true, Argv: []string{"true"}, Env: []string{big}}}).(CreateStepResult)
	}
	for i := 0; i < 2; i++ {
		if r := create(2500); r.Err != nil {
			t.Fatalf("step %d within the budget refused: %v", i, r.Err)
		}
	}
	if r := create(2500); r.Err != ErrStepExecBudget {
		t.Fatalf("third step past the budget: %+v, want %v", r, ErrStepExecBudget)
	}
	if r := create(0); r.Err != nil || r.Step != 2 {
		t.Fatalf("step without a budget (older log entry): %+v", r)
	}
	h.apply(TypeStepEnded, &StepEnded{Job: 1, Step: 0, Node: "n1", Now: 3})
	h.apply(TypeStepEnded, &StepEnded{Job: 1, Step: 2, Node: "n1", Now: 3})
	if r := create(2500); r.Err != nil || r.Step != 3 {
		t.Fatalf("step after others ended: %+v", r)
	}
	if n := len(h.snap().Job(1).RunningSteps()); n != 2 {
		t.Fatalf("running steps: %d, want 2", n)
	}
}

// At most MaxRunning steps of a job run at once; an ended one makes room,
// and an entry logged without the bound is applied as it was then.
func TestStepsRunningBound(t *testing.T) {
	h := newHarness(t)
	h.apply(TypeSubmit, &Submit{Spec: spec(), Partition: "p", Now: 1})
	h.apply(TypeSchedule, &Schedule{Now: 2, Starts: []StartEntry{{Job: 1, Alloc: []model.NodeAlloc{{Node: "n1", CPUs: 1}}}}})
	create := func(bound int) CreateStepResult {
		return h.apply(TypeCreateStep, &CreateStep{Job: 1, Now: 2, MaxRunning: bound,
			Layout: []model.StepNode{{Node: "n1", CPUs: 1, Tasks: []int{0}}},
			Spec:   &model.StepSpec{Overlap: true, Argv: []string{"true"}}}).(CreateStepResult)
	}
	for i := 0; i < 3; i++ {
		if r := create(3); r.Err != nil {
			t.Fatalf("step %d within the bound refused: %v", i, r.Err)
		}
	}
	if r := create(3); r.Err != ErrStepsRunning {
		t.Fatalf("fourth running step: %+v, want %v", r, ErrStepsRunning)
	}
	if r := create(0); r.Err != nil || r.Step != 3 {
		t.Fatalf("step without a bound (older log entry): %+v", r)
	}
	h.apply(TypeStepEnded, &StepEnded{Job: 1, Step: 0, Node: "n1", Now: 3})
	h.apply(TypeStepEnded, &StepEnded{Job: 1, Step: 1, Node: "n1", Now: 3})
	if r := create(3); r.Err != nil || r.Step != 4 {
		t.Fatalf("step after two ended: %+v", r)
	}
}

// The tasks of a job's running steps on one node are bounded too: steps
// of many tasks must not pile onto one node under MaxRunning.
func TestStepTasksPerNodeBound(t *testing.T) {
	h := newHarness(t)
	h.apply(TypeSubmit, &Submit{Spec: spec(), Partition: "p", Now: 1})
	h.apply(TypeSchedule, &Schedule{Now: 2, Starts: []StartEntry{{Job: 1, Alloc: []model.NodeAlloc{{Node: "n1", CPUs: 2}}}}})
	create := func(tasks ...int) CreateStepResult {
		return h.apply(TypeCreateStep, &CreateStep{Job: 1, Now: 2, MaxRunning: 100, NodeTasks: 3, NodeTasksPerCPU: 1,
			Layout: []model.StepNode{{Node: "n1", CPUs: 2, Tasks: tasks}},
			Spec:   &model.StepSpec{Overlap: true, Argv: []string{"true"}}}).(CreateStepResult)
	}
	if r := create(0, 1); r.Err != nil {
		t.Fatalf("two tasks of three: %v", r.Err)
	}
	if r := create(0, 1); r.Err != ErrStepsRunning {
		t.Fatalf("four tasks on a node bound to three: %+v", r)
	}
	if r := create(0); r.Err != nil {
		t.Fatalf("the third task: %v", r.Err)
	}
	h.apply(TypeStepEnded, &StepEnded{Job: 1, Step: 0, Node: "n1", Now: 3})
	if r := create(0, 1); r.Err != nil {
		t.Fatalf("two tasks after two ended: %v", r.Err)
	}
}

// The tasks of the running --overlap steps of one user's jobs on a node
// are bounded together (per CPU those jobs hold there): many small jobs
// must not each bring NodeTasks of their own onto the node's one agent.
// Another user's jobs, steps that need CPUs of their own, and entries
// logged without the bound are not held to it.
func TestUserStepTasksPerNodeBound(t *testing.T) {
	h := newHarness(t)
	for i, uid := range []uint32{1000, 1000, 1001} {
		h.apply(TypeSubmit, &Submit{Spec: spec(), Partition: "p", UID: uid, Now: 1})
		h.apply(TypeSchedule, &Schedule{Now: 2, Starts: []StartEntry{{Job: model.JobID(i + 1), Alloc: []model.NodeAlloc{{Node: "n1", CPUs: 1}}}}})
	}
	create := func(job model.JobID, user, overlap bool, tasks ...int) CreateStepResult {
		return h.apply(TypeCreateStep, &CreateStep{Job: job, Now: 2, MaxRunning: 100, NodeTasks: 3, NodeTasksPerCPU: 1,
			UserNodeTasks: user, Layout: []model.StepNode{{Node: "n1", CPUs: 1, Tasks: tasks}},
			Spec: &model.StepSpec{Overlap: overlap, Argv: []string{"true"}}}).(CreateStepResult)
	}
	if r := create(1, true, true, 0, 1); r.Err != nil {
		t.Fatalf("job 1: two tasks of three: %v", r.Err)
	}
	if r := create(2, true, true, 0, 1); r.Err != ErrUserStepsRunning {
		t.Fatalf("job 2 of the same user: four tasks on a node bound to three: %+v", r)
	}
	if r := create(2, true, true, 0); r.Err != nil {
		t.Fatalf("job 2: the user's third task: %v", r.Err)
	}
	if r := create(3, true, true, 0, 1, 2); r.Err != nil {
		t.Fatalf("another user's job: %v", r.Err)
	}
	if r := create(2, true, false, 0); r.Err != nil {
		t.Fatalf("a step with CPUs of its own: %v", r.Err)
	}
	if r := create(1, false, true, 0); r.Err != nil {
		t.Fatalf("an entry logged without the bound: %v", r.Err)
	}
	// Five tasks of the user's run now; three end.
	h.apply(TypeStepEnded, &StepEnded{Job: 1, Step: 0, Node: "n1", Now: 3})
	h.apply(TypeStepEnded, &StepEnded{Job: 2, Step: 1, Node: "n1", Now: 3})
	if r := create(2, true, true, 0); r.Err != nil {
		t.Fatalf("a task after three of the user's ended: %v", r.Err)
	}
}
