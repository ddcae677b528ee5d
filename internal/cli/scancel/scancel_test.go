package scancel

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/cli/clitest"
	"github.com/drover-hpc/drover/internal/model"
)

// fakeClient implements cli.Client; only Signal and ListJobs do anything.
type fakeClient struct {
	clitest.Unimplemented
	jobs    []*model.Job
	results func(sel cli.JobSelection) []cli.JobResult
	err     error

	calls []signalCall
}

type signalCall struct {
	sel cli.JobSelection
	req cli.SignalRequest
}

func (f *fakeClient) SubmitJob(context.Context, *model.JobSpec) (model.JobID, error) {
	return 0, errors.New("unused")
}
func (f *fakeClient) ListJobs(context.Context, cli.JobQuery) (*cli.JobList, error) {
	return &cli.JobList{Jobs: f.jobs}, f.err
}
func (f *fakeClient) WatchJobs(context.Context, []model.JobID, func([]*model.Job) bool) error {
	return errors.New("unused")
}
func (f *fakeClient) ListNodes(context.Context) ([]*model.Node, error)           { return nil, nil }
func (f *fakeClient) ListPartitions(context.Context) ([]*model.Partition, error) { return nil, nil }
func (f *fakeClient) Signal(_ context.Context, sel cli.JobSelection, req cli.SignalRequest) ([]cli.JobResult, error) {
	f.calls = append(f.calls, signalCall{sel, req})
	if f.err != nil {
		return nil, f.err
	}
	if f.results != nil {
		return f.results(sel), nil
	}
	var out []cli.JobResult
	for _, t := range sel.Targets {
		out = append(out, cli.JobResult{Job: t.Raw})
	}
	return out, nil
}
func (f *fakeClient) Control(context.Context, cli.JobSelection, string) ([]cli.JobResult, error) {
	return nil, nil
}
func (f *fakeClient) UpdateJob(context.Context, cli.JobSelection, map[string]string) ([]cli.JobResult, error) {
	return nil, nil
}
func (f *fakeClient) UpdateNodes(context.Context, []string, map[string]string) error { return nil }
func (f *fakeClient) Ping(context.Context) (*cli.PingResult, error)                  { return nil, nil }
func (f *fakeClient) Config(context.Context) ([]cli.KV, error)                       { return nil, nil }
func (f *fakeClient) Reconfigure(context.Context) error                              { return nil }
func (f *fakeClient) Close() error                                                   { return nil }

func run(t *testing.T, fc *fakeClient, environ []string, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cli.Env{
		Prog: "scancel", Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Environ: environ, Now: func() time.Time { return time.Unix(1700000000, 0) },
		Dial: func() (cli.Client, error) { return fc, nil }, Version: "22.05.8",
		Host: &cli.Host{Getuid: func() int { return 1234 }},
	}
	if fc == nil {
		env.Dial = func() (cli.Client, error) { return nil, cli.ErrNoController }
	}
	code = Run(context.Background(), env, args)
	return code, out.String(), errb.String()
}

func failWith(msgs map[string]string) func(cli.JobSelection) []cli.JobResult {
	return func(sel cli.JobSelection) []cli.JobResult {
		var out []cli.JobResult
		for _, t := range sel.Targets {
			out = append(out, cli.JobResult{Job: t.Raw, Error: msgs[t.Raw]})
		}
		return out
	}
}

