package scontrol

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/model"
)

var update = flag.Bool("update", false, "rewrite golden files")

// referenceJobs mirror jobs from a real Slurm 22.05 run (the golden file
// is that run's output, with the AllocNode session id, which Drover does
// not track, printed as 0).
func referenceJobs() *fakeClient {
	batch := func(name string) *model.JobSpec {
		return &model.JobSpec{
			Name: name, Account: "root", QOS: "normal", WorkDir: "/tmp", Requeue: true,
			StdOut: "/dev/null", StdErr: "/dev/null", StdIn: "/dev/null", SubmitHost: "localhost",
			TimeLimit: model.Unset, TimeMin: model.Unset, MinNodes: model.Unset, MaxNodes: model.Unset,
			NTasks: model.Unset, CPUsPerTask: model.Unset, TasksPerNode: model.Unset,
			MemPerNode: model.Unset, MemPerCPU: 250,
		}
	}
	vm := []model.NodeAlloc{{Node: "vm", CPUs: 1, Mem: 250}}
	arraySpec := batch("sample_array")
	arraySpec.Array = &model.ArraySpec{Raw: "1-10%2", Throttle: 2}
	srun := batch("bash")
	srun.Interactive, srun.Argv = true, []string{"bash"}
	srun.StdOut, srun.StdErr, srun.StdIn = "", "", ""
	root := func(j *model.Job) *model.Job {
		j.UserName, j.Partition, j.TimeLimit = "root", "debug", model.Unlimited
		if j.ArrayJobID == 0 {
			j.ArrayTaskID = model.NoArrayTask
		}
		j.Name = j.Spec.Name
		return j
	}
	return &fakeClient{now: ts("2026-11-22T05:10:14"), jobs: []*model.Job{
		root(&model.Job{ID: 41932, Spec: batch("sample_sleep"), Priority: 11507, State: model.JobRunning,
			SubmitTime: ts("2026-11-22T05:10:00"), EligibleTime: ts("2026-11-22T05:10:00"),
			StartTime: ts("2026-11-22T05:10:06"), Alloc: vm}),
		root(&model.Job{ID: 41934, Spec: batch("sample_held"), State: model.JobPending, Reason: "JobHeldUser",
			HoldUser: true, SubmitTime: ts("2026-11-22T05:10:00")}),
		root(&model.Job{ID: 41944, ArrayJobID: 41935, ArrayTaskID: 1, Spec: arraySpec, Priority: 11507,
			State: model.JobRunning, SubmitTime: ts("2026-11-22T05:10:00"), EligibleTime: ts("2026-11-22T05:10:00"),
			StartTime: ts("2026-11-22T05:10:06"), Alloc: vm}),
		root(&model.Job{ID: 41928, Spec: srun, Priority: 11507, State: model.JobFailed, Reason: "NonZeroExitCode",
			ExitCode: 5, SubmitTime: ts("2026-11-22T05:09:28"), EligibleTime: ts("2026-11-22T05:09:28"),
			StartTime: ts("2026-11-22T05:09:28"), EndTime: ts("2026-11-22T05:09:29"), Alloc: vm}),
	}}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestShowJobGolden(t *testing.T) {
	res := run(t, referenceJobs(), nil, "show", "job")
	if res.code != 0 || res.stderr != "" {
		t.Fatalf("code %d stderr %q", res.code, res.stderr)
	}
	golden(t, "show_job.golden", res.stdout)
}

func TestShowJobOneliner(t *testing.T) {
	fc := referenceJobs()
	res := run(t, fc, nil, "show", "job", "--oneliner", "41932")
	want := "JobId=41932 JobName=sample_sleep UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=11507 Nice=0 Account=root QOS=normal JobState=RUNNING Reason=None Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:00:08 TimeLimit=UNLIMITED TimeMin=N/A SubmitTime=2026-11-22T05:10:00 EligibleTime=2026-11-22T05:10:00 AccrueTime=2026-11-22T05:10:00 StartTime=2026-11-22T05:10:06 EndTime=Unknown Deadline=N/A SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-11-22T05:10:06 Scheduler=Main Partition=debug AllocNode:Sid=localhost:0 ReqNodeList=(null) ExcNodeList=(null) NodeList=vm BatchHost=vm NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=1,mem=250M,node=1,billing=1 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryCPU=250M MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) Command=(null) WorkDir=/tmp StdErr=/dev/null StdIn=/dev/null StdOut=/dev/null Power= \n"
	if res.code != 0 || res.stdout != want {
		t.Errorf("code %d\ngot  %q\nwant %q", res.code, res.stdout, want)
	}
	if len(fc.queries) != 1 || len(fc.queries[0].IDs) != 1 || fc.queries[0].IDs[0] != 41932 || !fc.queries[0].IncludeAll {
		t.Errorf("queries %+v", fc.queries)
	}
}

func TestShowJobSelection(t *testing.T) {
	tests := []struct {
		args       []string
		code       int
		ids        []string // JobId= values printed, in order
		out, errOf string
	}{
		{[]string{"show", "job", "41935"}, 0, []string{"41944"}, "", ""},
		{[]string{"show", "jobid=41935_1"}, 0, []string{"41944"}, "", ""},
		{[]string{"sho", "j", "41934"}, 0, []string{"41934"}, "", ""},
		{[]string{"show", "job", "41935_7"}, 1, nil, "Job 41935_7 not found\n", ""},
		{[]string{"show", "job", "999999"}, 1, nil, "", "slurm_load_jobs error: Invalid job id specified\n"},
		{[]string{"show", "job", "12ab"}, 1, nil, "", "scontrol_print_job error: Invalid job id specified\n"},
		{[]string{"-Q", "show", "job", "999999"}, 1, nil, "", ""},
	}
	for _, tt := range tests {
		res := run(t, referenceJobs(), nil, tt.args...)
		var ids []string
		for _, line := range strings.Split(res.stdout, "\n") {
			if strings.HasPrefix(line, "JobId=") {
				ids = append(ids, strings.TrimPrefix(strings.Fields(line)[0], "JobId="))
			}
		}
		if res.code != tt.code || strings.Join(ids, ",") != strings.Join(tt.ids, ",") || res.stderr != tt.errOf ||
			(tt.out != "" && res.stdout != tt.out) {
			t.Errorf("%q: code %d ids %v stdout %q stderr %q", tt.args, res.code, ids, res.stdout, res.stderr)
		}
	}
	res := run(t, &fakeClient{}, nil, "show", "job")
	if res.code != 0 || res.stdout != "No jobs in the system\n" {
		t.Errorf("empty: %+v", res)
	}
}

func TestShowJobDetailsAndFields(t *testing.T) {
	spec := &model.JobSpec{
		Name: "big", WorkDir: "/home/u", StdOut: "out-%x-%4j.txt", Comment: "hello world",
		TimeLimit: 3600, TimeMin: 600, MinNodes: 2, MaxNodes: 4, NTasks: 8, CPUsPerTask: 2, TasksPerNode: 4,
		MemPerNode: 4096, MemPerCPU: model.Unset, ReqNodes: []string{"n2", "n1"}, Exclusive: true,
		Dependency: &model.Dependency{Raw: "afterok:5"},
	}
	fc := &fakeClient{now: ts("2026-11-22T06:00:00"), jobs: []*model.Job{{
		ID: 42, ArrayTaskID: model.NoArrayTask, Spec: spec, Name: "big", UserID: 1001, GroupID: 1001,
		State: model.JobPending, Reason: "Resources", TimeLimit: 3600, Nice: -5, Comment: "hello world",
		SubmitTime: ts("2026-11-22T05:00:00"), Partition: "batch",
	}}}
	res := run(t, fc, nil, "-d", "show", "job", "42")
	for _, want := range []string{
		"JobId=42 JobName=big\n   UserId=1001(1001) GroupId=1001(1001) MCS_label=N/A\n",
		"Priority=0 Nice=-5 Account=(null) QOS=(null)\n",
		"JobState=PENDING Reason=Resources Dependency=afterok:5\n",
		"ExitCode=0:0\n   DerivedExitCode=0:0\n",
		"RunTime=00:00:00 TimeLimit=01:00:00 TimeMin=00:10:00\n",
		"ReqNodeList=n[1-2] ExcNodeList=(null)\n   NodeList=\n   NumNodes=2-4 NumCPUs=16 NumTasks=8 CPUs/Task=2 ",
		"TRES=cpu=16,mem=8G,node=2,billing=16\n",
		"NtasksPerN:B:S:C=4:0:*:* CoreSpec=*\n   MinCPUsNode=8 MinMemoryNode=4G MinTmpDiskNode=0\n",
		"OverSubscribe=NO ",
		"WorkDir=/home/u\n   Comment=hello world \n   StdErr=/home/u/out-big-0042.txt\n   StdIn=/dev/null\n   StdOut=/home/u/out-big-0042.txt\n   Power=\n   \n\n",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("missing %q in\n%s", want, res.stdout)
		}
	}
}

