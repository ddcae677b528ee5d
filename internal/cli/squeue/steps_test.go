package squeue

import (
	"os/user"
	"slices"
	"testing"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/model"
)

const stepHeader = "         STEPID     NAME PARTITION     USER      TIME NODELIST\n"

// stepQueue holds running batch, srun and array jobs with steps in several
// states, a pending job and a completing one.
func stepQueue() []*model.Job {
	now := refNow.Unix()
	job := func(id model.JobID, user string, uid uint32, part string, interactive bool, start int64, alloc ...model.NodeAlloc) *model.Job {
		return &model.Job{
			ID: id, ArrayTaskID: model.NoArrayTask, UserName: user, UserID: uid, Partition: part,
			State: model.JobRunning, StartTime: start, Alloc: alloc, TimeLimit: model.Unlimited,
			Spec: &model.JobSpec{Interactive: interactive},
		}
	}
	step := func(id model.StepID, name string, state model.JobState, start int64, layout ...model.StepNode) *model.Step {
		s := &model.Step{ID: id, Name: name, State: state, StartTime: start, Layout: layout}
		for _, n := range layout {
			s.NTasks += len(n.Tasks)
		}
		return s
	}

	batch := job(200, "alice", 1001, "debug", false, now-125,
		model.NodeAlloc{Node: "n1", CPUs: 4, Mem: 1024}, model.NodeAlloc{Node: "n2", CPUs: 4, Mem: 1024})
	batch.Steps = []*model.Step{
		step(0, "hostname", model.JobRunning, now-65,
			model.StepNode{Node: "n1", CPUs: 4, Tasks: []int{0, 1, 2, 3}}, model.StepNode{Node: "n2", CPUs: 4, Tasks: []int{4, 5, 6, 7}}),
		step(1, "old", model.JobCompleted, now-100, model.StepNode{Node: "n1", CPUs: 1, Tasks: []int{0}}),
		step(2, "wait", model.JobPending, 0),
	}
	srun := job(201, "bob", 1002, "batch", true, now-3700, model.NodeAlloc{Node: "n3", CPUs: 2})
	srun.Steps = []*model.Step{step(0, "bash", model.JobRunning, now-3700, model.StepNode{Node: "n3", CPUs: 2, Tasks: []int{0}})}
	task := job(205, "alice", 1001, "gpu", false, now-30, model.NodeAlloc{Node: "g1", CPUs: 8})
	task.ArrayJobID, task.ArrayTaskID = 202, 3
	train := step(0, "train", model.JobRunning, now-20, model.StepNode{Node: "g1", CPUs: 8, Tasks: []int{0, 1}})
	train.TimeLimit = 600
	task.Steps = []*model.Step{train}
	pending := job(203, "alice", 1001, "debug", false, 0)
	pending.State = model.JobPending
	completing := job(204, "bob", 1002, "debug", false, now-50, model.NodeAlloc{Node: "n4", CPUs: 1})
	completing.State, completing.Completing = model.JobCompleted, true
	young := job(199, "bob", 1002, "debug", false, now-5, model.NodeAlloc{Node: "n5", CPUs: 1})
	return []*model.Job{batch, srun, task, pending, completing, young}
}

func stepClient() *fakeClient { return &fakeClient{jobs: stepQueue(), now: refNow.Unix()} }

// stepDefault is `squeue -s` over stepQueue.
const stepDefault = stepHeader +
	"          201.0     bash     batch      bob   1:01:40 n3\n" +
	"      199.batch    batch     debug      bob      0:05 n5\n" +
	"          200.0 hostname     debug    alice      1:05 n[1-2]\n" +
	"      200.batch    batch     debug    alice      2:05 n1\n" +
	"        202_3.0    train       gpu    alice      0:20 g1\n" +
	"    202_3.batch    batch       gpu    alice      0:30 g1\n"

