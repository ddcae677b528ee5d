package sched_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
)

// stepJob is a running job holding nodes given as "name:cpus".
func stepJob(nodes ...string) *model.Job {
	j := &model.Job{ID: 7, State: model.JobRunning}
	for _, n := range nodes {
		var a model.NodeAlloc
		name, cpus, _ := strings.Cut(n, ":")
		a.Node = name
		fmt.Sscan(cpus, &a.CPUs)
		j.Alloc = append(j.Alloc, a)
	}
	return j
}

// withStep adds a running step holding cpus on node.
func withStep(j *model.Job, spec model.StepSpec, holds ...model.StepNode) *model.Job {
	st := &model.Step{ID: j.NextStep, State: model.JobRunning, Spec: &spec, Layout: holds}
	j.Steps = append(j.Steps, st)
	j.NextStep++
	return j
}

// stepSpec is a StepSpec with every count unset, changed by mod.
func stepSpec(mod func(s *model.StepSpec)) *model.StepSpec {
	s := &model.StepSpec{Argv: []string{"true"}, NTasks: model.Unset, MinNodes: model.Unset,
		MaxNodes: model.Unset, TasksPerNode: model.Unset, CPUsPerTask: model.Unset}
	if mod != nil {
		mod(s)
	}
	return s
}

// layoutString writes a layout as "n1:4[0 1] n2:4[2 3]".
func layoutString(l []model.StepNode) string {
	parts := make([]string, len(l))
	for i, n := range l {
		parts[i] = fmt.Sprintf("%s:%d%v", n.Node, n.CPUs, n.Tasks)
	}
	return strings.Join(parts, " ")
}

