package stepenv

import (
	"slices"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

func TestCompressCounts(t *testing.T) {
	for _, tc := range []struct {
		in   []int
		want string
	}{
		{nil, ""}, {[]int{1}, "1"}, {[]int{2, 2, 2, 1}, "2(x3),1"}, {[]int{3, 1, 1}, "3,1(x2)"}, {[]int{2, 1, 2}, "2,1,2"},
	} {
		if got := CompressCounts(tc.in); got != tc.want {
			t.Errorf("CompressCounts(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// stepOf is step id of job 41951 laid out as given.
func stepOf(id model.StepID, spec *model.StepSpec, layout ...model.StepNode) *model.Step {
	n := 0
	for _, l := range layout {
		n += len(l.Tasks)
	}
	return &model.Step{ID: id, Spec: spec, State: model.JobRunning, Layout: layout, NTasks: n}
}

func TestStepEnv(t *testing.T) {
	j := baseJob() // node10:36, node2:72, node1:72
	base := BatchEnv(j, NodeInfo{Name: "node2"}, "c1", 0)
	base = append(base, "SLURM_STEP_ID=9", "SLURM_SRUN_COMM_HOST=old", "KEEP=1")
	// Layout in allocation order: node10 first, which sorts last.
	st := stepOf(3, &model.StepSpec{CPUsPerTask: 2, Distribution: "cyclic:block"},
		model.StepNode{Node: "node10", CPUs: 4, Tasks: []int{0, 3}},
		model.StepNode{Node: "node2", CPUs: 72, Tasks: []int{1, 4, 5}},
		model.StepNode{Node: "node1", CPUs: 72, Tasks: []int{2}},
	)
	got := envMap(t, StepEnv(base, j, st, "node2", 1, 2, 5, "10.0.0.5", 40123))
	want := map[string]string{
		"SLURM_STEP_ID": "3", "SLURM_STEPID": "3",
		"SLURM_STEP_NODELIST": "node[1-2,10]", "SLURM_STEP_NUM_NODES": "3", "SLURM_STEP_NUM_TASKS": "6",
		"SLURM_STEP_TASKS_PER_NODE": "1,3,2", "SLURM_TASKS_PER_NODE": "1,3,2",
		"SLURM_NTASKS": "6", "SLURM_NPROCS": "6", "SLURM_NNODES": "3",
		"SLURM_PROCID": "5", "SLURM_LOCALID": "2", "SLURM_NODEID": "1", "SLURM_GTIDS": "1,4,5",
		"SLURM_LAUNCH_NODE_IPADDR": "10.0.0.5", "SLURM_SRUN_COMM_HOST": "10.0.0.5",
		"SLURM_SRUN_COMM_PORT": "40123", "SLURM_STEP_LAUNCHER_PORT": "40123",
		"SLURM_CPUS_ON_NODE": "72", "SLURM_CPUS_PER_TASK": "2", "SLURM_DISTRIBUTION": "cyclic",
		"SLURMD_NODENAME": "node2", "SLURM_TOPOLOGY_ADDR": "node2", "SLURM_TOPOLOGY_ADDR_PATTERN": "node",
		// The job's variables stay.
		"SLURM_JOB_ID": "41951", "SLURM_JOB_NODELIST": "node[1-2,10]", "SLURM_NODELIST": "node[1-2,10]",
		"SLURM_JOB_NUM_NODES": "3", "SLURM_JOB_CPUS_PER_NODE": "72(x2),36", "KEEP": "1",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}

	// A step without -c keeps the job's SLURM_CPUS_PER_TASK (none here),
	// defaults to block, and sets nothing about an unknown srun.
	st = stepOf(1, &model.StepSpec{Distribution: "cyclic,Pack"}, model.StepNode{Node: "node1", CPUs: 2, Tasks: []int{0, 1}})
	if got := envMap(t, StepEnv(base, j, st, "node1", 0, 0, 0, "", 0)); got["SLURM_DISTRIBUTION"] != "cyclic" {
		t.Errorf("cyclic,Pack: SLURM_DISTRIBUTION = %q", got["SLURM_DISTRIBUTION"])
	}
	st = stepOf(0, &model.StepSpec{}, model.StepNode{Node: "node1", CPUs: 2, Tasks: []int{0, 1}})
	got = envMap(t, StepEnv(base, j, st, "node1", 0, 1, 1, "", 0))
	for k, v := range map[string]string{
		"SLURM_STEP_ID": "0", "SLURM_STEP_NODELIST": "node1", "SLURM_STEP_TASKS_PER_NODE": "2", "SLURM_NTASKS": "2",
		"SLURM_NNODES": "1", "SLURM_GTIDS": "0,1", "SLURM_CPUS_ON_NODE": "2", "SLURM_DISTRIBUTION": "block",
		"SLURM_PROCID": "1", "SLURM_LOCALID": "1", "SLURM_NODEID": "0",
	} {
		if got[k] != v {
			t.Errorf("plain step: %s = %q, want %q", k, got[k], v)
		}
	}
	for _, k := range []string{"SLURM_CPUS_PER_TASK", "SLURM_SRUN_COMM_HOST", "SLURM_LAUNCH_NODE_IPADDR", "SLURM_SRUN_COMM_PORT", "SLURM_STEP_LAUNCHER_PORT"} {
		if v, ok := got[k]; ok {
			t.Errorf("plain step: %s = %q is set", k, v)
		}
	}

	// Names unique, base order kept, new names appended.
	env := StepEnv([]string{"A=1", "SLURM_PROCID=9", "B=2"}, j, st, "node1", 0, 0, 0, "", 0)
	if env[0] != "A=1" || env[1] != "SLURM_PROCID=0" || env[2] != "B=2" {
		t.Errorf("order: %v", env[:3])
	}
}

func TestStepOrderUnsortable(t *testing.T) {
	// Names a hostlist cannot carry keep the layout order.
	st := stepOf(0, nil, model.StepNode{Node: "b[1]", Tasks: []int{0}}, model.StepNode{Node: "a", Tasks: []int{1, 2}})
	names, counts := stepOrder(st)
	if !slices.Equal(names, []string{"b[1]", "a"}) || !slices.Equal(counts, []int{1, 2}) {
		t.Errorf("stepOrder = %v %v", names, counts)
	}
}

func TestExpandStepPattern(t *testing.T) {
	j := baseJob()
	arr := baseJob()
	arr.ID, arr.ArrayJobID, arr.ArrayTaskID = 133, 120, 13
	st := stepOf(2, nil, model.StepNode{Node: "node1"}, model.StepNode{Node: "gpu01.example"})
	batch := stepOf(model.StepBatch, nil, model.StepNode{Node: "node1"})
	tests := []struct {
		pattern string
		j       *model.Job
		s       *model.Step
		want    string
	}{
		{"out-%t.txt", j, st, "out-5.txt"},
		{"%4t", j, st, "0005"},
		{"%n:%N", j, st, "1:gpu01"},
		{"%j.%s", j, st, "41951.2"},
		{"%J", j, st, "41951.2"},
		{"%u-%x", j, st, "alice-sample"},
		{"%A_%a-%t", arr, st, "120_13-5"},
		{"%3n%%", j, st, "001%"},
		{"%J %s", j, batch, "41951 batch"},
		{`\%t`, j, st, "%t"},
	}
	for _, tc := range tests {
		if got := ExpandStepPattern(tc.pattern, tc.j, tc.s, "gpu01.example", 1, 5); got != tc.want {
			t.Errorf("ExpandStepPattern(%q) = %q, want %q", tc.pattern, got, tc.want)
		}
	}
}
