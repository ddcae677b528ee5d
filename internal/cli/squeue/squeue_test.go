package squeue

import (
	"fmt"
	"os/user"
	"strings"
	"testing"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/model"
)

// refJob builds a job of the reference queue (slurm-22.05-outputs).
func refJob(id model.JobID, name string, prio uint32, reason string) *model.Job {
	return &model.Job{
		ID: id, ArrayTaskID: model.NoArrayTask, UserName: "root", Partition: "debug",
		Name: name, Priority: prio, Reason: reason, TimeLimit: model.Unlimited,
		SubmitTime: refNow.Unix() - 5,
		Spec: &model.JobSpec{Name: name, Partition: "debug", MinNodes: 1, NTasks: 1,
			CPUsPerTask: 1, MemPerNode: 250, MemPerCPU: model.Unset, TimeLimit: model.Unlimited},
	}
}

// refQueue is the queue of squeue_default.txt: nine pending jobs, an array
// of ten pending tasks with throttle 2, and one job running on vm.
func refQueue() []*model.Job {
	toobig := refJob(41941, "sample_toobig", 200, "PartitionConfig")
	toobig.Spec.CPUsPerTask = 100
	res := refJob(41936, "sample_res", 110, model.ReasonResources)
	res.Spec.CPUsPerTask, res.Spec.MemPerNode, res.TimeLimit = 2, 500, 600
	script := refJob(41940, "sample_script", 105, model.ReasonPriority)
	script.TimeLimit = 300
	after := refJob(41939, "sample_after", 104, model.ReasonDependency)
	after.Spec.Dependency = &model.Dependency{Raw: "afterok:41938"}
	held := refJob(41934, "sample_held", 0, model.ReasonHeldUser)
	held.HoldUser = true
	run := refJob(41938, "sample_busy", 50, model.ReasonNone)
	run.State, run.StartTime = model.JobRunning, refNow.Unix()-5
	run.Alloc = []model.NodeAlloc{{Node: "vm", CPUs: 1, Mem: 250}}
	jobs := []*model.Job{
		refJob(41932, "sample_sleep", 100, model.ReasonPriority),
		refJob(41933, "sample_parsable", 101, model.ReasonPriority),
		held, res, refJob(41937, "sample_gpu", 103, model.ReasonPriority),
		run, after, script, toobig,
	}
	arraySpec := refJob(0, "sample_array", 0, "").Spec
	arraySpec.Array = &model.ArraySpec{Raw: "1-10%2", TaskIDs: []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, Throttle: 2}
	for task := 10; task >= 1; task-- { // out of order on purpose
		j := refJob(41960+model.JobID(task), "sample_array", 102, model.ReasonPriority)
		if task == 1 {
			j.ID = 41935
		}
		j.ArrayJobID, j.ArrayTaskID, j.Spec = 41935, task, arraySpec
		jobs = append(jobs, j)
	}
	return jobs
}

func refClient() *fakeClient { return &fakeClient{jobs: refQueue(), now: refNow.Unix()} }

const refHeader = "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n"

// refDefault is `squeue` from squeue_default.txt, byte for byte.
const refDefault = refHeader +
	"             41941     debug sample_t     root PD       0:00      1 (PartitionConfig)\n" +
	"             41936     debug sample_r     root PD       0:00      1 (Resources)\n" +
	"             41940     debug sample_s     root PD       0:00      1 (Priority)\n" +
	"             41939     debug sample_a     root PD       0:00      1 (Dependency)\n" +
	"             41937     debug sample_g     root PD       0:00      1 (Priority)\n" +
	"    41935_[1-10%2]     debug sample_a     root PD       0:00      1 (Priority)\n" +
	"             41933     debug sample_p     root PD       0:00      1 (Priority)\n" +
	"             41932     debug sample_s     root PD       0:00      1 (Priority)\n" +
	"             41934     debug sample_h     root PD       0:00      1 (JobHeldUser)\n" +
	"             41938     debug sample_b     root  R       0:05      1 vm\n"

