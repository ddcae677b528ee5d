package service

import (
	"context"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/jobspec"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched/features"
	"github.com/drover-hpc/drover/internal/state"
	"github.com/drover-hpc/drover/internal/units"
)

// Slurm's answers to scontrol update that scripts look for.
const (
	msgNotPending   = "Job is no longer pending execution"
	msgNodeCount    = "Node count specification invalid"
	msgNodeConfig   = "Requested node configuration is not available"
	msgNotSupported = "Update of this parameter is not supported: "
)

// pendingOnly are the fields Slurm changes only while a job is pending.
var pendingOnly = map[string]bool{
	"starttime": true, "account": true, "numtasks": true, "dependency": true,
	"excnodelist": true, "gres": true, "partition": true, "qos": true,
	"numnodes": true, "reqnodelist": true, "features": true, "mincpusnode": true,
}

// UpdateJob changes what scontrol update JobId= may change: TimeLimit,
// Partition, Name, Comment, Nice, Priority (operators), StartTime, QOS,
// Account, NumNodes, NumTasks, Dependency, ArrayTaskThrottle,
// ReqNodeList, ExcNodeList, Gres, Features and MinCPUsNode. Fields come under their canonical
// names, in Slurm's value formats (StartTime as unix seconds).
func (s *Service) UpdateJob(ctx context.Context, sel api.JobSelection, fields map[string]string) ([]api.JobResult, error) {
	id, err := s.Identify(ctx)
	if err != nil {
		return nil, err
	}
	priv := s.privileged(id)
	if err := checkUpdateSizes(fields); err != nil {
		return nil, err
	}
	snap := s.store.Snapshot()
	cmd := &fsm.UpdateJob{Now: s.clock.Now().Unix(), Spec: &fsm.SpecChange{}}
	ch := cmd.Spec
	for k, v := range fields {
		switch strings.ToLower(k) {
		case "timelimit":
			secs, err := units.ParseDuration(v)
			if err != nil {
				return nil, invalid("Invalid TimeLimit value")
			}
			cmd.TimeLimit = &secs
		case "partition":
			if snap.Partition(v) == nil {
				return nil, invalid("Invalid partition name specified")
			}
			cmd.Partition = &v
		case "name", "jobname":
			cmd.Name = &v
		case "comment":
			cmd.Comment = &v
		case "nice":
			n, err := strconv.Atoi(v)
			if err != nil || n < -2147483645 || n > 2147483645 {
				return nil, invalid("Invalid nice value")
			}
			if n < 0 && !priv {
				return nil, errDenied
			}
			cmd.Nice = &n
		case "priority":
			n, err := strconv.ParseUint(v, 10, 32)
			if err != nil {
				return nil, invalid("Invalid priority value")
			}
			if !priv {
				return nil, errDenied
			}
			p := uint32(n)
			cmd.Priority = &p
		case "starttime":
			t, err := strconv.ParseInt(v, 10, 64)
			if err != nil || t < 0 {
				return nil, invalid("Invalid time specification")
			}
			cmd.BeginTime = &t
		case "account":
			a := strings.ToLower(v)
			ch.Account = &a
		case "qos":
			q := strings.ToLower(v)
			// A QOS nobody defined would take the job out of every QOS
			// limit (the limits key on the name), which is why a user
			// might ask for one: Slurm finds none and keeps the job's
			// own; refused here so that the user sees it. "" is the
			// default QOS.
			if db, _ := s.acctDB(); q != "" && db.QOS[q] == nil {
				return nil, invalid(msgInvalidQOS)
			}
			ch.QOS = &q
		case "numnodes":
			lo, hi, err := jobspec.ParseNodes(v)
			if err != nil || lo < 1 {
				return nil, invalid(msgNodeCount)
			}
			ch.MinNodes, ch.MaxNodes = &lo, &hi
		case "numtasks":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return nil, invalid("Task count specification invalid")
			}
			ch.NTasks = &n
		case "dependency":
			d := &model.Dependency{}
			if v != "" {
				if d, err = jobspec.ParseDependency(v); err != nil {
					return nil, invalid("Job dependency problem")
				}
				if err := checkDependency(snap, d); err != nil {
					return nil, err
				}
			}
			ch.Dependency = d
		case "arraytaskthrottle":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return nil, invalid("Invalid ArrayTaskThrottle value")
			}
			ch.Throttle = &n
		case "reqnodelist", "excnodelist":
			var names []string
			if v != "" {
				if names, err = expandNodes(snap, []string{v}); err != nil {
					return nil, err
				}
			}
			if strings.EqualFold(k, "reqnodelist") {
				ch.ReqNodes = &names
			} else {
				ch.ExcNodes = &names
			}
		case "gres":
			typ, n, err := jobspec.ParseGresList(v)
			if err != nil {
				return nil, invalid("Invalid generic resource (gres) specification")
			}
			var g *model.GPUReq
			if n > 0 {
				g = &model.GPUReq{Type: typ, PerNode: n}
			}
			ch.GPUs = &g
		case "features":
			if _, err := features.Parse(v); err != nil {
				return nil, invalid(err.Error())
			}
			ch.Features = &v
		case "mincpusnode":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return nil, invalid("Invalid MinCPUsNode value")
			}
			ch.MinCPUs = &n
		default:
			return nil, invalid(msgNotSupported + k)
		}
	}
	var results []api.JobResult
	for _, x := range s.resolve(snap, &sel, id) {
		if x.err != "" {
			results = append(results, api.JobResult{Job: x.raw, Error: x.err})
			continue
		}
		j := x.job
		msg := s.updateRefusal(snap, j, fields, cmd, priv, id)
		results = append(results, api.JobResult{Job: j.DisplayID(), Error: msg})
		if msg == "" {
			cmd.Jobs = append(cmd.Jobs, j.ID)
		}
	}
	if ch.Empty() {
		cmd.Spec = nil
	}
	if len(cmd.Jobs) > 0 {
		if _, err := s.raft.Apply(fsm.TypeUpdateJob, cmd); err != nil {
			return nil, errCommit(err)
		}
		if n, ok := s.notify.(timeLimitNotifier); ok && cmd.TimeLimit != nil {
			n.TimeLimitChanged(cmd.Jobs) // running jobs' nodes re-arm their limit
		}
		if cmd.Nice != nil {
			if err := s.reprioritize(cmd.Jobs); err != nil {
				return nil, err
			}
		}
		s.notify.Kick()
	}
	return results, nil
}

