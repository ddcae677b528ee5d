package stepenv

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

func TestRunLengthCounts(t *testing.T) {
	tests := []struct {
		in   []int
		want string
	}{
		{nil, ""},
		{[]int{1}, "1"},
		{[]int{2, 2, 2, 1}, "2(x3),1"},
		{[]int{72, 72, 36}, "72(x2),36"},
		{[]int{1, 2, 1}, "1,2,1"},
		{[]int{4, 4}, "4(x2)"},
		{[]int{0, 0, 3, 3, 3}, "0(x2),3(x3)"},
	}
	for _, tc := range tests {
		if got := RunLengthCounts(tc.in); got != tc.want {
			t.Errorf("RunLengthCounts(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTaskLayout(t *testing.T) {
	tests := []struct {
		name                 string
		ntasks               int
		cpus                 []int
		cpusPerTask, perNode int
		want                 []int
	}{
		{"one node", 1, []int{1}, 1, 0, []int{1}},
		{"fill in order", 5, []int{4, 4}, 1, 0, []int{4, 1}},
		{"one each first", 2, []int{4, 4}, 1, 0, []int{1, 1}},
		{"cpus per task", 3, []int{4, 4}, 2, 0, []int{2, 1}},
		{"capped per node", 4, []int{72, 72}, 1, 2, []int{2, 2}},
		{"overcommit", 7, []int{2, 1}, 1, 0, []int{4, 3}},
		{"node too small for a task", 2, []int{1, 4}, 2, 0, []int{0, 2}},
		{"no nodes", 3, nil, 1, 0, []int{}},
	}
	for _, tc := range tests {
		got := taskLayout(tc.ntasks, tc.cpus, tc.cpusPerTask, tc.perNode)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestArrayStep(t *testing.T) {
	for _, tc := range []struct {
		ids  []int
		want int
	}{
		{[]int{5}, 1}, {[]int{1, 2, 3}, 1}, {[]int{0, 4, 8, 12}, 4}, {[]int{1, 3, 7}, 1},
	} {
		if got := arrayStep(tc.ids); got != tc.want {
			t.Errorf("arrayStep(%v) = %d, want %d", tc.ids, got, tc.want)
		}
	}
}

// baseJob is job 41951 on two 72-CPU nodes plus a half node, submitted
// from /home/alice with -N3 and no task options.
func baseJob() *model.Job {
	return &model.Job{
		ID: 41951, ArrayTaskID: model.NoArrayTask,
		UserID: 1001, GroupID: 1002, UserName: "alice",
		Partition: "debug", Name: "sample", TimeLimit: 3600, StartTime: 1700000000,
		Alloc: []model.NodeAlloc{
			{Node: "node10", CPUs: 36, Mem: 1000},
			{Node: "node2", CPUs: 72, Mem: 2000},
			{Node: "node1", CPUs: 72, Mem: 2000},
		},
		Spec: &model.JobSpec{
			Name: "sample", WorkDir: "/home/alice", SubmitHost: "login1",
			Env:       []string{"PATH=/usr/bin:/bin", "HOME=/home/alice", "FOO=bar"},
			TimeLimit: 3600, MinNodes: 3, MaxNodes: model.Unset, NTasks: model.Unset,
			CPUsPerTask: model.Unset, TasksPerNode: model.Unset,
			MemPerNode: model.Unset, MemPerCPU: model.Unset,
		},
	}
}

func envMap(t *testing.T, env []string) map[string]string {
	t.Helper()
	m := make(map[string]string, len(env))
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			t.Fatalf("entry without '=': %q", kv)
		}
		if _, dup := m[k]; dup {
			t.Fatalf("duplicate variable %s in %v", k, env)
		}
		m[k] = v
	}
	return m
}

func TestBatchEnvBasics(t *testing.T) {
	env := BatchEnv(baseJob(), NodeInfo{Name: "node1"}, "mycluster", 1)
	m := envMap(t, env)
	want := map[string]string{
		"PATH": "/usr/bin:/bin", "HOME": "/home/alice", "FOO": "bar",
		"SLURM_JOB_ID": "41951", "SLURM_JOBID": "41951", "SLURM_JOB_NAME": "sample",
		"SLURM_JOB_PARTITION": "debug",
		"SLURM_JOB_NODELIST":  "node[1-2,10]", "SLURM_NODELIST": "node[1-2,10]",
		"SLURM_JOB_NUM_NODES": "3", "SLURM_NNODES": "3",
		// Node-list order, not allocation order; without -n the tasks
		// follow the CPUs.
		"SLURM_JOB_CPUS_PER_NODE": "72(x2),36",
		"SLURM_TASKS_PER_NODE":    "72(x2),36",
		"SLURM_CPUS_ON_NODE":      "72",
		"SLURM_SUBMIT_DIR":        "/home/alice", "SLURM_SUBMIT_HOST": "login1",
		"SLURM_CLUSTER_NAME": "mycluster", "SLURMD_NODENAME": "node1", "HOSTNAME": "node1",
		"SLURM_NODEID": "0", "SLURM_PROCID": "0", "SLURM_LOCALID": "0", "SLURM_GTIDS": "0",
		"SLURM_JOB_UID": "1001", "SLURM_JOB_USER": "alice", "SLURM_JOB_GID": "1002",
		"SLURM_JOB_START_TIME": "1700000000", "SLURM_JOB_END_TIME": "1700003600",
		"SLURM_PRIO_PROCESS": "0", "ENVIRONMENT": "BATCH",
		"USER": "alice", "LOGNAME": "alice",
	}
	if !maps.Equal(m, want) {
		for k, v := range want {
			if m[k] != v {
				t.Errorf("%s = %q, want %q", k, m[k], v)
			}
		}
		for k, v := range m {
			if _, ok := want[k]; !ok {
				t.Errorf("unexpected %s=%q", k, v)
			}
		}
	}
	// The exported environment keeps its order at the front.
	if !slices.Equal(env[:3], []string{"PATH=/usr/bin:/bin", "HOME=/home/alice", "FOO=bar"}) {
		t.Errorf("exported variables reordered: %v", env[:3])
	}
}

func TestBatchEnvRules(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(j *model.Job, n *NodeInfo)
		want   map[string]string // "" = must be absent
	}{
		{"ntasks", func(j *model.Job, _ *NodeInfo) { j.Spec.NTasks = 4 }, map[string]string{
			"SLURM_NTASKS": "4", "SLURM_NPROCS": "4", "SLURM_TASKS_PER_NODE": "2,1(x2)",
			"SLURM_NTASKS_PER_NODE": "",
		}},
		{"ntasks per node", func(j *model.Job, _ *NodeInfo) { j.Spec.TasksPerNode = 2 }, map[string]string{
			"SLURM_NTASKS": "6", "SLURM_NPROCS": "6", "SLURM_NTASKS_PER_NODE": "2",
			"SLURM_TASKS_PER_NODE": "2(x3)",
		}},
		{"cpus per task", func(j *model.Job, _ *NodeInfo) { j.Spec.CPUsPerTask = 4 }, map[string]string{
			"SLURM_CPUS_PER_TASK": "4", "SLURM_TASKS_PER_NODE": "18(x2),9", "SLURM_NTASKS": "",
		}},
		{"no task options", func(*model.Job, *NodeInfo) {}, map[string]string{
			"SLURM_NTASKS": "", "SLURM_NPROCS": "", "SLURM_CPUS_PER_TASK": "", "SLURM_NTASKS_PER_NODE": "",
			"SLURM_MEM_PER_NODE": "", "SLURM_MEM_PER_CPU": "", "SLURM_JOB_ACCOUNT": "", "SLURM_JOB_QOS": "",
			"SLURM_ARRAY_TASK_ID": "", "SLURM_RESTART_COUNT": "", "SLURM_JOB_DEPENDENCY": "",
			"SLURM_EXPORT_ENV": "", "SLURM_TASK_PID": "",
		}},
		{"mem per node", func(j *model.Job, _ *NodeInfo) { j.Spec.MemPerNode = 500 }, map[string]string{
			"SLURM_MEM_PER_NODE": "500", "SLURM_MEM_PER_CPU": "",
		}},
		{"mem 0 = whole node", func(j *model.Job, _ *NodeInfo) { j.Spec.MemPerNode = 0 }, map[string]string{
			"SLURM_MEM_PER_NODE": "2000",
		}},
		{"mem per cpu", func(j *model.Job, _ *NodeInfo) { j.Spec.MemPerCPU = 250 }, map[string]string{
			"SLURM_MEM_PER_CPU": "250", "SLURM_MEM_PER_NODE": "",
		}},
		{"account qos dependency export", func(j *model.Job, _ *NodeInfo) {
			j.Spec.Account, j.Spec.QOS, j.Spec.Export = "physics", "high", "ALL,FOO"
			j.Spec.Dependency = &model.Dependency{Raw: "afterok:12:13"}
		}, map[string]string{
			"SLURM_JOB_ACCOUNT": "physics", "SLURM_JOB_QOS": "high", "SLURM_EXPORT_ENV": "ALL,FOO",
			"SLURM_JOB_DEPENDENCY": "afterok:12:13",
		}},
		{"unlimited", func(j *model.Job, _ *NodeInfo) { j.TimeLimit = model.Unlimited }, map[string]string{
			"SLURM_JOB_END_TIME": "", "SLURM_JOB_START_TIME": "1700000000",
		}},
		{"not started yet", func(j *model.Job, _ *NodeInfo) { j.StartTime = 0 }, map[string]string{
			"SLURM_JOB_START_TIME": "1", "SLURM_JOB_END_TIME": "3601",
		}},
		{"restarted", func(j *model.Job, _ *NodeInfo) { j.Restarts = 2 }, map[string]string{
			"SLURM_RESTART_COUNT": "2",
		}},
		{"node cpus given", func(_ *model.Job, n *NodeInfo) { n.CPUs = 8 }, map[string]string{
			"SLURM_CPUS_ON_NODE": "8",
		}},
		{"array task", func(j *model.Job, _ *NodeInfo) {
			j.ID, j.ArrayJobID, j.ArrayTaskID = 41960, 41950, 8
			j.Spec.Array = &model.ArraySpec{Raw: "0-12:4", TaskIDs: []int{0, 4, 8, 12}}
		}, map[string]string{
			"SLURM_JOB_ID": "41960", "SLURM_ARRAY_JOB_ID": "41950", "SLURM_ARRAY_TASK_ID": "8",
			"SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "12",
			"SLURM_ARRAY_TASK_STEP": "4",
		}},
		{"irregular array", func(j *model.Job, _ *NodeInfo) {
			j.ArrayJobID, j.ArrayTaskID = 41950, 7
			j.Spec.Array = &model.ArraySpec{Raw: "1,3,7", TaskIDs: []int{1, 3, 7}}
		}, map[string]string{
			"SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "7",
			"SLURM_ARRAY_TASK_STEP": "1",
		}},
		{"single node without alloc", func(j *model.Job, n *NodeInfo) { j.Alloc = nil; n.CPUs = 4 }, map[string]string{
			"SLURM_JOB_NODELIST": "node1", "SLURM_JOB_NUM_NODES": "1", "SLURM_JOB_CPUS_PER_NODE": "4",
			"SLURM_TASKS_PER_NODE": "4", "SLURM_CPUS_ON_NODE": "4",
		}},
		{"name falls back to spec", func(j *model.Job, _ *NodeInfo) { j.Name = "" }, map[string]string{
			"SLURM_JOB_NAME": "sample",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			job, node := baseJob(), NodeInfo{Name: "node1"}
			tc.mutate(job, &node)
			m := envMap(t, BatchEnv(job, node, "c", 1))
			for k, v := range tc.want {
				got, ok := m[k]
				switch {
				case v == "" && ok:
					t.Errorf("%s=%q set, want it absent", k, got)
				case v != "" && got != v:
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

func TestBatchEnvExportedValues(t *testing.T) {
	job := baseJob()
	job.Spec.Env = []string{
		"FOO=1", "NOEQUALS", "=empty-name", "FOO=2", // duplicate: the later wins, in place
		"SLURM_JOB_ID=999", "SLURM_NTASKS=64", "SLURM_ARRAY_TASK_ID=3", // an outer job's
		"SLURM_PRIO_PROCESS=5", "USER=al", "SLURM_CONF=/etc/slurm.conf",
	}
	env := BatchEnv(job, NodeInfo{Name: "node1"}, "c", 1)
	m := envMap(t, env)
	for k, v := range map[string]string{
		"FOO": "2", "SLURM_JOB_ID": "41951", "SLURM_PRIO_PROCESS": "5", "USER": "al",
		"LOGNAME": "alice", "SLURM_CONF": "/etc/slurm.conf",
	} {
		if m[k] != v {
			t.Errorf("%s = %q, want %q", k, m[k], v)
		}
	}
	for _, k := range []string{"SLURM_NTASKS", "SLURM_ARRAY_TASK_ID", "NOEQUALS", ""} {
		if _, ok := m[k]; ok {
			t.Errorf("%q should have been dropped", k)
		}
	}
	if env[0] != "FOO=2" {
		t.Errorf("FOO moved: %v", env)
	}
}

func TestBatchEnvNilSpec(t *testing.T) {
	job := baseJob()
	job.Spec = nil
	m := envMap(t, BatchEnv(job, NodeInfo{Name: "node2"}, "c", 1))
	if m["SLURM_JOB_ID"] != "41951" || m["SLURM_CPUS_ON_NODE"] != "72" {
		t.Fatalf("got %v", m)
	}
}

func TestOverrideDefaultLookup(t *testing.T) {
	env := []string{"A=1", "B=2", "A=3"}
	if got := Override(env, "B=x", "C=y", "bad"); !slices.Equal(got, []string{"A=3", "B=x", "C=y"}) {
		t.Errorf("Override: %v", got)
	}
	if got := Default(env, "B=x", "HOME=/h"); !slices.Equal(got, []string{"A=3", "B=2", "HOME=/h"}) {
		t.Errorf("Default: %v", got)
	}
	if v, ok := Lookup(env, "A"); !ok || v != "3" {
		t.Errorf("Lookup A = %q %v", v, ok)
	}
	if _, ok := Lookup(env, "Z"); ok {
		t.Error("Lookup Z found")
	}
}
