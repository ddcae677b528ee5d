package squeue

import (
	"context"
	"reflect"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/model"
)

// pendingQueue is n pending jobs over four partitions, a tenth of them
// tasks of 100-task arrays, with a few running jobs.
func pendingQueue(n int) []*model.Job {
	spec := &model.JobSpec{MinNodes: 1, NTasks: 1, CPUsPerTask: 1, MemPerNode: 1024}
	arraySpec := &model.JobSpec{MinNodes: 1, NTasks: 1, CPUsPerTask: 1, Array: &model.ArraySpec{Throttle: 10}}
	jobs := make([]*model.Job, n)
	for i := range jobs {
		j := &model.Job{
			ID: model.JobID(1000 + i), ArrayTaskID: model.NoArrayTask, UserName: "user" + strconv.Itoa(i%50),
			UserID: uint32(1000 + i%50), Partition: "part" + strconv.Itoa(i%4), Name: "job" + strconv.Itoa(i),
			Priority: uint32(i * 7919 % 10007), Reason: model.ReasonPriority, TimeLimit: 3600,
			SubmitTime: refNow.Unix() - int64(i), Spec: spec,
		}
		if i%10 == 0 {
			j.ArrayJobID, j.ArrayTaskID, j.Spec = model.JobID(1000+i/1000*1000), i%1000/10, arraySpec
			j.Partition, j.Name = "part0", "array"
		}
		if i%500 == 1 {
			j.State, j.StartTime = model.JobRunning, refNow.Unix()-100
			j.Alloc = []model.NodeAlloc{{Node: "node" + strconv.Itoa(i%97), CPUs: 1}}
		}
		jobs[i] = j
	}
	return jobs
}

// BenchmarkSqueue10k is the whole command (filter, collapse, sort, render)
// over 10,000 jobs in the default format.
func BenchmarkSqueue10k(b *testing.B) {
	benchRun(b, pendingQueue(10000), nil)
}

// BenchmarkSqueue10kPerTask renders every array task on its own row (-r).
func BenchmarkSqueue10kPerTask(b *testing.B) {
	benchRun(b, pendingQueue(10000), []string{"-r"})
}

func TestBenchQueueRenders(t *testing.T) {
	out, errOut, code := runSqueue(t, &fakeClient{jobs: pendingQueue(2000), now: refNow.Unix()}, nil, "-h", "-o", "%i")
	if code != 0 || errOut != "" || out == "" {
		t.Fatalf("exit %d stderr %q", code, errOut)
	}
}

func TestGluedOptionalArgs(t *testing.T) {
	for _, tt := range []struct{ in, want []string }{
		{[]string{"-j1008"}, []string{"--jobs=1008"}},
		{[]string{"-hj1008", "-l"}, []string{"-h", "--jobs=1008", "-l"}},
		{[]string{"-s1008.0"}, []string{"--steps=1008.0"}},
		{[]string{"-j", "1008"}, []string{"-j", "1008"}},
		{[]string{"-j=5", "-tR", "--", "-j9"}, []string{"-j=5", "-tR", "--", "-j9"}},
		{[]string{"-hn", "name"}, []string{"-hn", "name"}},
	} {
		if got := gluedOptionalArgs(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("gluedOptionalArgs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	for _, args := range [][]string{{"-hj41932"}, {"-h", "-j", "41932"}, {"-h", "--jobs", "41932"}, {"-h", "--jobs=41932"}} {
		out, errOut, _ := runSqueue(t, refClient(), nil, append(args, "-o", "%i")...)
		if out != "41932\n" || errOut != "" {
			t.Errorf("squeue %q = %q (stderr %q)", args, out, errOut)
		}
	}
}

// heldQueue is n held jobs as bench/scale100k.sh submits them.
func heldQueue(n int) []*model.Job {
	spec := &model.JobSpec{MinNodes: 1, NTasks: 1, CPUsPerTask: -1, MemPerNode: -1}
	jobs := make([]*model.Job, n)
	for i := range jobs {
		jobs[i] = &model.Job{ID: model.JobID(i + 1), ArrayTaskID: model.NoArrayTask, UserID: 1000, UserName: "alice",
			Partition: "debug", Reason: model.ReasonHeldUser, HoldUser: true, TimeLimit: 31536000, Name: "scale",
			SubmitTime: refNow.Unix() - int64(i), Spec: spec}
	}
	return jobs
}

// BenchmarkSqueue100kHeld: the command's work after the listing arrived,
// over 100,000 held jobs in the default format.
func BenchmarkSqueue100kHeld(b *testing.B) {
	benchRun(b, heldQueue(100000), nil)
}

// benchRun times the whole command with args over jobs, in CPU per run.
func benchRun(b *testing.B, jobs []*model.Job, args []string) {
	client := &fakeClient{jobs: jobs, now: refNow.Unix()}
	env := discardEnv(client)
	b.ReportAllocs()
	t0 := cpuTime()
	for b.Loop() {
		if code := Run(context.Background(), env, args); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
	b.ReportMetric(float64(cpuTime()-t0)/1e6/float64(b.N), "cpu-ms/op")
}

// cpuTime is this process's CPU time (user and system, every thread): on
// a shared machine a steadier figure than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestLongQueueRendersAlikeInParts: a queue long enough to be sorted and
// rendered in parts at once prints what one part prints, in every
// default format and with the fields that keep caches (group names, node
// lists); run with -race.
func TestLongQueueRendersAlikeInParts(t *testing.T) {
	client := &fakeClient{jobs: pendingQueue(40000), now: refNow.Unix()}
	for _, args := range [][]string{nil, {"-l"}, {"-r", "-o", "%.18i %g %N %R %M %L"}, {"--start"}, {"-S", "N,-e,j,u"}} {
		var outs [2]string
		for i, procs := range []int{1, 4} {
			old := runtime.GOMAXPROCS(procs)
			out, errOut, code := runSqueue(t, client, nil, args...)
			runtime.GOMAXPROCS(old)
			if code != 0 || errOut != "" {
				t.Fatalf("squeue %q: exit %d, %s", args, code, errOut)
			}
			outs[i] = out
		}
		if outs[0] != outs[1] {
			t.Errorf("squeue %q prints differently in parts (%d bytes) than whole (%d)", args, len(outs[1]), len(outs[0]))
		}
	}
}
