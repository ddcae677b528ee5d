package agent

import (
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/model"
)

// An scontrol update TimeLimit= that reaches the node before the job's
// launch armed its limit (the job is RUNNING from its allocation on, so the
// update can overtake the launch's set-up) is the limit the launch arms.
func TestTimeLimitUpdateBeforeArming(t *testing.T) {
	a := &Agent{}
	start := time.Now().Unix()
	j := &job{id: 7, model: &model.Job{StartTime: start, TimeLimit: 300}}
	a.newTimeLimit(j, 3) // not armed yet: recorded only
	if j.limit != nil || !j.deadline.IsZero() {
		t.Fatalf("armed before the launch: deadline %v", j.deadline)
	}
	a.timeLimit(j)
	defer j.limit.Stop()
	if want := time.Unix(start+3, 0); !j.deadline.Equal(want) {
		t.Errorf("deadline %v, want %v (the updated 3 s, not the launch's 300 s)", j.deadline, want)
	}
	// Without an update the launch's limit counts.
	k := &job{id: 8, model: &model.Job{StartTime: start, TimeLimit: 300}}
	a.timeLimit(k)
	defer k.limit.Stop()
	if want := time.Unix(start+300, 0); !k.deadline.Equal(want) {
		t.Errorf("deadline %v, want %v", k.deadline, want)
	}
}
