package scontrol

import (
	"slices"
	"testing"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/model"
)

// stepJobs holds a batch job running two srun steps (a third finished), an
// srun job, a running array task with no recorded step, a pending job and
// a finished one.
func stepJobs() *fakeClient {
	job := func(id model.JobID, uid uint32, part string, interactive bool, state model.JobState, start string, alloc ...model.NodeAlloc) *model.Job {
		j := &model.Job{ID: id, ArrayTaskID: model.NoArrayTask, UserID: uid, UserName: "u", Partition: part,
			State: state, Alloc: alloc, TimeLimit: model.Unlimited, Spec: &model.JobSpec{Interactive: interactive}}
		if start != "" {
			j.StartTime = ts(start)
		}
		return j
	}
	batch := job(300, 1000, "debug", false, model.JobRunning, "2026-11-22T05:00:00",
		model.NodeAlloc{Node: "node1", CPUs: 4, Mem: 2048}, model.NodeAlloc{Node: "node2", CPUs: 4, Mem: 2048})
	batch.Steps = []*model.Step{
		{ID: 0, Name: "hostname", State: model.JobRunning, NTasks: 4, StartTime: ts("2026-11-22T05:01:00"),
			Layout: []model.StepNode{{Node: "node2", CPUs: 2, Tasks: []int{2, 3}}, {Node: "node1", CPUs: 2, Tasks: []int{0, 1}}},
			Spec:   &model.StepSpec{SrunHost: "login1", SrunPID: 1234}},
		{ID: 1, Name: "sleep", State: model.JobCompleted, NTasks: 1, StartTime: ts("2026-11-22T05:02:00"),
			Layout: []model.StepNode{{Node: "node1", CPUs: 1, Tasks: []int{0}}}, Spec: &model.StepSpec{}},
		{ID: 2, Name: "cyclic", State: model.JobRunning, NTasks: 1, StartTime: ts("2026-11-22T05:03:00"), TimeLimit: 5400,
			Layout: []model.StepNode{{Node: "node2", CPUs: 1, Tasks: []int{0}}},
			Spec:   &model.StepSpec{Distribution: model.DistCyclic, SrunHost: "login1", SrunPID: 1240}},
	}
	srun := job(301, 0, "gpu", true, model.JobRunning, "2026-11-22T05:05:00", model.NodeAlloc{Node: "gpu1", CPUs: 8})
	srun.Steps = []*model.Step{{ID: 0, Name: "bash", State: model.JobRunning, NTasks: 1, StartTime: ts("2026-11-22T05:05:01"),
		Layout: []model.StepNode{{Node: "gpu1", CPUs: 8, Tasks: []int{0}}},
		Spec:   &model.StepSpec{SrunHost: "10.0.0.5", SrunPID: 4321, Distribution: model.DistBlock}}}
	task := job(310, 1000, "debug", false, model.JobRunning, "2026-11-22T05:09:00", model.NodeAlloc{Node: "node3", CPUs: 1, Mem: 500})
	task.ArrayJobID, task.ArrayTaskID = 302, 7
	pending := job(303, 1000, "debug", false, model.JobPending, "")
	done := job(304, 1000, "debug", false, model.JobCompleted, "2026-11-22T04:00:00", model.NodeAlloc{Node: "node4", CPUs: 1})
	done.EndTime = ts("2026-11-22T04:30:00")
	done.Steps = []*model.Step{{ID: 0, Name: "x", State: model.JobCompleted, Layout: []model.StepNode{{Node: "node4", CPUs: 1}}}}
	return &fakeClient{now: ts("2026-11-22T05:10:14"), jobs: []*model.Job{batch, srun, task, pending, done}}
}

func TestShowStepGolden(t *testing.T) {
	fc := stepJobs()
	res := run(t, fc, nil, "show", "step")
	if res.code != 0 || res.stderr != "" {
		t.Fatalf("code %d stderr %q", res.code, res.stderr)
	}
	golden(t, "show_step.golden", res.stdout)
	if want := batch300 + step0 + step2 + srunStep + arrayBatch; res.stdout != want {
		t.Errorf("show step = %q\nwant the records in job order %q", res.stdout, want)
	}
	if q := fc.queries[0]; !q.Summary || !q.WithSteps || q.IncludeAll || q.IDs != nil {
		t.Errorf("query %+v, want a summary with steps of the active jobs", q)
	}

	res = run(t, stepJobs(), nil, "-o", "show", "steps")
	if res.code != 0 || res.stderr != "" {
		t.Fatalf("-o: code %d stderr %q", res.code, res.stderr)
	}
	golden(t, "show_step_oneliner.golden", res.stdout)
}