// timeLimitNotifier is a Notifier that also tells running jobs' nodes of
// a new time limit (the controller is one).
type timeLimitNotifier interface {
	TimeLimitChanged(jobs []model.JobID)
}

// updateRefusal is Slurm's reason to refuse the update of j, or "".
func (s *Service) updateRefusal(snap *state.Snapshot, j *model.Job, fields map[string]string, cmd *fsm.UpdateJob, priv bool, id *api.Identity) string {
	switch {
	case !priv && j.UserID != id.UID:
		return "Access/permission denied"
	case j.Finished():
		return "Job/step already completing or completed"
	case cmd.TimeLimit != nil && !priv && (*cmd.TimeLimit == model.Unlimited || (j.TimeLimit != model.Unlimited && *cmd.TimeLimit > j.TimeLimit)):
		return "Access/permission denied"
	}
	if j.State != model.JobPending {
		for k := range fields {
			if pendingOnly[strings.ToLower(k)] && !unchanged(j, k, fields[k]) {
				return msgNotPending
			}
		}
		return ""
	}
	if cmd.Spec.Empty() && cmd.Partition == nil {
		return ""
	}
	if j.Spec == nil {
		return msgNodeConfig
	}
	spec := cmd.Spec.Apply(j.Spec)
	part := snap.Partition(j.Partition)
	if cmd.Partition != nil {
		part = snap.Partition(*cmd.Partition)
	}
	if part == nil {
		return "Invalid partition name specified"
	}
	if cmd.Spec.Features != nil || cmd.Partition != nil {
		if err := checkFeatures(spec.Features, partitionNodes(snap, part)); err != nil {
			return err.Error()
		}
	}
	if cmd.Spec.Account != nil || cmd.Spec.QOS != nil || cmd.Partition != nil {
		owner := &api.Identity{UID: j.UserID, GID: j.GroupID, Groups: j.Groups, User: j.UserName}
		if err := s.admits(part, spec, owner); err != nil {
			return err.Error()
		}
		if err := s.admitAccounting(snap, spec, owner, part); err != nil {
			return err.Error()
		}
	}
	if err := s.feasible(spec, part, partitionNodes(snap, part)); err != nil {
		return msgNodeConfig
	}
	return ""
}

// unchanged reports whether a field of a running job would keep its value
// (Slurm accepts such an update of a running job).
func unchanged(j *model.Job, k, v string) bool {
	switch strings.ToLower(k) {
	case "partition":
		return v == j.Partition
	case "qos":
		return j.Spec != nil && strings.EqualFold(v, j.Spec.QOS)
	case "numnodes":
		lo, _, err := jobspec.ParseNodes(v)
		return err == nil && lo == len(j.Alloc)
	case "reqnodelist":
		return v != "" && v == strings.Join(j.NodeNames(), ",")
	case "features":
		return j.Spec != nil && v == j.Spec.Features
	}
	return false
}