func TestStepListing(t *testing.T) {
	bob := &cli.Host{CurrentUser: func() (*user.User, error) { return &user.User{Uid: "1002", Username: "bob"}, nil }}

	all := "201.0\n199.batch\n200.0\n200.batch\n202_3.0\n202_3.batch\n"
	tests := []struct {
		name    string
		args    []string
		environ []string
		want    string
	}{
		{"default", []string{"-s"}, nil, stepDefault},
		{"long form", []string{"--steps"}, nil, stepDefault},
		{"explicit default format", []string{"-s", "-o", StepFormat}, nil, stepDefault},
		{"env format ignored", []string{"-s"}, []string{"SQUEUE_FORMAT=%i", "SQUEUE_FORMAT2=StepID"}, stepDefault},
		{"long adds the date", []string{"-s", "-l"}, nil, "Sun Nov 22 05:10:05 2026\n" + stepDefault},
		{"noheader", []string{"-h", "-s", "-o", "%i"}, nil, all},
		{"step list", []string{"-h", "-s200.batch,202_3.0", "-o", "%i"}, nil, "200.batch\n202_3.0\n"},
		{"step list after flag", []string{"-h", "-o", "%i", "--steps", "201.0"}, nil, "201.0\n"},
		{"array base id", []string{"-h", "-s202.0", "-o", "%i"}, nil, "202_3.0\n"},
		{"other array task", []string{"-h", "-s202_4.0", "-o", "%i"}, nil, ""},
		{"job filter", []string{"-h", "-s", "-j200", "-o", "%i"}, nil, "200.0\n200.batch\n"},
		{"job and step filters", []string{"-h", "--steps=200.0", "-j", "201", "-o", "%i"}, nil, ""},
		{"user", []string{"-h", "-s", "-u", "bob", "-o", "%i"}, nil, "201.0\n199.batch\n"},
		{"uid", []string{"-h", "-s", "--user=1001", "-o", "%i"}, nil, "200.0\n200.batch\n202_3.0\n202_3.batch\n"},
		{"me", []string{"-h", "-s", "--me", "-o", "%i"}, nil, "201.0\n199.batch\n"},
		{"notme", []string{"-h", "-s", "--notme", "-o", "%i"}, nil, "200.0\n200.batch\n202_3.0\n202_3.batch\n"},
		{"partition", []string{"-h", "-s", "-p", "gpu,batch", "-o", "%i"}, nil, "201.0\n202_3.0\n202_3.batch\n"},
		{"step nodes", []string{"-h", "-s", "-w", "n2", "-o", "%i"}, nil, "200.0\n"},
		{"job-only filters ignored", []string{"-h", "-s", "-t", "PD", "-n", "x", "-A", "y", "-q", "z", "-o", "%i"}, nil, all},
		{"sort descending id", []string{"-h", "-s", "-o", "%i", "-S", "-i"}, nil,
			"202_3.batch\n202_3.0\n201.0\n200.batch\n200.0\n199.batch\n"},
		{"sort time used", []string{"-h", "-s", "-o", "%i %M", "-S", "M"}, nil,
			"199.batch 0:05\n202_3.0 0:20\n202_3.batch 0:30\n200.0 1:05\n200.batch 2:05\n201.0 1:01:40\n"},
		{"sort ignores job letters", []string{"-h", "-s", "-o", "%i", "-S", "t,-p,u,i"}, nil,
			"200.0\n200.batch\n202_3.0\n202_3.batch\n199.batch\n201.0\n"},
		{"env sort", []string{"-h", "-s", "-o", "%i"}, []string{"SQUEUE_SORT=-S"}, "199.batch\n202_3.0\n202_3.batch\n200.0\n200.batch\n201.0\n"},
		{"fields", []string{"-s", "-j200,202", "-o", "%i|%A|%l|%S|%U|%P|%N|%b"}, nil,
			"STEPID|TASKS|TIME_LIMIT|START_TIME|UID|PARTITION|NODELIST|TRES_PER_JOB\n" +
				"200.0|8|UNLIMITED|2026-11-22T05:09:00|1001|debug|n[1-2]|(null)\n" +
				"200.batch|1|UNLIMITED|2026-11-22T05:08:00|1001|debug|n1|(null)\n" +
				"202_3.0|2|10:00|2026-11-22T05:09:45|1001|gpu|g1|(null)\n" +
				"202_3.batch|1|UNLIMITED|2026-11-22T05:09:35|1001|gpu|g1|(null)\n"},
		{"start header left", []string{"-s199.batch", "-o", "%.20S|%.6i"}, nil,
			"START_TIME          |STEPID\n" +
				" 2026-11-22T05:10:00|199.ba\n"},
		{"Format", []string{"-h", "-s", "-p", "gpu", "-O", "StepID:15,StepState:10,NumCPUs:5,JobID:7,arrayjobid:7,ArrayTaskID:5,Network"}, nil,
			"202_3.0        RUNNING   8    205    202    3    (null)              \n" +
				"202_3.batch    RUNNING   8    205    202    3    (null)              \n"},
		{"Format plain job", []string{"-s201.0", "-O", "StepID:8,ArrayJobID:.13,ArrayTaskID:.14,TimeLimit:.11"}, nil,
			"STEPID   ARRAY_JOB_ID ARRAY_TASK_ID TIME_LIMIT\n" +
				"201.0               0           N/A  UNLIMITED\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runSqueueOn(t, bob, stepClient(), tt.environ, tt.args...)
			if code != 0 || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if out != tt.want {
				t.Errorf("got\n%s\nwant\n%s", out, tt.want)
			}
		})
	}
}