func TestExpandPattern(t *testing.T) {
	v := patternVars{jobID: 42, arrayJobID: 40, taskID: 7, user: "ann", name: "sim", node: "n3"}
	for in, want := range map[string]string{
		"slurm-%j.out":      "slurm-42.out",
		"%A_%a.log":         "40_7.log",
		"%x-%u-%N.txt":      "sim-ann-n3.txt",
		"%4j|%2a|%10A":      "0042|07|0000000040",
		"100%%":             "100%",
		"%J %s %n %t %b":    "42.batch batch 0 0 7",
		"odd%q%":            "odd%q%",
		"plain":             "plain",
		"%3x":               "sim",
		"%999999999999999j": "0000000042",
	} {
		if got := expandPattern(in, v); got != want {
			t.Errorf("expandPattern(%q) = %q, want %q", in, got, want)
		}
	}
	if got := expandPattern("%N.out", patternVars{}); got != "%N.out" {
		t.Errorf("%%N without node = %q", got)
	}
}

func referenceCluster() *fakeClient {
	return &fakeClient{
		nodes: []*model.Node{{
			Name: "vm", CPUs: 64, Sockets: 64, Cores: 1, Threads: 1, Memory: 16000, Gres: "gpu:4", Weight: 1,
			State: model.NodeUp, Responding: true, Version: "22.05.8", AllocCPUs: 8, AllocMem: 2000,
			BootTime: ts("2026-11-22T03:20:41"), RegTime: ts("2026-11-22T05:07:53"),
		}},
		parts: []*model.Partition{{
			Name: "debug", Nodes: []string{"vm"}, NodesExpr: "vm", Default: true, MaxTime: model.Unlimited,
			DefaultTime: model.Unset, PriorityTier: 1, PriorityJobFactor: 1, MaxNodes: model.Unlimited,
		}},
	}
}

