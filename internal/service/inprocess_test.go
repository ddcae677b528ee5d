package service

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/cli/scancel"
	"github.com/drover-hpc/drover/internal/cli/squeue"
	"github.com/drover-hpc/drover/internal/model"
)

// inProcess is the service as a command's client, with no transport
// between them: what a REST or web adapter does with api.Service.
type inProcess struct{ *Service }

func (inProcess) Close() error { return nil }

// The commands run on the service itself: one set of request and answer
// types, the caller's identity a plain value in the context.
func TestCommandsOverTheServiceInProcess(t *testing.T) {
	svc, _, _ := setup(t)
	id, err := svc.SubmitJob(as(1000), spec())
	if err != nil {
		t.Fatal(err)
	}
	run := func(uid uint32, cmd cli.Command, prog string, args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		env := &cli.Env{Prog: prog, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
			Now: func() time.Time { return time.Unix(1000, 0) }, Version: "22.05.8",
			Dial: func() (cli.Client, error) { return inProcess{svc}, nil }}
		code := cmd(as(uid), env, args)
		return code, out.String(), errb.String()
	}
	if code, out, errb := run(1000, squeue.Run, "squeue", "-h", "-o", "%i %T"); code != 0 || strings.TrimSpace(out) != "1 PENDING" {
		t.Fatalf("squeue: %d %q %q", code, out, errb)
	}
	if code, _, errb := run(1001, scancel.Run, "scancel", "1"); code == 0 || !strings.Contains(errb, "Access/permission denied") {
		t.Errorf("another user cancelled the job: %d %q", code, errb)
	}
	if code, _, errb := run(1000, scancel.Run, "scancel", "1"); code != 0 {
		t.Fatalf("the owner could not cancel: %d %q", code, errb)
	}
	if j := svc.store.Snapshot().Job(id); j.State != model.JobCancelled {
		t.Errorf("job after scancel: %s", j.State)
	}
}