func TestStepQuery(t *testing.T) {
	for _, tt := range []struct {
		args []string
		ids  []model.JobID
	}{
		{[]string{"-s"}, nil},
		{[]string{"-s", "-j200,202_3"}, []model.JobID{200, 202}},
		{[]string{"-s202_3.0,202_4.0,201.0"}, []model.JobID{202, 201}},
	} {
		c := stepClient()
		if _, errOut, code := runSqueue(t, c, nil, tt.args...); code != 0 || errOut != "" {
			t.Fatalf("squeue %q: exit %d stderr %q", tt.args, code, errOut)
		}
		q := c.queries[0]
		if !q.Summary || !q.WithSteps || q.IncludeAll || !slices.Equal(q.IDs, tt.ids) {
			t.Errorf("squeue %q asked %+v, want a summary with steps of %v", tt.args, q, tt.ids)
		}
	}
}

func TestStepErrors(t *testing.T) {
	tests := []struct {
		name    string
		client  cli.Client
		args    []string
		wantErr string
	}{
		{"step list without step", stepClient(), []string{"-s200"}, "squeue: error: Invalid job_step id: 200.??\n"},
		{"bad step", stepClient(), []string{"-s200.x"}, "squeue: error: Invalid job_step id: 200.x\n"},
		{"bad job in list", stepClient(), []string{"-s200.0,abc.1"}, "squeue: error: Invalid job_step id: abc.1\n"},
		{"job letter", stepClient(), []string{"-s", "-o", "%i %t"}, "squeue: error: Invalid job step format specification: t\n"},
		{"job name", stepClient(), []string{"-s", "-O", "StepID,Reason"}, "squeue: error: Invalid job step format specification: Reason\n"},
		{"jobs without list", stepClient(), []string{"-s", "-j"}, "squeue: error: Incompatible options --jobs and --steps\n"},
		{"no controller", nil, []string{"-s"}, "slurm_get_job_steps error: Unable to contact slurm controller (connect failure)\n"},
	}
	for _, tt := range tests {
		out, errOut, code := runSqueue(t, tt.client, nil, tt.args...)
		if code != 1 || errOut != tt.wantErr || out != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 stderr %q", tt.name, code, out, errOut, tt.wantErr)
		}
	}
}

func TestStepsOfReferenceQueue(t *testing.T) {
	for _, c := range []struct {
		args []string
		out  string
		code int
	}{
		{[]string{"-s"}, stepHeader + "    41938.batch    batch     debug     root      0:05 vm\n", 0},
		{[]string{"-s41932.0"}, stepHeader, 0},
		{[]string{"--steps", "-j41932"}, stepHeader, 0},
		{[]string{"-h", "-s", "-O", "StepID,StepState"}, "41938.batch         RUNNING             \n", 0},
		{[]string{"-s", "-j"}, "", 1},
	} {
		out, _, code := runSqueue(t, refClient(), nil, c.args...)
		if out != c.out || code != c.code {
			t.Errorf("squeue %q = %q exit %d, want %q exit %d", c.args, out, code, c.out, c.code)
		}
	}
}