func TestShowPartitionMatchesSlurm(t *testing.T) {
	res := run(t, referenceCluster(), nil, "show", "partition")
	want := "PartitionName=debug\n" +
		"   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL\n" +
		"   AllocNodes=ALL Default=YES QoS=N/A\n" +
		"   DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO\n" +
		"   MaxNodes=UNLIMITED MaxTime=UNLIMITED MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED\n" +
		"   Nodes=vm\n" +
		"   PriorityJobFactor=1 PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO\n" +
		"   OverTimeLimit=NONE PreemptMode=OFF\n" +
		"   State=UP TotalCPUs=64 TotalNodes=1 SelectTypeParameters=NONE\n" +
		"   JobDefaults=(null)\n" +
		"   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED\n" +
		"   TRES=cpu=64,mem=16000M,node=1,billing=64,gres/gpu=4\n\n"
	if res.code != 0 || res.stdout != want {
		t.Errorf("code %d\n%s", res.code, res.stdout)
	}
	res = run(t, referenceCluster(), nil, "-o", "show", "part", "debug")
	if want1 := strings.ReplaceAll(strings.TrimSuffix(want, "\n"), "\n   ", " "); res.stdout != want1 {
		t.Errorf("oneliner:\ngot  %q\nwant %q", res.stdout, want1)
	}
	res = run(t, referenceCluster(), nil, "show", "partition", "nope")
	if res.code != 1 || res.stdout != "Partition nope not found\n" {
		t.Errorf("not found: %+v", res)
	}
}

func TestShowNode(t *testing.T) {
	fc := referenceCluster()
	res := run(t, fc, nil, "show", "node")
	want := "NodeName=vm CoresPerSocket=1 \n" +
		"   CPUAlloc=8 CPUEfctv=64 CPUTot=64 CPULoad=N/A\n" +
		"   AvailableFeatures=(null)\n" +
		"   ActiveFeatures=(null)\n" +
		"   Gres=gpu:4\n" +
		"   NodeAddr=vm NodeHostName=vm Version=22.05.8\n" +
		"   RealMemory=16000 AllocMem=2000 FreeMem=N/A Sockets=64 Boards=1\n" +
		"   State=MIXED ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n" +
		"   Partitions=debug \n" +
		"   BootTime=2026-11-22T03:20:41 SlurmdStartTime=2026-11-22T05:07:53\n" +
		"   LastBusyTime=2026-11-22T05:10:14\n" +
		"   CfgTRES=cpu=64,mem=16000M,billing=64,gres/gpu=4\n" +
		"   AllocTRES=cpu=8,mem=2000M\n" +
		"   CapWatts=n/a\n" +
		"   CurrentWatts=0 AveWatts=0\n" +
		"   ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s\n\n"
	if res.code != 0 || res.stdout != want {
		t.Errorf("code %d\ngot\n%s\nwant\n%s", res.code, res.stdout, want)
	}

	n := fc.nodes[0]
	n.Drain, n.Reason, n.ReasonUID, n.ReasonTime = true, "disk failed", 0, ts("2026-11-22T05:00:00")
	n.Responding = false
	res = run(t, fc, nil, "show", "nodes", "vm", "--oneliner")
	for _, s := range []string{
		"NodeName=vm CoresPerSocket=1  CPUAlloc=8 ",
		" State=MIXED+DRAIN+NOT_RESPONDING ThreadsPerCore=1 ",
		"ExtSensorsTemp=n/s Reason=disk failed [root@2026-11-22T05:00:00]\n",
	} {
		if !strings.Contains(res.stdout, s) {
			t.Errorf("missing %q in %q", s, res.stdout)
		}
	}
	res = run(t, fc, nil, "show", "node", "vm,nosuchnode")
	if res.code != 1 || !strings.HasSuffix(res.stdout, "\n\nNode nosuchnode not found\n") {
		t.Errorf("not found: %+v", res)
	}
}