func TestReferenceOutputs(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		environ []string
		want    string
	}{
		{"default", nil, nil, refDefault},
		{"explicit default format", []string{"-o", DefaultFormat}, nil, refDefault},
		{"array tasks", []string{"-r"}, nil, refHeader +
			"             41941     debug sample_t     root PD       0:00      1 (PartitionConfig)\n" +
			"             41936     debug sample_r     root PD       0:00      1 (Resources)\n" +
			"             41940     debug sample_s     root PD       0:00      1 (Priority)\n" +
			"             41939     debug sample_a     root PD       0:00      1 (Dependency)\n" +
			"             41937     debug sample_g     root PD       0:00      1 (Priority)\n" +
			"           41935_1     debug sample_a     root PD       0:00      1 (Priority)\n" +
			"           41935_2     debug sample_a     root PD       0:00      1 (Priority)\n" +
			"           41935_3     debug sample_a     root PD       0:00      1 (Priority)\n" +
			"           41935_4     debug sample_a     root PD       0:00      1 (Priority)\n" +
			"           41935_5     debug sample_a     root PD       0:00      1 (Priority)\n" +
			"           41935_6     debug sample_a     root PD       0:00      1 (Priority)\n" +
			"           41935_7     debug sample_a     root PD       0:00      1 (Priority)\n" +
			"           41935_8     debug sample_a     root PD       0:00      1 (Priority)\n" +
			"           41935_9     debug sample_a     root PD       0:00      1 (Priority)\n" +
			"          41935_10     debug sample_a     root PD       0:00      1 (Priority)\n" +
			"             41933     debug sample_p     root PD       0:00      1 (Priority)\n" +
			"             41932     debug sample_s     root PD       0:00      1 (Priority)\n" +
			"             41934     debug sample_h     root PD       0:00      1 (JobHeldUser)\n" +
			"             41938     debug sample_b     root  R       0:05      1 vm\n"},
		{"long", []string{"-l"}, nil, "Sun Nov 22 05:10:05 2026\n" +
			"             JOBID PARTITION     NAME     USER    STATE       TIME TIME_LIMI  NODES NODELIST(REASON)\n" +
			"             41941     debug sample_t     root  PENDING       0:00 UNLIMITED      1 (PartitionConfig)\n" +
			"             41936     debug sample_r     root  PENDING       0:00     10:00      1 (Resources)\n" +
			"             41940     debug sample_s     root  PENDING       0:00      5:00      1 (Priority)\n" +
			"             41939     debug sample_a     root  PENDING       0:00 UNLIMITED      1 (Dependency)\n" +
			"             41937     debug sample_g     root  PENDING       0:00 UNLIMITED      1 (Priority)\n" +
			"    41935_[1-10%2]     debug sample_a     root  PENDING       0:00 UNLIMITED      1 (Priority)\n" +
			"             41933     debug sample_p     root  PENDING       0:00 UNLIMITED      1 (Priority)\n" +
			"             41932     debug sample_s     root  PENDING       0:00 UNLIMITED      1 (Priority)\n" +
			"             41934     debug sample_h     root  PENDING       0:00 UNLIMITED      1 (JobHeldUser)\n" +
			"             41938     debug sample_b     root  RUNNING       0:05 UNLIMITED      1 vm\n"},
		{"noheader id only", []string{"-h", "-o", "%i"}, nil,
			"41941\n41936\n41940\n41939\n41937\n41935_[1-10%2]\n41933\n41932\n41934\n41938\n"},
		{"pending only", []string{"-t", "PD", "-O", "JobID,Name,State,Reason,NumCPUs,MinMemory,TimeLimit,SubmitTime,StartTime"}, nil,
			"JOBID               NAME                STATE               REASON              CPUS                MIN_MEMORY          TIME_LIMIT          SUBMIT_TIME         START_TIME          \n" +
				"41941               sample_toobig       PENDING             PartitionConfig     100                 250M                UNLIMITED           2026-11-22T05:10:00 N/A                 \n" +
				"41936               sample_res          PENDING             Resources           2                   500M                10:00               2026-11-22T05:10:00 N/A                 \n" +
				"41940               sample_script       PENDING             Priority            1                   250M                5:00                2026-11-22T05:10:00 N/A                 \n" +
				"41939               sample_after        PENDING             Dependency          1                   250M                UNLIMITED           2026-11-22T05:10:00 N/A                 \n" +
				"41937               sample_gpu          PENDING             Priority            1                   250M                UNLIMITED           2026-11-22T05:10:00 N/A                 \n" +
				"41935               sample_array        PENDING             Priority            1                   250M                UNLIMITED           2026-11-22T05:10:00 N/A                 \n" +
				"41933               sample_parsable     PENDING             Priority            1                   250M                UNLIMITED           2026-11-22T05:10:00 N/A                 \n" +
				"41932               sample_sleep        PENDING             Priority            1                   250M                UNLIMITED           2026-11-22T05:10:00 N/A                 \n" +
				"41934               sample_held         PENDING             JobHeldUser         1                   250M                UNLIMITED           2026-11-22T05:10:00 N/A                 \n"},
		{"running none", []string{"-t", "R", "-h", "-n", "nosuch"}, nil, ""},
		{"one job", []string{"-j", "41932"}, nil, refHeader +
			"             41932     debug sample_s     root PD       0:00      1 (Priority)\n"},
		{"one job glued", []string{"-j41932"}, nil, refHeader +
			"             41932     debug sample_s     root PD       0:00      1 (Priority)\n"},
		{"start", []string{"--start"}, nil,
			"             JOBID PARTITION     NAME     USER ST          START_TIME  NODES SCHEDNODES           NODELIST(REASON)\n" +
				"             41932     debug sample_s     root PD                 N/A      1 (null)               (Priority)\n" +
				"             41933     debug sample_p     root PD                 N/A      1 (null)               (Priority)\n" +
				"             41934     debug sample_h     root PD                 N/A      1 (null)               (JobHeldUser)\n" +
				"    41935_[1-10%2]     debug sample_a     root PD                 N/A      1 (null)               (Priority)\n" +
				"             41936     debug sample_r     root PD                 N/A      1 (null)               (Resources)\n" +
				"             41937     debug sample_g     root PD                 N/A      1 (null)               (Priority)\n" +
				"             41939     debug sample_a     root PD                 N/A      1 (null)               (Dependency)\n" +
				"             41940     debug sample_s     root PD                 N/A      1 (null)               (Priority)\n" +
				"             41941     debug sample_t     root PD                 N/A      1 (null)               (PartitionConfig)\n"},
		{"literal text", []string{"-h", "-t", "R,PD", "-o", "%i|%t", "-n", "sample_busy,SAMPLE_SLEEP"}, nil, "41932|PD\n41938|R\n"},
		{"literal comma comment", []string{"--noheader", "--format=%k,%A", "-j", "41932,41938"}, nil, "(null),41932\n(null),41938\n"},
		{"Format suffix no width", []string{"-h", "-O", "JobID:\x1f,StateCompact:\x1f,NumNodes:.3", "-u", "root", "-p", "debug", "-t", "r"}, nil,
			"41938\x1fR\x1f  1\n"},
		{"sort by id desc", []string{"-h", "-o", "%i", "-S", "-i", "-t", "all"}, nil,
			"41941\n41940\n41939\n41938\n41937\n41936\n41935_[1-10%2]\n41934\n41933\n41932\n"},
		{"env format", nil, []string{"SQUEUE_FORMAT=%i %t", "SQUEUE_STATES=R"}, "JOBID ST\n41938 R\n"},
		{"explicit -o beats env", []string{"-o", "%i"}, []string{"SQUEUE_FORMAT=%t", "SQUEUE_SORT=-i", "SQUEUE_PARTITION=debug"},
			"JOBID\n41941\n41940\n41939\n41938\n41937\n41936\n41935_[1-10%2]\n41934\n41933\n41932\n"},
		{"env format2", []string{"-h"}, []string{"SQUEUE_FORMAT2=jobid:6,statecompact:3", "SQUEUE_USERS=nobody,root", "SQUEUE_STATES=r"}, "41938 R  \n"},
		{"array master id", []string{"-h", "-j", "41935", "-o", "%i %K %F %A"}, nil, "41935_[1-10%2] 1-10%2 41935 41935\n"},
		{"array tasks by id", []string{"-h", "-j", "41935_3,41935_[5-6]", "-o", "%i"}, nil, "41935_[3,5-6%2]\n"},
		{"array task alone", []string{"-h", "-j", "41935_7", "-o", "%i %K"}, nil, "41935_7 7\n"},
		{"unknown ids in a list", []string{"-j", "999999,999998"}, nil, refHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runSqueue(t, refClient(), tt.environ, tt.args...)
			if code != 0 || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if out != tt.want {
				t.Errorf("got\n%s\nwant\n%s", out, tt.want)
			}
		})
	}
}