func TestPlaceStep(t *testing.T) {
	const (
		nodeConfig = "Requested node configuration is not available"
		tooMany    = "More processors requested than permitted"
		badDist    = "Invalid distribution"
		busy       = "busy"
	)
	three := func() *model.Job { return stepJob("n1:4", "n2:4", "n3:4") }
	cases := []struct {
		name string
		job  *model.Job
		down string // a node reported down
		mod  func(s *model.StepSpec)
		want string // layout, or an error: nodeConfig, tooMany, badDist, busy
	}{
		{name: "one node one task", job: stepJob("n1:4"), want: "n1:4[0]"},
		{name: "default: one task on every node", job: three(), want: "n1:4[0] n2:4[1] n3:4[2]"},
		{name: "-n1 takes one node", job: three(), mod: func(s *model.StepSpec) { s.NTasks = 1 }, want: "n1:4[0]"},
		{name: "-N3 -n6 block", job: three(), mod: func(s *model.StepSpec) { s.MinNodes, s.MaxNodes, s.NTasks = 3, 3, 6 },
			want: "n1:4[0 1] n2:4[2 3] n3:4[4 5]"},
		{name: "-N3 -n6 cyclic", job: three(), mod: func(s *model.StepSpec) {
			s.MinNodes, s.MaxNodes, s.NTasks, s.Distribution = 3, 3, 6, model.DistCyclic
		}, want: "n1:4[0 3] n2:4[1 4] n3:4[2 5]"},
		{name: "cyclic with uneven counts", job: three(), mod: func(s *model.StepSpec) { s.NTasks, s.Distribution = 7, "cyclic:block" },
			want: "n1:4[0 3 6] n2:4[1 4] n3:4[2 5]"},
		{name: "block:cyclic,Pack is block", job: three(), mod: func(s *model.StepSpec) { s.NTasks, s.Distribution = 4, "block:cyclic,Pack" },
			want: "n1:4[0 1] n2:4[2] n3:4[3]"},
		{name: "* is block", job: three(), mod: func(s *model.StepSpec) { s.NTasks, s.Distribution = 4, "*" },
			want: "n1:4[0 1] n2:4[2] n3:4[3]"},
		{name: "plane is not supported", job: three(), mod: func(s *model.StepSpec) { s.Distribution = "plane=2" }, want: badDist},
		{name: "unknown distribution", job: three(), mod: func(s *model.StepSpec) { s.Distribution = "spiral" }, want: badDist},
		{name: "-n5 -N2 gives 3+2", job: three(), mod: func(s *model.StepSpec) { s.NTasks, s.MinNodes, s.MaxNodes = 5, 2, 2 },
			want: "n1:4[0 1 2] n2:4[3 4]"},
		{name: "excess moves to a later node", job: stepJob("n1:2", "n2:4"), mod: func(s *model.StepSpec) { s.NTasks = 6 },
			want: "n1:2[0 1] n2:4[2 3 4 5]"},
		{name: "excess of the last node moves back", job: stepJob("n1:4", "n2:1"), mod: func(s *model.StepSpec) { s.NTasks = 5 },
			want: "n1:4[0 1 2 3] n2:1[4]"},
		{name: "more tasks than CPUs", job: stepJob("n1:2", "n2:2"), mod: func(s *model.StepSpec) { s.NTasks = 5 }, want: tooMany},
		{name: "-N1 bounds the tasks", job: three(), mod: func(s *model.StepSpec) { s.NTasks, s.MinNodes, s.MaxNodes = 5, 1, 1 }, want: tooMany},
		{name: "-N1-3 grows as the tasks need", job: three(), mod: func(s *model.StepSpec) { s.NTasks, s.MinNodes, s.MaxNodes = 10, 1, 3 },
			want: "n1:4[0 1 2 3] n2:4[4 5 6] n3:4[7 8 9]"},
		{name: "-N1-3 stays small when it fits", job: three(), mod: func(s *model.StepSpec) { s.NTasks, s.MinNodes, s.MaxNodes = 4, 1, 3 },
			want: "n1:4[0 1 2 3]"},
		{name: "the big node is chosen to fit", job: stepJob("s1:1", "big:8"), mod: func(s *model.StepSpec) {
			s.NTasks, s.MinNodes, s.MaxNodes = 6, 1, 1
		}, want: "big:8[0 1 2 3 4 5]"},
		{name: "-c2 -n2 on 2-CPU nodes needs two nodes", job: stepJob("n1:2", "n2:2"), mod: func(s *model.StepSpec) { s.NTasks, s.CPUsPerTask = 2, 2 },
			want: "n1:2[0] n2:2[1]"},
		{name: "-c2 -n2 -N1 on 2-CPU nodes", job: stepJob("n1:2", "n2:2"), mod: func(s *model.StepSpec) {
			s.NTasks, s.CPUsPerTask, s.MinNodes, s.MaxNodes = 2, 2, 1, 1
		}, want: tooMany},
		{name: "-c3 on a 2-CPU node", job: stepJob("n1:4", "n2:2"), mod: func(s *model.StepSpec) { s.CPUsPerTask = 3 }, want: tooMany},
		{name: "more nodes than the job has", job: three(), mod: func(s *model.StepSpec) { s.MinNodes, s.MaxNodes = 4, 4 }, want: nodeConfig},
		{name: "more nodes than tasks: lowered", job: three(), mod: func(s *model.StepSpec) { s.MinNodes, s.MaxNodes, s.NTasks = 3, 3, 2 },
			want: "n1:4[0] n2:4[1]"},
		{name: "--ntasks-per-node with -n", job: three(), mod: func(s *model.StepSpec) { s.TasksPerNode, s.NTasks = 2, 4 },
			want: "n1:4[0 1] n2:4[2 3]"},
		{name: "--ntasks-per-node on every node", job: three(), mod: func(s *model.StepSpec) { s.TasksPerNode = 2 },
			want: "n1:4[0 1] n2:4[2 3] n3:4[4 5]"},
		{name: "--ntasks-per-node with an odd -n", job: three(), mod: func(s *model.StepSpec) { s.TasksPerNode, s.NTasks = 2, 5 },
			want: "n1:4[0 1] n2:4[2 3] n3:4[4]"},
		{name: "--ntasks-per-node beyond -N", job: three(), mod: func(s *model.StepSpec) {
			s.TasksPerNode, s.NTasks, s.MinNodes, s.MaxNodes = 2, 4, 1, 1
		}, want: nodeConfig},
		{name: "--nodelist alone", job: three(), mod: func(s *model.StepSpec) { s.NodeList = []string{"n3"} }, want: "n3:4[0]"},
		{name: "--nodelist with more tasks", job: three(), mod: func(s *model.StepSpec) { s.NodeList, s.NTasks = []string{"n3", "n1"}, 3 },
			want: "n1:4[0 1] n3:4[2]"},
		{name: "--nodelist first, then others", job: three(), mod: func(s *model.StepSpec) {
			s.NodeList, s.MinNodes, s.MaxNodes = []string{"n3"}, 2, 2
		}, want: "n1:4[0] n3:4[1]"},
		{name: "--nodelist outside the job", job: three(), mod: func(s *model.StepSpec) { s.NodeList = []string{"n9"} }, want: nodeConfig},
		{name: "--nodelist larger than -N", job: three(), mod: func(s *model.StepSpec) {
			s.NodeList, s.MinNodes, s.MaxNodes = []string{"n1", "n2"}, 1, 1
		}, want: nodeConfig},
		{name: "--nodelist larger than -n", job: three(), mod: func(s *model.StepSpec) { s.NodeList, s.NTasks = []string{"n1", "n2"}, 1 },
			want: nodeConfig},
		{name: "--nodelist names an excluded node", job: three(), mod: func(s *model.StepSpec) {
			s.NodeList, s.ExcNodes = []string{"n1"}, []string{"n1"}
		}, want: nodeConfig},
		{name: "--exclude", job: three(), mod: func(s *model.StepSpec) { s.ExcNodes = []string{"n1"} }, want: "n2:4[0] n3:4[1]"},
		{name: "excluding every node", job: three(), mod: func(s *model.StepSpec) { s.ExcNodes = []string{"n1", "n2", "n3"} },
			want: nodeConfig},
		{name: "down node left out", job: three(), down: "n2", want: "n1:4[0] n3:4[1]"},
		{name: "down node left out of -n", job: three(), down: "n1", mod: func(s *model.StepSpec) { s.NTasks = 4 },
			want: "n2:4[0 1] n3:4[2 3]"},
		{name: "down node named", job: three(), down: "n2", mod: func(s *model.StepSpec) { s.NodeList = []string{"n2"} }, want: nodeConfig},
		{name: "too many nodes with one down", job: three(), down: "n2", mod: func(s *model.StepSpec) { s.MinNodes, s.MaxNodes = 3, 3 },
			want: nodeConfig},
		{name: "job without nodes", job: stepJob(), want: nodeConfig},
		{name: "--exact holds only its CPUs", job: three(), mod: func(s *model.StepSpec) { s.NTasks, s.CPUsPerTask, s.Exact = 3, 2, true },
			want: "n1:2[0] n2:2[1] n3:2[2]"},
		{name: "--exact on one node", job: stepJob("n1:8"), mod: func(s *model.StepSpec) { s.NTasks, s.Exact = 3, true },
			want: "n1:3[0 1 2]"},
		{name: "--overlap holds the job's CPUs", job: stepJob("n1:8"), mod: func(s *model.StepSpec) { s.NTasks, s.Exact, s.Overlap = 3, true, true },
			want: "n1:8[0 1 2]"},

		// Other running steps.
		{name: "busy: a default step holds the node",
			job:  withStep(stepJob("n1:4"), model.StepSpec{}, model.StepNode{Node: "n1", CPUs: 4, Tasks: []int{0}}),
			want: busy},
		{name: "busy: an exact step leaves too little",
			job:  withStep(stepJob("n1:4"), model.StepSpec{Exact: true}, model.StepNode{Node: "n1", CPUs: 3, Tasks: []int{0, 1, 2}}),
			mod:  func(s *model.StepSpec) { s.NTasks, s.Exact = 2, true },
			want: busy},
		{name: "--exact steps side by side",
			job:  withStep(stepJob("n1:4"), model.StepSpec{Exact: true}, model.StepNode{Node: "n1", CPUs: 2, Tasks: []int{0, 1}}),
			mod:  func(s *model.StepSpec) { s.NTasks, s.Exact = 2, true },
			want: "n1:2[0 1]"},
		{name: "a default step after an exact one is busy",
			job:  withStep(stepJob("n1:4"), model.StepSpec{Exact: true}, model.StepNode{Node: "n1", CPUs: 1, Tasks: []int{0}}),
			mod:  func(s *model.StepSpec) { s.NTasks = 1 },
			want: busy},
		{name: "--overlap is never busy",
			job:  withStep(stepJob("n1:4"), model.StepSpec{}, model.StepNode{Node: "n1", CPUs: 4, Tasks: []int{0}}),
			mod:  func(s *model.StepSpec) { s.Overlap = true },
			want: "n1:4[0]"},
		{name: "an overlap step holds nothing",
			job:  withStep(stepJob("n1:4"), model.StepSpec{Overlap: true}, model.StepNode{Node: "n1", CPUs: 4, Tasks: []int{0}}),
			want: "n1:4[0]"},
		{name: "a finished step holds nothing",
			job: func() *model.Job {
				j := withStep(stepJob("n1:4"), model.StepSpec{}, model.StepNode{Node: "n1", CPUs: 4, Tasks: []int{0}})
				j.Steps[0].State = model.JobCompleted
				return j
			}(),
			want: "n1:4[0]"},
		{name: "a free node is preferred",
			job:  withStep(three(), model.StepSpec{}, model.StepNode{Node: "n1", CPUs: 4, Tasks: []int{0}}),
			mod:  func(s *model.StepSpec) { s.NTasks = 2 },
			want: "n2:4[0] n3:4[1]"},
		{name: "busy when every node is needed",
			job:  withStep(three(), model.StepSpec{}, model.StepNode{Node: "n2", CPUs: 4, Tasks: []int{0}}),
			want: busy},
		{name: "never fits beats busy",
			job:  withStep(stepJob("n1:4"), model.StepSpec{}, model.StepNode{Node: "n1", CPUs: 4, Tasks: []int{0}}),
			mod:  func(s *model.StepSpec) { s.NTasks = 5 },
			want: tooMany},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			down := func(n string) bool { return n == tc.down }
			l, err := sched.PlaceStep(tc.job, down, stepSpec(tc.mod))
			switch tc.want {
			case busy:
				if !errors.Is(err, sched.ErrStepBusy) {
					t.Fatalf("PlaceStep = %s, %v; want ErrStepBusy", layoutString(l), err)
				}
			case nodeConfig, tooMany, badDist:
				var se *sched.StepError
				if !errors.As(err, &se) || se.Error() != tc.want {
					t.Fatalf("PlaceStep = %s, %v; want StepError %q", layoutString(l), err, tc.want)
				}
			default:
				if err != nil {
					t.Fatalf("PlaceStep: %v", err)
				}
				if got := layoutString(l); got != tc.want {
					t.Errorf("layout %s, want %s", got, tc.want)
				}
			}
		})
	}
}

