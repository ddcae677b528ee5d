package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"google.golang.org/protobuf/proto"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/executor"
	"github.com/drover-hpc/drover/internal/wire"
)

// Batch scripts run under supervisors (executor.StartSupervised) so that
// they outlive the agent. Each has a root-only directory under
// <spool>/super/job<N> holding the supervisor's files and the job record
// (job.pb; meta.json too for an allocation); a restarted agent takes back every job it finds
// there, and removes a directory once the controller has confirmed the
// job's end.

type jobMeta struct {
	ErrPath string `json:"err_path"`
	Dir     string `json:"dir"`
	// Alloc: an salloc/srun allocation, held with no program of its own.
	Alloc bool `json:"alloc,omitempty"`
}

// recordAllocation notes an allocation the node holds, so that a later
// agent holds it too.
func (a *Agent) recordAllocation(j *job) error {
	dir := a.superDir(j.id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, err := proto.Marshal(wire.JobToPB(j.model, wire.Full))
	if err != nil {
		return err
	}
	meta, _ := json.Marshal(jobMeta{Alloc: true})
	if err := os.WriteFile(filepath.Join(dir, "job.pb"), b, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "meta.json"), meta, 0o600); err != nil {
		return err
	}
	j.mu.Lock()
	j.alloc = true
	j.mu.Unlock()
	return nil
}

// newSuperDir makes a job's supervisor directory afresh (root's, 0700):
// whatever an earlier run left there is removed first.
func newSuperDir(dir string) error {
	err := os.Mkdir(dir, 0o700)
	switch {
	case errors.Is(err, os.ErrExist):
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		return os.Mkdir(dir, 0o700)
	case errors.Is(err, os.ErrNotExist): // the first job: no super/ yet
		return os.MkdirAll(dir, 0o700)
	}
	return err
}

// superFiles are the files the agent and the supervisor write in a
// supervisor directory.
var superFiles = []string{"job.pb", "meta.json", "step.pb", "task.json", "pgid", "result.json", suspendFile}

// removeSuperDir removes a job's (or a step task's) supervisor directory:
// the files the agent and the supervisor write there one by one, then the directory (a
// listing only when something else is left).
func removeSuperDir(dir string) {
	for _, f := range superFiles {
		_ = syscall.Unlink(filepath.Join(dir, f))
	}
	if err := syscall.Rmdir(dir); err != nil && !errors.Is(err, syscall.ENOENT) {
		_ = os.RemoveAll(dir)
	}
}

func (a *Agent) superDir(id uint32) string {
	return filepath.Join(a.spool, "super", "job"+strconv.FormatUint(uint64(id), 10))
}

// detachable reports whether j's program can outlive the agent: a batch
// script under a supervisor.
func (j *job) detachable() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.supervised || j.alloc
}

// connectSupervisor reaches the node's job supervisor (starting it when
// none runs). Without one, batch scripts start directly and end with the
// agent until keepSupervisor reaches one.
func (a *Agent) connectSupervisor() {
	sup, err := executor.ConnectSupervisor(supervisorSocket(a.spool))
	if err != nil {
		a.log.Warn("no job supervisor: batch jobs will not outlive this agent until one answers", "err", err)
		return
	}
	a.mu.Lock()
	a.sup = sup
	a.mu.Unlock()
}

// startSupervised starts a batch script under the node's supervisor and
// records the job for a later agent.
func (a *Agent) startSupervised(j *job, es *executor.Spec) (executor.Process, error) {
	a.mu.Lock()
	sup := a.sup
	a.mu.Unlock()
	if sup == nil {
		return a.executor().Start(es)
	}
	dir := a.superDir(j.id)
	if err := a.newSuperDir(dir); err != nil {
		return nil, err
	}
	b, err := proto.Marshal(wire.JobToPB(j.model, wire.Full))
	if err != nil {
		return nil, err
	}
	// The record alone: the job's spool and error file follow from it
	// (jobPaths), so a batch job needs no meta.json (one file less to
	// create and remove per job).
	if err := executor.WriteRecord(filepath.Join(dir, "job.pb"), b, 0o600); err != nil {
		return nil, err
	}
	// Supervised from before the start: the script may run before the
	// supervisor's answer reaches this agent, and an agent stopping in
	// between must leave it to the supervisor (and the next agent), not
	// count it as its own to kill; the controller would run it again.
	j.mu.Lock()
	j.supervised = true
	j.mu.Unlock()
	// Held: the result comes back in the supervisor's message instead of
	// a file (settled with Forget once the controller confirms the end).
	proc, err := sup.StartHeld(dir, es)
	if err != nil {
		j.mu.Lock()
		j.supervised = false
		j.mu.Unlock()
		_ = os.RemoveAll(dir)
		a.mu.Lock()
		stopping := a.stopping
		a.mu.Unlock()
		if stopping {
			// Started now it would outlive this agent unknown to the next.
			return nil, fmt.Errorf("agent stopping: %w", err)
		}
		// Refused or unreachable: run it directly (it ends with the agent).
		a.log.Warn("no job supervisor: this job will not outlive the agent", "job", j.id, "err", err)
		return a.executor().Start(es)
	}
	return proc, nil
}

