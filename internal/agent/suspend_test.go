package agent

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/wire"
)

// TestReattachKeepsSuspension: a job taken back by a restarted agent
// keeps the suspension recorded by the agent before: no time limit armed
// while suspended, the deadline moved by the time suspended so far, and a
// resume thaws it and moves the deadline by the current suspension too.
// Before, the job was taken back as running: its limit ran and a resume
// did nothing.
func TestReattachKeepsSuspension(t *testing.T) {
	a, _ := testAgent(t)
	mj := testBatchJob(t, &model.JobSpec{Script: "#!/bin/sh\n"}).model
	start := time.Now().Add(-50 * time.Second).Unix()
	mj.StartTime, mj.TimeLimit = start, 60
	dir := a.superDir(7)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := proto.Marshal(wire.JobToPB(mj, wire.Full))
	if err != nil {
		t.Fatal(err)
	}
	pgid := startGroup(t, "sleep", "300")
	// Written the way the agent before wrote them: suspended 40 s ago,
	// after 5 s of an earlier suspension.
	j0 := newJob(7, mj, true)
	j0.supervised, j0.suspended = true, true
	j0.frozenAt, j0.pausedFor = time.Now().Add(-40*time.Second), 5*time.Second
	a.saveSuspension(j0)
	for name, data := range map[string][]byte{"job.pb": b, "pgid": []byte(strconv.Itoa(pgid))} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	j, err := a.reattach(7, dir)
	if err != nil {
		t.Fatal(err)
	}
	a.timeLimit(j)
	j.mu.Lock()
	suspended, armed, deadline := j.suspended, j.limit != nil, j.deadline
	j.mu.Unlock()
	if !suspended || armed {
		t.Fatalf("taken back suspended=%v with its time limit armed=%v, want suspended and not armed", suspended, armed)
	}
	if want := time.Unix(start+60, 0).Add(5 * time.Second); !deadline.Equal(want) {
		t.Errorf("deadline %v, want %v (start + limit + 5 s suspended before)", deadline, want)
	}
	a.suspend(j, false)
	j.mu.Lock()
	suspended, armed, deadline = j.suspended, j.limit != nil, j.deadline
	j.mu.Unlock()
	j.stopLimit()
	if suspended || !armed {
		t.Fatalf("after resume suspended=%v armed=%v", suspended, armed)
	}
	// Moved by the 40 s of the current suspension (and the test's time).
	if min := time.Unix(start+60, 0).Add(45 * time.Second); deadline.Before(min) {
		t.Errorf("deadline after resume %v, want at least %v", deadline, min)
	}
	later := newJob(7, mj, true)
	loadSuspension(later, dir)
	if later.suspended || later.pausedFor < 45*time.Second {
		t.Errorf("after resume a later agent reads suspended=%v paused %v, want running, paused >= 45 s", later.suspended, later.pausedFor)
	}
}
