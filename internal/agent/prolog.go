package agent

import (
	"bufio"
	"bytes"
	"context"
	"fmt"

	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/model"
)

// Drain reasons for a failing Prolog or Epilog (Slurm's words).
const (
	ReasonPrologError = "Prolog error"
	ReasonEpilogError = "Epilog error"
)

// scriptEnv is what Prolog, Epilog and TaskProlog see of the job.
func (a *Agent) scriptEnv(mj *model.Job, context string) []string {
	env := []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"SLURM_SCRIPT_CONTEXT=" + context,
		"SLURM_JOB_ID=" + strconv.FormatUint(uint64(mj.ID), 10),
		"SLURM_JOBID=" + strconv.FormatUint(uint64(mj.ID), 10),
		"SLURM_JOB_USER=" + mj.UserName,
		"SLURM_JOB_UID=" + strconv.FormatUint(uint64(mj.UserID), 10),
		"SLURM_JOB_GID=" + strconv.FormatUint(uint64(mj.GroupID), 10),
		"SLURM_JOB_NODELIST=" + hostlist.Compress(mj.NodeNames()),
		"SLURM_JOB_PARTITION=" + mj.Partition,
		"SLURM_JOB_NAME=" + mj.Name,
		"SLURM_CLUSTER_NAME=" + a.clusterName(),
		"SLURMD_NODENAME=" + a.node,
		"SLURM_CONF=" + a.absConf(),
	}
	if mj.Spec != nil {
		env = append(env, "SLURM_JOB_ACCOUNT="+mj.Spec.Account, "SLURM_JOB_WORK_DIR="+mj.Spec.WorkDir)
	}
	if mj.IsArrayTask() {
		env = append(env, "SLURM_ARRAY_JOB_ID="+strconv.FormatUint(uint64(mj.ArrayJobID), 10),
			"SLURM_ARRAY_TASK_ID="+strconv.Itoa(mj.ArrayTaskID))
	}
	if g := nodeAlloc(mj, a.node).GPUs; g.Count() > 0 {
		ids := strings.ReplaceAll(strings.Trim(fmt.Sprint(g.IDs()), "[]"), " ", ",")
		env = append(env, "SLURM_JOB_GPUS="+ids, "CUDA_VISIBLE_DEVICES="+ids)
	}
	return env
}

// runAdminScript runs Prolog or Epilog as root with the job's variables;
// the error says how it failed. PrologEpilogTimeout bounds it (none: 5
// minutes, so a hung script cannot hold a node forever).
func (a *Agent) runAdminScript(path string, env []string) error {
	limit := a.conf().PrologEpilogTimeout
	if limit <= 0 {
		limit = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, path)
	cmd.Env, cmd.Dir = env, "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("%s timed out after %s", path, limit)
	case err != nil:
		return fmt.Errorf("%s: %v: %s", path, err, strings.TrimSpace(out.String()))
	}
	return nil
}

// prolog runs slurm.conf's Prolog for the job on this node, once. A
// failure drains the node ("Prolog error"); the caller requeues the job.
func (a *Agent) prolog(j *job) error {
	if a.conf().Prolog == "" {
		return nil
	}
	j.mu.Lock()
	if j.prologDone {
		j.mu.Unlock()
		return nil
	}
	j.prologDone = true
	mj := j.model
	j.mu.Unlock()
	if err := a.runAdminScript(a.conf().Prolog, a.scriptEnv(mj, "prolog_slurmd")); err != nil {
		a.log.Error("prolog failed: draining the node", "job", j.id, "err", err)
		a.drainSelf(ReasonPrologError)
		return err
	}
	return nil
}

// epilog runs slurm.conf's Epilog once the job is over on this node, if
// the job ran here (its prolog ran, or there was none). A failure drains
// the node ("Epilog error"); the job keeps its result.
func (a *Agent) epilog(j *job) {
	if a.conf().Epilog == "" {
		return
	}
	j.mu.Lock()
	mj := j.model
	j.mu.Unlock()
	if err := a.runAdminScript(a.conf().Epilog, a.scriptEnv(mj, "epilog_slurmd")); err != nil {
		a.log.Error("epilog failed: draining the node", "job", j.id, "err", err)
		a.drainSelf(ReasonEpilogError)
	}
}

func (a *Agent) noHoldOnPrologFail() bool {
	v, _ := a.conf().Get("SchedulerParameters")
	return strings.Contains(strings.ToLower(v), "nohold_on_prolog_fail")
}

// taskProlog runs TaskProlog as the job's user before a task and applies
// what it prints to the task's environment, as Slurm does: "export
// NAME=value" sets a variable, "unset NAME" removes one, and "print ..."
// lines go to the task's standard output (returned). A failing TaskProlog
// does not stop the task.
func (a *Agent) taskProlog(mj *model.Job, env []string) ([]string, string) {
	path := a.conf().TaskProlog
	if path == "" {
		return env, ""
	}
	out, err := a.runAsUser(path, mj, env)
	if err != nil {
		a.log.Warn("TaskProlog failed", "job", mj.ID, "err", err)
	}
	var printed strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "export "):
			kv := strings.TrimSpace(strings.TrimPrefix(line, "export "))
			if name, _, ok := strings.Cut(kv, "="); ok && name != "" {
				env = setEnv(env, kv)
			}
		case strings.HasPrefix(line, "unset "):
			env = unsetEnv(env, strings.TrimSpace(strings.TrimPrefix(line, "unset ")))
		case strings.HasPrefix(line, "print "):
			printed.WriteString(strings.TrimPrefix(line, "print ") + "\n")
		}
	}
	return env, printed.String()
}

// taskEpilog runs TaskEpilog as the job's user after a task, with the
// task's environment; its output is dropped and a failure only logged.
func (a *Agent) taskEpilog(mj *model.Job, env []string) {
	if a.conf().TaskEpilog == "" {
		return
	}
	if _, err := a.runAsUser(a.conf().TaskEpilog, mj, env); err != nil {
		a.log.Warn("TaskEpilog failed", "job", mj.ID, "err", err)
	}
}

// runAsUser runs a per-task script as the job's user, in the job's
// working directory, for a minute at most, and returns its output.
func (a *Agent) runAsUser(path string, mj *model.Job, env []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path)
	cmd.Env = env
	cmd.Dir = "/"
	if mj.Spec != nil && mj.Spec.WorkDir != "" {
		cmd.Dir = mj.Spec.WorkDir
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true,
		Credential: &syscall.Credential{Uid: mj.UserID, Gid: mj.GroupID, Groups: mj.Groups}}
	return cmd.Output()
}

func setEnv(env []string, kv string) []string {
	name, _, _ := strings.Cut(kv, "=")
	return append(unsetEnv(env, name), kv)
}

func unsetEnv(env []string, name string) []string {
	out := env[:0:0]
	for _, e := range env {
		if n, _, _ := strings.Cut(e, "="); n != name {
			out = append(out, e)
		}
	}
	return out
}