func TestStates(t *testing.T) {
	end := refNow.Unix() - 1
	cancelled := refJob(41946, "sample_tocancel", 0, model.ReasonHeldUser)
	cancelled.State, cancelled.EndTime = model.JobCancelled, end
	failed := refJob(41949, "sample_exit", 0, model.ReasonNonZeroExit)
	failed.State, failed.StartTime, failed.EndTime = model.JobFailed, end, end
	failed.Alloc = []model.NodeAlloc{{Node: "vm", CPUs: 1}}
	launch := refJob(41950, "sample_kaput", 0, model.ReasonLaunchFailed)
	launch.State, launch.StartTime, launch.EndTime = model.JobFailed, end, end
	cg := refJob(41938, "sample_busy", 0, model.ReasonNone)
	cg.State, cg.Completing, cg.StartTime, cg.EndTime = model.JobCompleted, true, refNow.Unix()-5, refNow.Unix()
	cg.Alloc = []model.NodeAlloc{{Node: "vm", CPUs: 1}}
	pend := refJob(41951, "sample_timeout", 0, "")
	client := &fakeClient{jobs: []*model.Job{cancelled, failed, launch, cg, pend}, now: refNow.Unix()}

	tests := []struct {
		args []string
		want string
	}{
		// scancel_pending.txt: a cancelled job keeps its (empty) node list.
		{[]string{"-j", "41946"}, refHeader},
		{[]string{"-j", "41946", "-t", "all"}, refHeader +
			"             41946     debug sample_t     root CA       0:00      1 \n"},
		// failing_job.txt
		{[]string{"-j", "41949,41950", "-t", "all"}, refHeader +
			"             41949     debug sample_e     root  F       0:00      1 (NonZeroExitCode)\n" +
			"             41950     debug sample_k     root  F       0:00      1 (JobLaunchFailure)\n"},
		// a completing job sorts first (CG < PD) and shows its nodes.
		{nil, refHeader +
			"             41938     debug sample_b     root CG       0:05      1 vm\n" +
			"             41951     debug sample_t     root PD       0:00      1 (None)\n"},
		{[]string{"-h", "-t", "cg,CA", "-o", "%i %T"}, "41946 CANCELLED\n41938 COMPLETING\n"},
		{[]string{"-h", "-t", "completed,F", "-o", "%i"}, "41949\n41950\n"},
		{[]string{"-h", "-t", "configuring,ST", "-o", "%i"}, ""},
	}
	for _, tt := range tests {
		out, errOut, code := runSqueue(t, client, nil, tt.args...)
		if code != 0 || errOut != "" || out != tt.want {
			t.Errorf("squeue %q: exit %d stderr %q, got\n%s\nwant\n%s", tt.args, code, errOut, out, tt.want)
		}
	}
	if q := client.queries[0]; !q.IncludeAll || len(q.IDs) != 1 || q.IDs[0] != 41946 {
		t.Errorf("single -j query = %+v, want IncludeAll and IDs [41946]", q)
	}
	if q := client.queries[3]; q.IncludeAll || q.IDs != nil {
		t.Errorf("default query = %+v, want all active jobs", q)
	}
}

