package sacct

import (
	"encoding/json"
	"io"

	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/version"
)

// The --json document follows the shape of Slurm's data_parser output
// (meta, jobs with nested state, exit_code, time and steps), with the
// fields Drover records.
type jsonDoc struct {
	Meta     jsonMeta  `json:"meta"`
	Jobs     []jsonJob `json:"jobs"`
	Warnings []any     `json:"warnings"`
	Errors   []any     `json:"errors"`
}

type jsonMeta struct {
	Plugin struct {
		Type       string `json:"type"`
		Name       string `json:"name"`
		DataParser string `json:"data_parser"`
	} `json:"plugin"`
	Slurm struct {
		Version struct {
			Major, Micro, Minor string
		} `json:"version"`
		Release string `json:"release"`
	} `json:"Slurm"`
}

type jsonExit struct {
	Status     []string `json:"status"`
	ReturnCode int32    `json:"return_code"`
	Signal     struct {
		ID   int32  `json:"id"`
		Name string `json:"name"`
	} `json:"signal"`
}

type jsonState struct {
	Current string `json:"current"` // Slurm 22.05 (v0.0.38): one word
	Reason  string `json:"reason"`
}

type jsonJob struct {
	Account         string     `json:"account"`
	AllocationNodes int32      `json:"allocation_nodes"`
	Array           jsonArray  `json:"array"`
	Cluster         string     `json:"cluster"`
	Comment         string     `json:"comment"`
	DerivedExitCode jsonExit   `json:"derived_exit_code"`
	ExitCode        jsonExit   `json:"exit_code"`
	Group           string     `json:"group"`
	JobID           uint32     `json:"job_id"`
	Name            string     `json:"name"`
	Nodes           string     `json:"nodes"`
	Partition       string     `json:"partition"`
	Priority        uint32     `json:"priority"`
	QOS             string     `json:"qos"`
	Required        jsonReq    `json:"required"`
	State           jsonState  `json:"state"`
	Steps           []jsonStep `json:"steps"`
	SubmitLine      string     `json:"submit_line"`
	Time            jsonTime   `json:"time"`
	TRES            jsonTRES   `json:"tres"`
	User            string     `json:"user"`
	WorkingDir      string     `json:"working_directory"`
}

type jsonArray struct {
	JobID  uint32 `json:"job_id"`
	Task   string `json:"task,omitempty"` // a pending remainder's tasks ("1-3,5")
	TaskID *int32 `json:"task_id,omitempty"`
}

type jsonReq struct {
	CPUs   int32 `json:"CPUs"`
	Memory int64 `json:"memory"`
}

type jsonTime struct {
	Elapsed    int64 `json:"elapsed"`
	Eligible   int64 `json:"eligible"`
	End        int64 `json:"end"`
	Start      int64 `json:"start"`
	Submission int64 `json:"submission"`
	Suspended  int64 `json:"suspended"`
	Limit      any   `json:"limit"`
	System     struct {
		Seconds      int64 `json:"seconds"`
		Microseconds int64 `json:"microseconds"`
	} `json:"system"`
	User struct {
		Seconds      int64 `json:"seconds"`
		Microseconds int64 `json:"microseconds"`
	} `json:"user"`
}

type jsonTRES struct {
	Allocated string `json:"allocated"`
	Requested string `json:"requested"`
}

