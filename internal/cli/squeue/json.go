package squeue

import (
	"context"
	"fmt"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/cli/openapi"
	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/model"
)

// jsonJob is one job of squeue --json: the fields of Slurm 22.05's
// v0.0.38 job object that Drover knows, under the same names.
type jsonJob struct {
	Account         string `json:"account"`
	ArrayJobID      uint32 `json:"array_job_id"`
	ArrayTaskID     *int   `json:"array_task_id"`
	BatchFlag       bool   `json:"batch_flag"`
	BatchHost       string `json:"batch_host"`
	Command         string `json:"command"`
	Comment         string `json:"comment"`
	WorkDir         string `json:"current_working_directory"`
	Dependency      string `json:"dependency"`
	EligibleTime    int64  `json:"eligible_time"`
	EndTime         int64  `json:"end_time"`
	ExitCode        int32  `json:"exit_code"`
	GroupID         uint32 `json:"group_id"`
	JobID           uint32 `json:"job_id"`
	JobState        string `json:"job_state"`
	Name            string `json:"name"`
	Nice            int    `json:"nice"`
	NodeCount       int    `json:"node_count"`
	Nodes           string `json:"nodes"`
	Partition       string `json:"partition"`
	Priority        uint32 `json:"priority"`
	QOS             string `json:"qos"`
	Requeue         bool   `json:"requeue"`
	RestartCnt      int    `json:"restart_cnt"`
	StandardError   string `json:"standard_error"`
	StandardInput   string `json:"standard_input"`
	StandardOutput  string `json:"standard_output"`
	StartTime       int64  `json:"start_time"`
	StateReason     string `json:"state_reason"`
	SubmitTime      int64  `json:"submit_time"`
	TimeLimit       *int64 `json:"time_limit"` // minutes; null when unlimited
	UserID          uint32 `json:"user_id"`
	UserName        string `json:"user_name"`
	Tasks           int    `json:"tasks"`
	CPUs            int    `json:"cpus"`
	ArrayTaskString string `json:"array_task_string"`
	ArrayMaxTasks   int    `json:"array_max_tasks"`
}

// runJSON prints every job the controller holds as Slurm 22.05's squeue
// --json does: it too ignores the filters.
func runJSON(ctx context.Context, env *cli.Env) error {
	client, err := env.Client()
	if err != nil {
		fmt.Fprintf(env.Stderr, "slurm_load_jobs error: %v\n", err)
		return err
	}
	list, err := client.ListJobs(ctx, cli.JobQuery{IncludeAll: true})
	if err != nil {
		fmt.Fprintf(env.Stderr, "slurm_load_jobs error: %v\n", err)
		return err
	}
	out := struct {
		Meta   openapi.Meta `json:"meta"`
		Errors []string     `json:"errors"`
		Jobs   []jsonJob    `json:"jobs"`
	}{Meta: openapi.NewMeta(), Errors: []string{}, Jobs: []jsonJob{}}
	for _, j := range list.Jobs {
		out.Jobs = append(out.Jobs, toJSON(j))
	}
	return openapi.Write(env.Stdout, out)
}

func toJSON(j *model.Job) jsonJob {
	spec := j.Spec
	if spec == nil {
		spec = &model.JobSpec{}
	}
	state := j.State.String()
	if j.Completing {
		state = "COMPLETING"
	}
	o := jsonJob{
		Account: spec.Account, BatchFlag: spec.Script != "", BatchHost: j.BatchHost(), WorkDir: spec.WorkDir,
		EligibleTime: j.EligibleTime, EndTime: j.EndTime, ExitCode: j.ExitCode, GroupID: j.GroupID,
		JobID: uint32(j.ID), JobState: state, Name: j.Name, Nice: j.Nice, NodeCount: len(j.Alloc),
		Nodes: hostlist.Compress(j.NodeNames()), Partition: j.Partition, Priority: j.Priority, QOS: spec.QOS,
		Requeue: spec.Requeue, RestartCnt: j.Restarts, StandardError: spec.StdErr, StandardInput: spec.StdIn,
		StandardOutput: spec.StdOut, StartTime: j.StartTime, StateReason: j.Reason, SubmitTime: j.SubmitTime,
		UserID: j.UserID, UserName: j.UserName, Comment: j.Comment, Tasks: max(1, spec.NTasks), CPUs: j.TotalCPUs(),
	}
	if o.StateReason == "" {
		o.StateReason = model.ReasonNone
	}
	if o.QOS == "" {
		o.QOS = "normal"
	}
	if len(spec.Argv) > 0 && spec.Script == "" {
		o.Command = spec.Argv[0]
	}
	if spec.Dependency != nil {
		o.Dependency = spec.Dependency.Raw
	}
	if j.IsArrayTask() {
		id := j.ArrayTaskID
		o.ArrayJobID, o.ArrayTaskID = uint32(j.ArrayJobID), &id
		if spec.Array != nil {
			o.ArrayMaxTasks = spec.Array.Throttle
		}
	}
	if j.TimeLimit > 0 {
		m := (j.TimeLimit + 59) / 60
		o.TimeLimit = &m
	}
	if o.NodeCount == 0 {
		o.NodeCount = max(1, spec.MinNodes)
	}
	return o
}