func TestArrayAfterStart(t *testing.T) {
	// squeue_default.txt, "the same queue ~10 s later": two tasks run, the
	// rest wait on the throttle.
	running := map[model.JobID]uint32{41936: 90, 41932: 80, 41933: 70, 41937: 50, 41940: 40}
	var jobs []*model.Job
	for _, j := range refQueue() {
		switch {
		case j.ID == 41941 || j.ID == 41938:
			continue // ended
		case j.ArrayJobID == 41935 && j.ArrayTaskID <= 2:
			j.State, j.StartTime, j.Reason = model.JobRunning, refNow.Unix()-8, ""
			j.Priority = 60 - 30*uint32(j.ArrayTaskID-1)
		case j.ArrayJobID == 41935:
			j.Priority, j.Reason = 300, model.ReasonArrayTaskLimit
		case running[j.ID] != 0:
			j.State, j.StartTime, j.Priority = model.JobRunning, refNow.Unix()-8, running[j.ID]
		case j.ID == 41939:
			j.Priority = 200
		}
		if j.State == model.JobRunning {
			j.Alloc = []model.NodeAlloc{{Node: "vm", CPUs: 1}}
		}
		jobs = append(jobs, j)
	}
	client := &fakeClient{jobs: jobs, now: refNow.Unix()}
	out, _, _ := runSqueue(t, client, nil)
	want := refHeader +
		"    41935_[3-10%2]     debug sample_a     root PD       0:00      1 (JobArrayTaskLimit)\n" +
		"             41939     debug sample_a     root PD       0:00      1 (Dependency)\n" +
		"             41934     debug sample_h     root PD       0:00      1 (JobHeldUser)\n" +
		"             41936     debug sample_r     root  R       0:08      1 vm\n" +
		"             41932     debug sample_s     root  R       0:08      1 vm\n" +
		"             41933     debug sample_p     root  R       0:08      1 vm\n" +
		"           41935_1     debug sample_a     root  R       0:08      1 vm\n" +
		"             41937     debug sample_g     root  R       0:08      1 vm\n" +
		"             41940     debug sample_s     root  R       0:08      1 vm\n" +
		"           41935_2     debug sample_a     root  R       0:08      1 vm\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}

	// A held task keeps its own row; the others show one reason, the
	// first task's, as Slurm's one pending record does.
	for _, j := range jobs {
		switch {
		case j.ArrayJobID == 41935 && j.ArrayTaskID == 4:
			j.HoldUser, j.Reason = true, model.ReasonHeldUser
		case j.ArrayJobID == 41935 && j.ArrayTaskID == 9:
			j.Reason = model.ReasonPriority
		}
	}
	out, _, _ = runSqueue(t, client, nil, "-h", "-t", "pd", "-o", "%.18i %r")
	want = "  41935_[3,5-10%2] JobArrayTaskLimit\n" +
		"           41935_4 JobHeldUser\n" +
		"             41939 Dependency\n" +
		"             41934 JobHeldUser\n"
	if out != want {
		t.Errorf("held task: got\n%s\nwant\n%s", out, want)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name    string
		client  cli.Client
		args    []string
		wantErr string
		code    int
	}{
		{"unknown single id", refClient(), []string{"-j", "999999"}, "slurm_load_jobs error: Invalid job id specified\n", 1},
		{"no controller", nil, nil, "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n", 1},
		{"controller error", &fakeClient{err: fmt.Errorf("%s", cli.MsgInvalidJobID)}, []string{"-j", "5"}, "slurm_load_jobs error: Invalid job id specified\n", 1},
		{"bad state", refClient(), []string{"-t", "bogus"}, "squeue: error: Invalid job state specified: bogus\n" +
			"squeue: error: Valid job states include: PENDING,RUNNING,SUSPENDED,COMPLETED,CANCELLED,FAILED,TIMEOUT,NODE_FAIL,PREEMPTED,BOOT_FAIL,DEADLINE,OUT_OF_MEMORY,COMPLETING\n", 1},
		{"bad format letter", refClient(), []string{"-o", "%i %!"}, "squeue: error: Invalid job format specification: !\n", 1},
		{"bad Format name", refClient(), []string{"-O", "JobID,Bogus"}, "squeue: error: Invalid job format specification: Bogus\n", 1},
		{"bad sort", refClient(), []string{"-S", "P,!"}, "squeue: error: Invalid sort specification: !\n", 1},
		{"bad job id", refClient(), []string{"-j", "12x"}, "squeue: error: Invalid job id: 12x\n", 1},
		{"o and O", refClient(), []string{"-o", "%i", "-O", "JobID"}, "squeue: error: -o (--format) is incompatible with -O (--Format)\n", 1},
		{"o and l", refClient(), []string{"-o", "%i", "-l"}, "squeue: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please remove one and retry.\n", 1},
		{"unknown flag", refClient(), []string{"--bogus"}, "squeue: unknown flag: --bogus\nTry \"squeue --help\" for more information\n", 1},
	}
	for _, tt := range tests {
		out, errOut, code := runSqueue(t, tt.client, []string{"SLURM_EXIT_ERROR=1"}, tt.args...)
		if code != tt.code || errOut != tt.wantErr || out != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d stderr %q", tt.name, code, out, errOut, tt.code, tt.wantErr)
		}
	}
	_, _, code := runSqueue(t, nil, []string{"SLURM_EXIT_ERROR=7"})
	if code != 7 {
		t.Errorf("SLURM_EXIT_ERROR=7: exit %d", code)
	}
}

