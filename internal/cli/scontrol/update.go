package scontrol

import (
	"errors"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/jobspec"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/units"
)

// maxNice bounds Nice as Slurm does (NICE_OFFSET - 3).
const maxNice = 2147483645

// updateJob is "update JobId=<jobs> k=v...". Fields go to the controller
// under canonical names: TimeLimit (a Slurm duration, "HH:MM:SS" or
// "D-HH:MM:SS", or "UNLIMITED"), Partition, Name, Comment and Nice (an
// integer). Without JobId, Name=<name> selects the jobs by name.
func (r *runner) updateJob(args []string) {
	fields := map[string]string{}
	idSpec := ""
	var ids []cli.JobTarget
	for i := 0; i < len(args); i++ {
		tag, val, ok := strings.Cut(args[i], "=")
		op := ""
		if ok && (strings.HasSuffix(tag, "+") || strings.HasSuffix(tag, "-")) {
			op, tag = tag[len(tag)-1:], tag[:len(tag)-1]
		}
		if !ok {
			switch {
			case abbrev(tag, "Nice", 2):
				fields["Nice"] = "100"
				continue
			case i+1 < len(args):
				i++
				val = args[i]
			default:
				r.complain("Invalid input: %s", args[i])
				r.complain("Request aborted")
				return
			}
		}
		switch {
		case abbrev(tag, "JobId", 3):
			ts, err := cli.ParseJobTargets([]string{val})
			if err != nil || hasStep(ts) {
				r.complain("%s for job %s", cli.MsgInvalidJobID, val)
				return
			}
			idSpec, ids = val, ts
		case abbrev(tag, "Comment", 3):
			fields["Comment"] = val
		case abbrev(tag, "TimeLimit", 5):
			if strings.HasPrefix(val, "+") || strings.HasPrefix(val, "-") {
				if op != "" {
					r.errorf("Invalid syntax, variations of +=- are not accepted.")
					return
				}
				op, val = val[:1], val[1:]
			}
			secs, err := units.ParseDuration(val)
			if err != nil {
				r.errorf("Invalid TimeLimit value")
				return
			}
			if op != "" {
				if secs, ok = r.adjustLimit(ids, idSpec, op, secs); !ok {
					return
				}
				op = ""
			}
			fields["TimeLimit"] = limitValue(secs)
		case abbrev(tag, "Partition", 2):
			fields["Partition"] = val
		case abbrev(tag, "Name", 2), abbrev(tag, "JobName", 4):
			fields["Name"] = val
		case abbrev(tag, "Nice", 2):
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil || n > maxNice || n < -maxNice {
				r.errorf("Nice value out of range (+/- %d). Value ignored", maxNice)
				return
			}
			fields["Nice"] = strconv.FormatInt(n, 10)
		case abbrev(tag, "Priority", 2):
			n, err := strconv.ParseUint(val, 10, 32)
			if err != nil {
				r.errorf("Invalid Priority value: %s", val)
				return
			}
			fields["Priority"] = strconv.FormatUint(n, 10)
		case abbrev(tag, "StartTime", 3), abbrev(tag, "BeginTime", 3):
			t, err := jobspec.ParseBegin(val, r.env.Now())
			if err != nil {
				r.complain("Invalid time specification: %s", val)
				r.complain("No changes specified")
				return
			}
			fields["StartTime"] = strconv.FormatInt(t.Unix(), 10)
		case abbrev(tag, "QOS", 3):
			fields["QOS"] = val
		case abbrev(tag, "Account", 3):
			fields["Account"] = val
		case abbrev(tag, "NumNodes", 4), abbrev(tag, "ReqNodes", 8):
			fields["NumNodes"] = val
		case abbrev(tag, "NumTasks", 4), abbrev(tag, "ReqProcs", 8):
			if _, err := strconv.Atoi(val); err != nil {
				r.errorf("Invalid NumTasks value: %s", val)
				return
			}
			fields["NumTasks"] = val
		case abbrev(tag, "Dependency", 4):
			fields["Dependency"] = val
		case abbrev(tag, "ArrayTaskThrottle", 10):
			fields["ArrayTaskThrottle"] = val
		case abbrev(tag, "ReqNodeList", 8), abbrev(tag, "NodeList", 8):
			fields["ReqNodeList"] = val
		case abbrev(tag, "ExcNodeList", 4):
			fields["ExcNodeList"] = val
		case abbrev(tag, "Features", 4):
			fields["Features"] = val
		case abbrev(tag, "MinCPUsNode", 4):
			if n, err := strconv.Atoi(val); err != nil || n < 0 {
				r.errorf("Invalid MinCPUsNode value: %s", val)
				return
			}
			fields["MinCPUsNode"] = val
		case abbrev(tag, "Gres", 4), abbrev(tag, "TresPerNode", 8):
			fields["Gres"] = strings.TrimPrefix(val, "gres/")
		default:
			r.complain("Update of this parameter is not supported: %s", args[i])
			r.complain("Request aborted")
			return
		}
		if op != "" {
			r.errorf("Option %s does not accept [+|-]= syntax", tag)
			return
		}
	}
	if len(fields) == 0 {
		r.complain("No changes specified")
		return
	}
	sel := cli.JobSelection{UID: -1, Targets: ids}
	what := idSpec
	if ids == nil {
		if fields["Name"] == "" {
			r.errorf("No job ID specified")
			return
		}
		sel.Name, what = fields["Name"], fields["Name"]
	}
	c, err := r.env.Client()
	var results []cli.JobResult
	if err == nil {
		results, err = c.UpdateJob(r.ctx, sel, fields)
	}
	if err != nil {
		r.complain("%v for job %s", err, what)
		return
	}
	for _, res := range results {
		if res.Error != "" {
			r.complain("%s for job %s", res.Error, res.Job)
		}
	}
}