// TestPlaceStepInvariants checks, over many request shapes, that a layout
// numbers ranks 0..n-1 once each, never puts more tasks on a node than
// its CPUs allow, and holds no more CPUs than the job has there.
func TestPlaceStepInvariants(t *testing.T) {
	job := stepJob("a:1", "b:2", "c:4", "d:8")
	cpus := map[string]int{"a": 1, "b": 2, "c": 4, "d": 8}
	for ntasks := model.Unset; ntasks <= 16; ntasks++ {
		for nodes := model.Unset; nodes <= 5; nodes++ {
			for cpt := 1; cpt <= 3; cpt++ {
				for _, dist := range []model.Distribution{"", model.DistCyclic} {
					for _, exact := range []bool{false, true} {
						if ntasks == 0 || nodes == 0 {
							continue
						}
						spec := stepSpec(func(s *model.StepSpec) {
							s.NTasks, s.MinNodes, s.MaxNodes, s.CPUsPerTask, s.Distribution, s.Exact = ntasks, nodes, nodes, cpt, dist, exact
						})
						l, err := sched.PlaceStep(job, nil, spec)
						if err != nil {
							var se *sched.StepError
							if !errors.As(err, &se) {
								t.Fatalf("%+v: error %v is neither busy nor a StepError", spec, err)
							}
							continue
						}
						seen := map[int]bool{}
						for _, n := range l {
							if len(n.Tasks) == 0 || len(n.Tasks)*cpt > cpus[n.Node] || n.CPUs > cpus[n.Node] || n.CPUs < len(n.Tasks)*cpt {
								t.Fatalf("%+v: bad node %+v", spec, n)
							}
							for _, r := range n.Tasks {
								seen[r] = true
							}
						}
						for r := range len(seen) {
							if !seen[r] {
								t.Fatalf("%+v: ranks %s not 0..%d", spec, layoutString(l), len(seen)-1)
							}
						}
						if ntasks > 0 && len(seen) != ntasks {
							t.Fatalf("%+v: %d tasks, want %d", spec, len(seen), ntasks)
						}
					}
				}
			}
		}
	}
}