func TestSelectionAndRequest(t *testing.T) {
	dir := t.TempDir()
	hostfile := filepath.Join(dir, "hosts")
	os.WriteFile(hostfile, []byte("n1\nn2\n"), 0o644)
	tests := []struct {
		name    string
		args    []string
		environ []string
		sel     cli.JobSelection
		req     cli.SignalRequest
	}{
		{"ids", []string{"12", "13_[1-2],14.batch"}, nil, cli.JobSelection{UID: -1, Targets: []cli.JobTarget{
			{ID: 12, Raw: "12"}, {ID: 13, Tasks: []int{1, 2}, Raw: "13_[1-2]"},
			{ID: 14, Raw: "14.batch", HasStep: true, Step: model.StepBatch}}}, cli.SignalRequest{}},
		{"steps", []string{"15.0", "16_2.3"}, nil, cli.JobSelection{UID: -1, Targets: []cli.JobTarget{
			{ID: 15, Raw: "15.0", HasStep: true, Step: 0}, {ID: 16, Tasks: []int{2}, Raw: "16_2.3", HasStep: true, Step: 3}}},
			cli.SignalRequest{}},
		{"user name", []string{"-u", "alice"}, nil, cli.JobSelection{UID: -1, User: "alice"}, cli.SignalRequest{}},
		{"uid", []string{"--user=1001"}, nil, cli.JobSelection{UID: 1001}, cli.SignalRequest{}},
		{"me", []string{"--me"}, nil, cli.JobSelection{UID: 1234}, cli.SignalRequest{}},
		{"filters", []string{"-n", "x", "-p", "debug", "-t", "PD,running", "-A", "Proj", "-q", "High", "-w", "n[1-2]"}, nil,
			cli.JobSelection{UID: -1, Name: "x", Partition: "debug", States: []model.JobState{model.JobPending, model.JobRunning},
				Account: "proj", QOS: "high", Nodes: []string{"n1", "n2"}}, cli.SignalRequest{}},
		{"jobname alias", []string{"--jobname=y"}, nil, cli.JobSelection{UID: -1, Name: "y"}, cli.SignalRequest{}},
		{"hostfile", []string{"-w", hostfile}, nil, cli.JobSelection{UID: -1, Nodes: []string{"n1", "n2"}}, cli.SignalRequest{}},
		{"signal name", []string{"-s", "SIGUSR1", "-b", "7"}, nil, cli.JobSelection{UID: -1, Targets: []cli.JobTarget{{ID: 7, Raw: "7"}}},
			cli.SignalRequest{Signal: 10, BatchOnly: true}},
		{"signal short", []string{"--signal=term", "-f", "7"}, nil, cli.JobSelection{UID: -1, Targets: []cli.JobTarget{{ID: 7, Raw: "7"}}},
			cli.SignalRequest{Signal: 15, Full: true}},
		{"signal number", []string{"-s", "9", "7"}, nil, cli.JobSelection{UID: -1, Targets: []cli.JobTarget{{ID: 7, Raw: "7"}}},
			cli.SignalRequest{Signal: 9}},
		{"env", nil, []string{"SCANCEL_USER=bob", "SCANCEL_PARTITION=p", "SCANCEL_BATCH=true", "SCANCEL_STATE=SUSPENDED"},
			cli.JobSelection{UID: -1, User: "bob", Partition: "p", States: []model.JobState{model.JobSuspended}}, cli.SignalRequest{BatchOnly: true}},
		{"flag beats env", []string{"-p", "q"}, []string{"SCANCEL_PARTITION=p"}, cli.JobSelection{UID: -1, Partition: "q"}, cli.SignalRequest{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fc := &fakeClient{}
			code, _, stderr := run(t, fc, tt.environ, "", tt.args...)
			if code != 0 || stderr != "" {
				t.Fatalf("code %d stderr %q", code, stderr)
			}
			if len(fc.calls) != 1 {
				t.Fatalf("%d Signal calls, want 1", len(fc.calls))
			}
			if got := fc.calls[0].sel; !reflect.DeepEqual(got, tt.sel) {
				t.Errorf("selection = %+v\nwant        %+v", got, tt.sel)
			}
			if got := fc.calls[0].req; got != tt.req {
				t.Errorf("request = %+v, want %+v", got, tt.req)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		environ []string
		results map[string]string
		code    int
		stderr  string
		calls   int
	}{
		{"no ids", nil, nil, nil, 1, "scancel: error: No job identification provided\n", 0},
		{"bad id", []string{"12x"}, nil, nil, 1, "scancel: error: Invalid job id 12x\n", 0},
		{"bad state", []string{"-t", "WAITING"}, nil, nil, 1,
			"Invalid job state specified: WAITING\nValid job states are PENDING, RUNNING, and SUSPENDED\n", 0},
		{"bad env state", []string{"1"}, []string{"SCANCEL_STATE=zz"}, nil, 1,
			"Unrecognized SCANCEL_STATE value: zz\nValid job states are PENDING, RUNNING, and SUSPENDED\n", 0},
		{"bad signal", []string{"-s", "FOO", "1"}, nil, nil, 1, "Unknown job signal: FOO\n", 0},
		{"bad option", []string{"--bogus"}, nil, nil, 1,
			"scancel: unknown flag: --bogus\nTry \"scancel --help\" for more information\n", 0},
		{"exit error env", nil, []string{"SLURM_EXIT_ERROR=3"}, nil, 3, "scancel: error: No job identification provided\n", 0},
		{"invalid id silent", []string{"999999"}, nil, map[string]string{"999999": cli.MsgInvalidJobID}, 0, "", 1},
		{"invalid id verbose", []string{"-v", "999999"}, nil, map[string]string{"999999": cli.MsgInvalidJobID}, 0,
			"scancel: Terminating job 999999\nscancel: error: Kill job error on job id 999999: Invalid job id specified\n", 1},
		{"done silent", []string{"5"}, nil, map[string]string{"5": cli.MsgAlreadyDone}, 0, "", 1},
		{"done with signal fails", []string{"-s", "USR1", "5"}, nil, map[string]string{"5": cli.MsgAlreadyDone}, 1, "", 1},
		{"access denied", []string{"5", "6"}, nil, map[string]string{"6": cli.MsgAccessDenied}, 1,
			"scancel: error: Kill job error on job id 6: Access/permission denied\n", 1},
		{"verbose signal", []string{"-v", "-b", "-s", "2", "5"}, nil, nil, 0, "scancel: Signal 2 to batch job 5\n", 1},
		{"step invalid", []string{"5.0"}, nil, map[string]string{"5.0": cli.MsgInvalidJobID}, 1,
			"scancel: error: Kill job error on job step id 5.0: Invalid job id specified\n", 1},
		{"step done", []string{"5.0"}, nil, map[string]string{"5.0": cli.MsgAlreadyDone}, 0, "", 1},
		{"step done verbose", []string{"-v", "5.0"}, nil, map[string]string{"5.0": cli.MsgAlreadyDone}, 0,
			"scancel: Terminating step 5.0\nscancel: error: Kill job error on job step id 5.0: Job/step already completing or completed\n", 1},
		{"step done with signal fails", []string{"-s", "USR1", "5.0"}, nil, map[string]string{"5.0": cli.MsgAlreadyDone}, 1, "", 1},
		{"step signal verbose", []string{"-v", "-s", "USR2", "5.1"}, nil, nil, 0, "scancel: Signal 12 to step 5.1\n", 1},
		{"array step invalid", []string{"7_3.batch"}, nil, map[string]string{"7_3.batch": cli.MsgInvalidJobID}, 1,
			"scancel: error: Kill job error on job step id 7_3.batch: Invalid job id specified\n", 1},
		{"step invalid quiet", []string{"-Q", "5.0"}, nil, map[string]string{"5.0": cli.MsgInvalidJobID}, 1, "", 1},
		{"step denied quiet", []string{"-Q", "5.0"}, nil, map[string]string{"5.0": cli.MsgAccessDenied}, 1,
			"scancel: error: Kill job error on job step id 5.0: Access/permission denied\n", 1},
		{"filtered invalid id", []string{"-p", "debug", "5"}, nil, map[string]string{"5": cli.MsgInvalidJobID}, 1,
			"scancel: error: Kill job error on job id 5: Invalid job id specified\n", 1},
		{"filtered invalid quiet", []string{"-Q", "-p", "debug", "5"}, nil, map[string]string{"5": cli.MsgInvalidJobID}, 1, "", 1},
		{"reservation matches nothing", []string{"-v", "-R", "maint"}, nil, nil, 0,
			"scancel: error: No active jobs match ALL job filters, including: reservation=maint \n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fc := &fakeClient{results: failWith(tt.results)}
			code, _, stderr := run(t, fc, tt.environ, "", tt.args...)
			if code != tt.code || stderr != tt.stderr {
				t.Errorf("got code %d stderr %q\nwant code %d stderr %q", code, stderr, tt.code, tt.stderr)
			}
			if len(fc.calls) != tt.calls {
				t.Errorf("%d Signal calls, want %d", len(fc.calls), tt.calls)
			}
		})
	}
}

func TestNoController(t *testing.T) {
	code, _, stderr := run(t, nil, nil, "", "5")
	want := "scancel: error: Kill job error on job id 5: " + cli.ErrNoController.Error() + "\n"
	if code != 1 || stderr != want {
		t.Errorf("code %d stderr %q", code, stderr)
	}
	code, _, stderr = run(t, nil, nil, "", "-u", "bob")
	if code != 1 || stderr != "slurm_load_jobs error: "+cli.ErrNoController.Error()+"\n" {
		t.Errorf("code %d stderr %q", code, stderr)
	}
}

func TestVersionAndHelp(t *testing.T) {
	code, out, _ := run(t, nil, nil, "", "-V")
	if code != 0 || out != "slurm 22.05.8\n" {
		t.Errorf("-V: %d %q", code, out)
	}
	code, out, _ = run(t, nil, nil, "", "--usage")
	if code != 0 || !strings.HasPrefix(out, "Usage: scancel") {
		t.Errorf("--usage: %d %q", code, out)
	}
	code, out, _ = run(t, nil, nil, "", "--help")
	if code != 0 || !strings.Contains(out, "--signal") {
		t.Errorf("--help: %d %q", code, out)
	}
}

func TestInteractive(t *testing.T) {
	spec := &model.JobSpec{}
	jobs := []*model.Job{
		{ID: 10, ArrayTaskID: model.NoArrayTask, Name: "a", Partition: "debug", State: model.JobPending, Spec: spec},
		{ID: 11, ArrayTaskID: model.NoArrayTask, Name: "b", Partition: "debug", State: model.JobRunning, Spec: spec},
		{ID: 12, ArrayTaskID: model.NoArrayTask, Name: "c", Partition: "debug", State: model.JobCompleted, Spec: spec},
		{ID: 14, ArrayJobID: 13, ArrayTaskID: 1, Name: "d", Partition: "gpu", State: model.JobPending, Spec: spec},
	}
	fc := &fakeClient{jobs: jobs}
	code, out, stderr := run(t, fc, nil, "y\nn\ny\n", "-i", "-p", "debug")
	if code != 0 || stderr != "" {
		t.Fatalf("code %d stderr %q", code, stderr)
	}
	wantOut := "Cancel job_id=10 name=a partition=debug [y/n]? Cancel job_id=11 name=b partition=debug [y/n]? "
	if out != wantOut {
		t.Errorf("prompts %q", out)
	}
	if len(fc.calls) != 1 || !reflect.DeepEqual(fc.calls[0].sel, cli.JobSelection{UID: -1, Targets: []cli.JobTarget{{ID: 10, Raw: "10"}}}) {
		t.Errorf("calls %+v", fc.calls)
	}

	fc = &fakeClient{jobs: jobs}
	_, out, _ = run(t, fc, nil, "y\n", "-i", "13_1")
	if out != "Cancel job_id=13_1 name=d partition=gpu [y/n]? " || len(fc.calls) != 1 ||
		!reflect.DeepEqual(fc.calls[0].sel.Targets, []cli.JobTarget{{ID: 13, Tasks: []int{1}, Raw: "13_1"}}) {
		t.Errorf("array: out %q calls %+v", out, fc.calls)
	}

	fc = &fakeClient{jobs: jobs}
	_, out, _ = run(t, fc, nil, "n\ny\ny\n", "-i", "11.0,13_1.batch,11")
	wantOut = "Cancel step_id=11.0 name=b partition=debug [y/n]? Cancel job_id=11 name=b partition=debug [y/n]? " +
		"Cancel step_id=13_1.batch name=d partition=gpu [y/n]? "
	wantTargets := []cli.JobTarget{{ID: 11, Raw: "11"}, {ID: 13, Tasks: []int{1}, Raw: "13_1.batch", HasStep: true, Step: model.StepBatch}}
	if out != wantOut || len(fc.calls) != 1 || !reflect.DeepEqual(fc.calls[0].sel.Targets, wantTargets) {
		t.Errorf("steps: out %q calls %+v", out, fc.calls)
	}

	fc = &fakeClient{jobs: jobs}
	if code, _, _ := run(t, fc, nil, "", "-i", "10"); code != 0 || len(fc.calls) != 0 {
		t.Errorf("EOF should decline: code %d calls %d", code, len(fc.calls))
	}
}

func TestParseSignal(t *testing.T) {
	for in, want := range map[string]int{"HUP": 1, "sigint": 2, "SIGKILL": 9, "usr2": 12, "15": 15, "Cont": 18, "XCPU": 24} {
		if got, ok := parseSignal(in); !ok || got != want {
			t.Errorf("parseSignal(%q) = %d, %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "0", "SIG", "BOGUS", "9x", "-1"} {
		if _, ok := parseSignal(in); ok {
			t.Errorf("parseSignal(%q) accepted", in)
		}
	}
}
