package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/executor"
	"github.com/drover-hpc/drover/internal/model"
)

// Losing the node's job supervisor (killed, or gone when a restarted agent
// looks for it) loses the exit status of the batch scripts it was the
// parent of, not the scripts: they were reparented and may well still run.
// So the agent never declares such a job failed on the spot. While its
// process group lives it follows it as an orphan (signals, cancel and time
// limit still reach it); once the group is gone it reports the job ended
// NODE_FAIL, as slurmctld does for the jobs of a node that failed, with no
// made-up exit code.

// outliveSupervisor follows j's processes past its supervisor's end, if
// res says the supervisor ended first and the group still runs; it
// returns the result to report.
func (a *Agent) outliveSupervisor(j *job, res executor.Result) executor.Result {
	if !errors.Is(res.Err, executor.ErrSupervisorLost) {
		return res
	}
	j.mu.Lock()
	pgid := 0
	if j.proc != nil {
		pgid = j.proc.Pid()
	}
	j.mu.Unlock()
	if !executor.GroupAlive(pgid) {
		return res
	}
	a.log.Warn("the node's job supervisor is gone but the job's processes still run: following them", "job", j.id, "pgid", pgid)
	orphan := executor.Orphan(pgid)
	j.mu.Lock()
	j.proc = orphan
	ending := j.ending // terminated before the swap: the old handle no longer signals
	j.mu.Unlock()
	if ending {
		orphan.Terminate(a.getKillWait())
	}
	return orphan.Wait()
}

// orphanOf is the handle on a job whose supervisor does not hold it (a
// new supervisor, or none) at an agent's start, from the process group
// its supervisor recorded; nil when none was recorded (it never started).
// A group already gone gives a handle whose Wait returns at once.
func orphanOf(dir string) executor.Process {
	b, err := os.ReadFile(filepath.Join(dir, "pgid"))
	if err != nil {
		return nil
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pgid <= 1 {
		return nil
	}
	return executor.Orphan(pgid)
}

// supervisorLostEnd is how a job whose supervisor was lost ends: NODE_FAIL
// (the node failed it), its exit status unknown.
func supervisorLostEnd() (model.JobState, string) {
	return model.JobNodeFail, model.ReasonNodeDown
}

// waitTask waits for one of a step's tasks, following it past its
// supervisor's end as outliveSupervisor does for a batch script: its
// pipes are the agent's, so its output still flows while it runs.
func (s *stepRun) waitTask(rank int, p executor.Process) executor.Result {
	res := p.Wait()
	if !errors.Is(res.Err, executor.ErrSupervisorLost) || !executor.GroupAlive(p.Pid()) {
		return res
	}
	s.a.log.Warn("the node's job supervisor is gone but a step's task still runs: following it",
		"job", s.j.id, "step", s.st.ID, "rank", rank, "pgid", p.Pid())
	orphan := executor.Orphan(p.Pid())
	s.mu.Lock()
	s.procs[rank] = orphan
	ending := s.ending // terminated before the swap: the old handle no longer signals
	s.mu.Unlock()
	if ending {
		orphan.Terminate(s.a.getKillWait())
	}
	return orphan.Wait()
}