type jsonStep struct {
	Step struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"step"`
	State    string   `json:"state"`
	ExitCode jsonExit `json:"exit_code"`
	Nodes    struct {
		Count int32  `json:"count"`
		Range string `json:"range"`
	} `json:"nodes"`
	Tasks struct {
		Count int32 `json:"count"`
	} `json:"tasks"`
	Time struct {
		Elapsed int64 `json:"elapsed"`
		End     int64 `json:"end"`
		Start   int64 `json:"start"`
	} `json:"time"`
	TRES struct {
		Allocated string `json:"allocated"`
	} `json:"tres"`
	Statistics struct {
		MaxRSS int64 `json:"max_rss"`
		AveRSS int64 `json:"ave_rss"`
		UserUs int64 `json:"user_cpu_us"`
		SysUs  int64 `json:"system_cpu_us"`
	} `json:"statistics"`
}

func exitJSON(status, signal int32) jsonExit {
	e := jsonExit{ReturnCode: status}
	switch {
	case signal != 0:
		e.Status = []string{"SIGNALED"}
		e.Signal.ID = signal
	case status != 0:
		e.Status = []string{"ERROR"}
	default:
		e.Status = []string{"SUCCESS"}
	}
	return e
}

func writeJSON(w io.Writer, jobs []*acct.Job, rows *folding, now int64, sel *selection, noSteps bool) error {
	doc := jsonDoc{Jobs: []jsonJob{}, Warnings: []any{}, Errors: []any{}}
	doc.Meta.Plugin.Type, doc.Meta.Plugin.Name, doc.Meta.Plugin.DataParser = "openapi/drover", "Drover", "v0.0.38"
	doc.Meta.Slurm.Release = version.Version
	r := &row{now: now, u: &units{}}
	for _, j := range jobs {
		rec, ok := rows.row(j)
		if !ok {
			continue
		}
		j = rec.j
		if whole, steps := sel.match(j); !whole && len(steps) == 0 {
			continue
		}
		r.j, r.s = j, nil
		jj := jsonJob{Account: j.Account, Cluster: j.Cluster, Comment: j.Comment, Group: j.Group, JobID: j.JobID,
			Name: j.Name, Nodes: j.NodeList, Partition: j.Partition, Priority: j.Priority, QOS: j.QOS,
			SubmitLine: j.SubmitLine, User: j.User, WorkingDir: j.WorkDir, Steps: []jsonStep{},
			DerivedExitCode: exitJSON(j.DerivedExitStatus, j.DerivedExitSignal), ExitCode: exitJSON(j.ExitStatus, j.ExitSignal),
			State: jsonState{Current: j.State, Reason: j.Reason},
			TRES:  jsonTRES{Allocated: j.AllocTRES, Requested: j.ReqTRES}, Required: jsonReq{CPUs: j.ReqCPUs, Memory: j.ReqMem}}
		if j.Start != 0 {
			jj.AllocationNodes = j.NNodes
		}
		switch {
		case rec.tasks != "":
			// The array's own record in Slurm: its id, no task id.
			jj.JobID, jj.Array = j.ArrayJobID, jsonArray{JobID: j.ArrayJobID, Task: rec.tasks}
		case j.ArrayTaskID >= 0:
			t := j.ArrayTaskID
			jj.Array = jsonArray{JobID: j.ArrayJobID, TaskID: &t}
		}
		jj.Time = jsonTime{Elapsed: r.elapsed(), Eligible: j.Eligible, End: j.End, Start: j.Start, Submission: j.Submit,
			Suspended: j.Suspended, Limit: timeLimit(j.TimeLimit, true)}
		var us, sys int64
		for _, s := range j.Steps {
			us += s.UserCPU
			sys += s.SystemCPU
			if noSteps {
				continue
			}
			r.s = s
			var js jsonStep
			js.Step.ID, js.Step.Name = jobID(j, s), s.Name
			js.State, js.ExitCode = s.State, exitJSON(s.ExitStatus, s.ExitSignal)
			js.Nodes.Count, js.Nodes.Range, js.Tasks.Count = s.NNodes, s.NodeList, s.NTasks
			js.Time.Elapsed, js.Time.Start, js.Time.End = r.elapsed(), s.Start, s.End
			js.TRES.Allocated = s.AllocTRES
			js.Statistics.MaxRSS, js.Statistics.AveRSS = s.MaxRSS, s.AveRSS
			js.Statistics.UserUs, js.Statistics.SysUs = s.UserCPU, s.SystemCPU
			jj.Steps = append(jj.Steps, js)
		}
		jj.Time.User.Seconds, jj.Time.User.Microseconds = us/1e6, us%1e6
		jj.Time.System.Seconds, jj.Time.System.Microseconds = sys/1e6, sys%1e6
		doc.Jobs = append(doc.Jobs, jj)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