func TestUsersAndMe(t *testing.T) {
	jobs := refQueue()[:3]
	jobs[1].UserName, jobs[1].UserID = "alice", 1001
	jobs[2].UserName, jobs[2].UserID = "bob", 1002
	client := &fakeClient{jobs: jobs, now: refNow.Unix()}
	bob := &cli.Host{CurrentUser: func() (*user.User, error) { return &user.User{Uid: "1002", Username: "bob"}, nil }}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-u", "alice,1002"}, "41933 alice\n41934 bob\n"},
		{[]string{"--user=root"}, "41932 root\n"},
		{[]string{"--me"}, "41934 bob\n"},
		{[]string{"--notme"}, "41932 root\n41933 alice\n"},
	} {
		out, errOut, _ := runSqueueOn(t, bob, client, nil, append([]string{"-h", "-o", "%i %u", "-S", "i"}, tt.args...)...)
		if out != tt.want || errOut != "" {
			t.Errorf("squeue %q = %q (stderr %q), want %q", tt.args, out, errOut, tt.want)
		}
	}
}

func TestFieldsAndMisc(t *testing.T) {
	jobs := refQueue()
	var run *model.Job
	for _, j := range jobs {
		if j.ID == 41938 {
			run = j
		}
	}
	run.Alloc = []model.NodeAlloc{{Node: "n3", CPUs: 4, Mem: 1024}, {Node: "n1", CPUs: 4, Mem: 1024}, {Node: "n2", CPUs: 4, Mem: 1024}}
	run.TimeLimit, run.GroupID, run.UserID, run.Priority = 3600, 0, 0, 1<<31
	run.Spec.WorkDir, run.Spec.MemPerNode = "/home/root", 3072
	client := &fakeClient{jobs: jobs, now: refNow.Unix()}
	wheel := &cli.Host{LookupGroupID: func(string) (*user.Group, error) { return &user.Group{Name: "wheel"}, nil }}

	out, errOut, code := runSqueueOn(t, wheel, client, nil, "-h", "-t", "R", "-o",
		"%N|%D|%C|%L|%l|%e|%m|%g|%G|%U|%p|%Q|%B|%Z|%E|%y|%T")
	want := "n[1-3]|3|12|59:55|1:00:00|2026-11-22T06:10:00|3G|wheel|0|0|0.50000000011642|2147483648|n3|/home/root|(null)|0|RUNNING\n"
	if code != 0 || errOut != "" || out != want {
		t.Errorf("fields: exit %d stderr %q\ngot  %q\nwant %q", code, errOut, out, want)
	}
	out, _, _ = runSqueue(t, client, nil, "-h", "-t", "R", "-O", "tres-alloc:,STDOUT:,exit_code:.5,ArrayTaskID:4")
	if want := "cpu=12,mem=3G,node=3,billing=12/home/root/slurm-41938.out  0:0N/A \n"; out != want {
		t.Errorf("-O: got %q want %q", out, want)
	}
	out, _, _ = runSqueue(t, client, nil, "-h", "-j", "41940", "--noconvert", "-o", "%m %E %Y")
	if want := "250M (null) (null)\n"; out != want {
		t.Errorf("noconvert: got %q want %q", out, want)
	}
	out, _, _ = runSqueue(t, client, nil, "-s")
	if want := stepHeader + "    41938.batch    batch     debug     root      0:05 n3\n"; out != want {
		t.Errorf("steps: got %q want %q", out, want)
	}
	out, _, code = runSqueue(t, nil, nil, "-V")
	if out != "slurm 22.05.8\n" || code != 0 {
		t.Errorf("-V: %q exit %d", out, code)
	}
	out, _, code = runSqueue(t, nil, nil, "--help")
	if !strings.Contains(out, "--format") || code != 0 {
		t.Errorf("--help: exit %d %q", code, out)
	}
	out, _, _ = runSqueue(t, client, nil, "-h", "--only-job-state", "-j", "41938")
	if want := "             41938  R\n"; out != want {
		t.Errorf("--only-job-state: got %q want %q", out, want)
	}
	out, _, _ = runSqueue(t, client, nil, "-h", "-w", "n2", "-o", "%i")
	if want := "41938\n"; out != want {
		t.Errorf("-w: got %q want %q", out, want)
	}
}