func TestNodeStates(t *testing.T) {
	for _, tt := range []struct {
		n    model.Node
		want string
	}{
		{model.Node{CPUs: 4, State: model.NodeUp, Responding: true}, "IDLE"},
		{model.Node{CPUs: 4, AllocCPUs: 4, State: model.NodeUp, Responding: true}, "ALLOCATED"},
		{model.Node{CPUs: 4, AllocCPUs: 2, State: model.NodeUp, Responding: true, Drain: true}, "MIXED+DRAIN"},
		{model.Node{CPUs: 4, State: model.NodeDown}, "DOWN+NOT_RESPONDING"},
		{model.Node{CPUs: 4, State: model.NodeUnknown}, "UNKNOWN+NOT_RESPONDING"},
		{model.Node{CPUs: 4, State: model.NodeFuture}, "FUTURE"},
	} {
		if got := nodeState(&tt.n); got != tt.want {
			t.Errorf("nodeState(%+v) = %s, want %s", tt.n, got, tt.want)
		}
	}
}

func TestShowConfig(t *testing.T) {
	fc := &fakeClient{
		config: []cli.KV{{Key: "ClusterName", Value: "peer"}, {Key: "MinJobAge", Value: "300 sec"},
			{Key: "AccountingStorageExternalHost", Value: "(null)"}, {}, {Value: "Cgroup Support Configuration:"},
			{Key: "CgroupPlugin", Value: "cgroup/v2"}},
		ping: &cli.PingResult{Controllers: []cli.ControllerStatus{{Host: "vm", Primary: true, Up: true}}},
	}
	res := run(t, fc, nil, "show", "config")
	want := "Configuration data as of 2026-11-22T05:10:14\n" +
		"ClusterName             = peer\n" +
		"MinJobAge               = 300 sec\n" +
		"AccountingStorageExternalHost = (null)\n" +
		"\nCgroup Support Configuration:\n" +
		"CgroupPlugin            = cgroup/v2\n" +
		"\nSlurmctld(primary) at vm is UP\n"
	if res.code != 0 || res.stdout != want {
		t.Errorf("code %d\ngot\n%s\nwant\n%s", res.code, res.stdout, want)
	}
}

func TestHostnamesWithoutController(t *testing.T) {
	tests := []struct {
		environ []string
		args    []string
		code    int
		out     string
		err     string
	}{
		{nil, []string{"show", "hostnames", "gpu[01-03],login"}, 0, "gpu01\ngpu02\ngpu03\nlogin\n", ""},
		{[]string{"SLURM_JOB_NODELIST=n[1-2]"}, []string{"show", "hostnames"}, 0, "n1\nn2\n", ""},
		{[]string{"SLURM_NODELIST=m5"}, []string{"show", "hostname"}, 0, "m5\n", ""},
		{nil, []string{"show", "hostnames"}, 1, "", "scontrol: error: host list is empty\n"},
		{nil, []string{"show", "hostnames", "n[1-"}, 1, "", "Invalid hostlist: n[1-\n"},
		{nil, []string{"show", "hostlist", "tux2,tux1,tux2,tux3"}, 0, "tux[2,1-3]\n", ""},
		{nil, []string{"show", "hostlistsorted", "tux2,tux1,tux2,tux3"}, 0, "tux[1-3]\n", ""},
		{nil, []string{"show", "hostlist"}, 1, "", "invalid encode argument\n"},
	}
	for _, tt := range tests {
		res := run(t, nil, tt.environ, tt.args...)
		if res.code != tt.code || res.stdout != tt.out || res.stderr != tt.err || res.dialled {
			t.Errorf("%q: %+v", tt.args, res)
		}
	}
	path := filepath.Join(t.TempDir(), "hosts")
	os.WriteFile(path, []byte("c3\nc1\n\nc2\n"), 0o644)
	if res := run(t, nil, nil, "show", "hostlist", path); res.stdout != "c[3,1-2]\n" || res.dialled {
		t.Errorf("file: %+v", res)
	}
}

func FuzzExpandPattern(f *testing.F) {
	for _, s := range []string{"slurm-%j.out", "%4A_%a", "%%", "%", "%9", "%N-%x", "x%q"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got := expandPattern(p, patternVars{jobID: 1, arrayJobID: 1, taskID: 2, user: "u", name: "n"})
		if !strings.Contains(p, "%") && got != p {
			t.Fatalf("pattern without escapes changed: %q -> %q", p, got)
		}
	})
}