// recover takes back the batch jobs a previous agent left running (or that
// ended while no agent watched): they report their end as usual.
func (a *Agent) recover() {
	a.connectSupervisor()
	entries, err := os.ReadDir(filepath.Join(a.spool, "super"))
	if err != nil {
		return
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	jobs, tasks := stepDirNames(names)
	for _, n := range jobs {
		id, _ := strconv.ParseUint(strings.TrimPrefix(n, "job"), 10, 32)
		dir := filepath.Join(a.spool, "super", n)
		j, err := a.reattach(uint32(id), dir)
		if err != nil {
			a.log.Warn("cannot take back job", "job", id, "err", err)
			_ = os.RemoveAll(dir)
			continue
		}
		a.mu.Lock()
		a.jobs[j.id] = j
		a.mu.Unlock()
		a.log.Info("took back job left by a previous agent", "job", id, "allocation", j.alloc)
		if j.alloc {
			go a.run(j) // holds the allocation again
			continue
		}
		go a.resume(j)
	}
	a.recoverSteps(tasks)
}

func (a *Agent) reattach(id uint32, dir string) (*job, error) {
	b, err := os.ReadFile(filepath.Join(dir, "job.pb"))
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		// A reused directory (discard.go) whose new record was never
		// written: no job was started from it.
		return nil, errors.New("no job record")
	}
	var pj pb.Job
	if err := proto.Unmarshal(b, &pj); err != nil {
		return nil, err
	}
	var meta jobMeta
	if mb, err := os.ReadFile(filepath.Join(dir, "meta.json")); err == nil {
		_ = json.Unmarshal(mb, &meta)
	} else if pj.Spec != nil {
		// A batch job's record is job.pb alone (an earlier agent wrote
		// meta.json too).
		meta.Dir = jobDirPath(a.spool, id)
		_, _, meta.ErrPath = batchStdio(wire.JobFromPB(&pj), a.node)
	}
	if meta.Alloc {
		j := newJob(id, wire.JobFromPB(&pj), true)
		j.alloc, j.prologDone = true, true
		a.reopenJobGroup(j)
		loadSuspension(j, dir)
		return j, nil
	}
	var proc executor.Process
	err = errors.New("no job supervisor")
	if a.sup != nil {
		proc, err = a.sup.Reattach(dir)
	}
	if err != nil {
		// Its supervisor is gone: follow its processes, or report it
		// lost if they are gone too (suplost.go).
		if proc = orphanOf(dir); proc == nil {
			return nil, err
		}
		a.log.Warn("the job's supervisor is gone: taking back its processes without it", "job", id, "pgid", proc.Pid(), "err", err)
	}
	j := newJob(id, wire.JobFromPB(&pj), true)
	j.proc, j.supervised, j.errPath, j.dir = proc, true, meta.ErrPath, meta.Dir
	j.prologDone = true
	j.batch = a.reopenSampler(jobGroupName(id) + "/step_batch")
	a.reopenJobGroup(j)
	loadSuspension(j, dir)
	return j, nil
}

// reopenJobGroup takes back the cgroup an earlier agent made for j: a
// suspension (the freezer) then thaws and freezes the whole job, steps
// included, as it did before the restart.
func (a *Agent) reopenJobGroup(j *job) {
	if a.iso == nil {
		return
	}
	if g, err := a.iso.cg.Open(jobGroupName(j.id)); err == nil {
		j.cg = g
	}
}

// resume follows a job taken back until it ends.
func (a *Agent) resume(j *job) {
	a.timeLimit(j)
	j.mu.Lock()
	proc := j.proc
	j.mu.Unlock()
	res := a.outliveSupervisor(j, proc.Wait())
	j.stopLimit()
	a.finish(j, res)
}

// supervisorSocket is the supervisor's socket for a spool directory: in the
// spool, unless that path is too long for a Unix socket (108 bytes), then
// under a root-only directory in /run named after the spool.
func supervisorSocket(spool string) string {
	p := filepath.Join(spool, "super.sock")
	if len(p) < 100 {
		return p
	}
	sum := sha256.Sum256([]byte(spool))
	dir := "/run/drover-supervisor"
	if err := os.MkdirAll(dir, 0o700); err != nil {
		dir = spool // fails below with a clear error
	}
	return filepath.Join(dir, "super-"+hex.EncodeToString(sum[:8])+".sock")
}