func TestHelpers(t *testing.T) {
	for secs, want := range map[int64]string{0: "0:00", 59: "0:59", 600: "10:00", 3600: "1:00:00",
		86400 + 3661: "1-01:01:01", -1: "INVALID", yearSecs + 1: "INVALID"} {
		if got := string(appendSecs(nil, secs)); got != want {
			t.Errorf("appendSecs(%d) = %q, want %q", secs, got, want)
		}
	}
	for mib, want := range map[int64]string{0: "0", 250: "250M", 1000: "1000M", 1024: "1G", 1536: "1.50G",
		1025: "1025M", 4 << 20: "4T"} {
		if got := string(appendMem(nil, mib, false)); got != want {
			t.Errorf("appendMem(%d) = %q, want %q", mib, got, want)
		}
	}
	if got := cli.TaskExpr([]int{1, 2, 3, 5, 7, 8}, 4, 64); got != "1-3,5,7-8%4" {
		t.Errorf("taskExpr = %q", got)
	}
	var many []int
	for i := 0; i < 100; i += 2 {
		many = append(many, i)
	}
	if got := cli.TaskExpr(many, 0, 64); len(got) != 63 || !strings.HasSuffix(got, "...") {
		t.Errorf("long taskExpr = %q (%d)", got, len(got))
	}
	if got := cli.TaskExpr(many, 0, 0); strings.HasSuffix(got, "...") {
		t.Errorf("unlimited taskExpr cut: %q", got)
	}
	keys, err := parseSort("P,t,-p")
	if err != nil || len(keys) != 3 || keys[0] != (sortKey{'P', false}) || keys[2] != (sortKey{'p', true}) {
		t.Errorf("parseSort = %v, %v", keys, err)
	}
}
