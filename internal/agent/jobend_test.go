package agent

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/model"
)

// TestStepsToldWhyBeforeRelease: when an allocation's time runs out, its
// holder (holdAllocation) wakes on the release and ends the steps quietly.
// The steps must have been told TIMEOUT before that, or srun shows a bare
// "Terminated" instead of slurmstepd's "DUE TO TIME LIMIT" line (seen as a
// TestAllocationTimeLimit failure).
func TestStepsToldWhyBeforeRelease(t *testing.T) {
	for range 200 {
		a, _ := testAgent(t)
		s := testStep(a, &model.StepSpec{Argv: []string{"sleep"}}, 0)
		j := s.j
		// The job's error file gets slurmstepd's line first: the time
		// the steps used to lose the race in.
		j.errPath = filepath.Join(t.TempDir(), "err")
		if err := os.WriteFile(j.errPath, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		seen := make(chan model.JobState, 1)
		go func() {
			<-j.released
			s.mu.Lock()
			seen <- s.endAs
			s.mu.Unlock()
		}()
		a.terminateJob(j, a.stepdMessage(j, " DUE TO TIME LIMIT"), model.JobTimeout)
		select {
		case st := <-seen:
			if st != model.JobTimeout {
				t.Fatalf("the step ended as %v when the release came, want TIMEOUT", st)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no release within 10 s of the job's end")
		}
	}
}