func TestShowStep(t *testing.T) {
	tests := []struct {
		name           string
		fc             *fakeClient
		args           []string
		code           int
		stdout, stderr string
	}{
		{"one step", stepJobs(), []string{"show", "step", "300.0"}, 0, step0, ""},
		{"key=value form", stepJobs(), []string{"show", "step=300.0"}, 0, step0, ""},
		{"one job", stepJobs(), []string{"show", "step", "300"}, 0, batch300 + step0 + step2, ""},
		{"srun job", stepJobs(), []string{"show", "step", "301"}, 0, srunStep, ""},
		{"array base id", stepJobs(), []string{"show", "step", "302"}, 0, arrayBatch, ""},
		{"array task step", stepJobs(), []string{"show", "step", "302_7.batch"}, 0, arrayBatch, ""},
		{"array task by its own id", stepJobs(), []string{"show", "step", "310.batch"}, 0, arrayBatch, ""},
		{"unknown step", stepJobs(), []string{"show", "step", "300.7"}, 1, "Job step 300.7 not found\n", ""},
		{"finished step", stepJobs(), []string{"show", "step", "300.1"}, 1, "Job step 300.1 not found\n", ""},
		{"unknown array task", stepJobs(), []string{"show", "step", "302_8"}, 1, "Job step 302_8. not found\n", ""},
		{"job without steps", stepJobs(), []string{"show", "step", "303"}, 1, "Job step 303. not found\n", ""},
		{"finished job", stepJobs(), []string{"show", "step", "304.0"}, 1, "Job step 304.0 not found\n", ""},
		{"quiet", stepJobs(), []string{"-Q", "show", "step", "300.7"}, 1, "", ""},
		{"unknown job", stepJobs(), []string{"show", "step", "999"}, 1, "",
			"slurm_get_job_steps error: Invalid job id specified\n"},
		{"unknown job step", stepJobs(), []string{"show", "step", "999.1"}, 1, "",
			"slurm_get_job_steps error: Invalid job id specified\n"},
		{"bad id", stepJobs(), []string{"show", "step", "abc"}, 1, "",
			"slurm_get_job_steps error: Invalid job id specified\n"},
		{"no steps", &fakeClient{jobs: stepJobs().jobs[3:]}, []string{"show", "step"}, 0, "No job steps in the system\n", ""},
		{"no steps quiet", &fakeClient{jobs: stepJobs().jobs[3:]}, []string{"-Q", "show", "step"}, 0, "", ""},
		{"no controller", nil, []string{"show", "step"}, 1, "",
			"slurm_get_job_steps error: Unable to contact slurm controller (connect failure)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, tt.fc, nil, tt.args...)
			if res.code != tt.code || res.stdout != tt.stdout || res.stderr != tt.stderr {
				t.Errorf("got code %d\nstdout %q\nstderr %q\nwant code %d\nstdout %q\nstderr %q",
					res.code, res.stdout, res.stderr, tt.code, tt.stdout, tt.stderr)
			}
		})
	}
}

// Records of show_step.golden.
const batch300 = "StepId=300.batch UserId=1000 StartTime=2026-11-22T05:00:00 TimeLimit=UNLIMITED\n" +
	"   State=RUNNING Partition=debug NodeList=node1\n" +
	"   Nodes=1 CPUs=4 Tasks=1 Name=batch Network=(null)\n" +
	"   TRES=cpu=4,mem=2G,node=1\n" +
	"   ResvPorts=(null)\n" +
	"   CPUFreqReq=Default\n" +
	"   SrunHost:Pid=(null):0\n\n"

const step2 = "StepId=300.2 UserId=1000 StartTime=2026-11-22T05:03:00 TimeLimit=01:30:00\n" +
	"   State=RUNNING Partition=debug NodeList=node2\n" +
	"   Nodes=1 CPUs=1 Tasks=1 Name=cyclic Network=(null)\n" +
	"   TRES=cpu=1,mem=2G,node=1\n" +
	"   ResvPorts=(null)\n" +
	"   CPUFreqReq=Default Dist=Cyclic\n" +
	"   SrunHost:Pid=login1:1240\n\n"

const step0 = "StepId=300.0 UserId=1000 StartTime=2026-11-22T05:01:00 TimeLimit=UNLIMITED\n" +
	"   State=RUNNING Partition=debug NodeList=node[1-2]\n" +
	"   Nodes=2 CPUs=4 Tasks=4 Name=hostname Network=(null)\n" +
	"   TRES=cpu=4,mem=4G,node=2\n" +
	"   ResvPorts=(null)\n" +
	"   CPUFreqReq=Default Dist=Block\n" +
	"   SrunHost:Pid=login1:1234\n\n"

const arrayBatch = "StepId=302_7.batch UserId=1000 StartTime=2026-11-22T05:09:00 TimeLimit=UNLIMITED\n" +
	"   State=RUNNING Partition=debug NodeList=node3\n" +
	"   Nodes=1 CPUs=1 Tasks=1 Name=batch Network=(null)\n" +
	"   TRES=cpu=1,mem=500M,node=1\n" +
	"   ResvPorts=(null)\n" +
	"   CPUFreqReq=Default\n" +
	"   SrunHost:Pid=(null):0\n\n"

const srunStep = "StepId=301.0 UserId=0 StartTime=2026-11-22T05:05:01 TimeLimit=UNLIMITED\n" +
	"   State=RUNNING Partition=gpu NodeList=gpu1\n" +
	"   Nodes=1 CPUs=8 Tasks=1 Name=bash Network=(null)\n" +
	"   TRES=cpu=8,mem=0,node=1\n" +
	"   ResvPorts=(null)\n" +
	"   CPUFreqReq=Default Dist=Block\n" +
	"   SrunHost:Pid=10.0.0.5:4321\n\n"

func TestShowStepQuery(t *testing.T) {
	fc := stepJobs()
	run(t, fc, nil, "show", "step", "302_7.0")
	if q := fc.queries[0]; !q.Summary || !q.WithSteps || !q.IncludeAll || !slices.Equal(q.IDs, []model.JobID{302}) {
		t.Errorf("query %+v, want a summary with steps of job 302, finished jobs included", q)
	}
	if got := countExact(2048); got != "2K" {
		t.Errorf("countExact(2048) = %q", got)
	}
	if got := stepTargetText(cli.JobTarget{ID: 5, Tasks: []int{2}, HasStep: true, Step: model.StepExtern}); got != "5_2.extern" {
		t.Errorf("stepTargetText = %q", got)
	}
}