// adjustLimit applies "TimeLimit+=" or "TimeLimit-=" to the current limit
// of the (single) job ids names.
func (r *runner) adjustLimit(ids []cli.JobTarget, idSpec, op string, delta int64) (int64, bool) {
	if len(ids) == 0 {
		r.errorf("JobId must precede TimeLimit increment or decrement")
		return 0, false
	}
	c, err := r.env.Client()
	var list *cli.JobList
	if err == nil {
		list, err = c.ListJobs(r.ctx, cli.JobQuery{IDs: []model.JobID{ids[0].ID}})
	}
	if err != nil {
		r.perror("slurm_load_job error", err)
		return 0, false
	}
	for _, j := range list.Jobs {
		if !targetHas(ids[0], j) {
			continue
		}
		cur := j.TimeLimit
		switch {
		case cur == model.Unlimited && op == "+":
			return model.Unlimited, true
		case cur == model.Unlimited || cur <= 0:
			r.errorf("TimeLimit decrement larger than current time limit")
			return 0, false
		case op == "+":
			return cur + delta, true
		case delta > cur:
			r.errorf("TimeLimit decrement larger than current time limit (%d > %d)", delta/60, cur/60)
			return 0, false
		}
		return cur - delta, true
	}
	r.complain("%s for job %s", cli.MsgInvalidJobID, idSpec)
	return 0, false
}

// limitValue is the wire form of a time limit.
func limitValue(secs int64) string {
	if secs == model.Unlimited || secs < 0 {
		return "UNLIMITED"
	}
	return units.FormatElapsed(secs)
}

// nodeStates are the states "update NodeName=" accepts (3-letter
// abbreviations allowed).
var nodeStates = []string{"DRAIN", "DOWN", "IDLE", "RESUME", "UNDRAIN"}

// updateNode is "update NodeName=<hostlist> State=<state> Reason=<text>".
func (r *runner) updateNode(args []string) {
	fields := map[string]string{}
	expr := ""
	for _, a := range args {
		tag, val, ok := strings.Cut(a, "=")
		if !ok {
			r.errorf("Invalid input: %s  Request aborted", a)
			return
		}
		switch {
		case abbrev(tag, "NodeAddr", 5), abbrev(tag, "NodeHostName", 5):
			r.complain("Update of this parameter is not supported: %s", a)
			r.complain("Request aborted")
			return
		case abbrev(tag, "NodeName", 1):
			expr = val
		case abbrev(tag, "Reason", 1):
			fields["Reason"] = strings.TrimSuffix(strings.TrimPrefix(val, `"`), `"`)
		case abbrev(tag, "State", 1):
			state := ""
			for _, s := range nodeStates {
				if len(val) >= 3 && abbrev(val, s, 3) {
					state = s
					break
				}
			}
			if state == "" {
				r.complain("Invalid input: %s", a)
				r.complain("Request aborted")
				r.complain("Valid states are: %s", strings.Join(nodeStates, " "))
				r.complain("Not all states are valid given a node's prior state")
				return
			}
			fields["State"] = state
		default:
			r.complain("Update of this parameter is not supported: %s", a)
			r.complain("Request aborted")
			return
		}
	}
	if s := fields["State"]; (s == "DOWN" || s == "DRAIN") && fields["Reason"] == "" {
		r.complain("You must specify a reason when DOWNING or DRAINING a node. Request denied")
		return
	}
	if len(fields) == 0 {
		r.complain("No changes specified")
		return
	}
	names, err := hostlist.Expand(expr)
	if err != nil || len(names) == 0 {
		r.perror("slurm_update error", errors.New(cli.MsgInvalidNode))
		return
	}
	c := r.client("slurm_update error")
	if c == nil {
		return
	}
	if err := c.UpdateNodes(r.ctx, names, fields); err != nil {
		r.perror("slurm_update error", err)
	}
}

// errorf prints "scontrol: error: ..." and marks failure.
func (r *runner) errorf(format string, args ...any) {
	r.fail()
	if !r.quiet {
		r.env.Errorf(format, args...)
	}
}
