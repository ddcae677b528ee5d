package scontrol

import (
	"strings"

	"github.com/drover-hpc/drover/internal/cli"
)

// top is scontrol top JOBID[,JOBID...]: the jobs move ahead of the same
// user's other pending jobs in their partition, account and QOS (the
// controller exchanges priorities among them; see service.topJobs).
func (r *runner) top(argv []string) {
	switch {
	case len(argv) < 2:
		r.complain("too few arguments for keyword:%s", argv[0])
		return
	case len(argv) > 2:
		r.complain("too many arguments for keyword:%s", argv[0])
		return
	}
	list := trimPrefixFold(trimPrefixFold(argv[1], "JobID="), "Job=")
	ts, err := cli.ParseJobTargets(strings.Split(list, ","))
	if err != nil || hasStep(ts) {
		r.complain("%s for job %s", cli.MsgInvalidJobID, list)
		return
	}
	c, err := r.env.Client()
	var results []cli.JobResult
	if err == nil {
		results, err = c.Control(r.ctx, cli.JobSelection{UID: -1, Targets: ts}, "top")
	}
	if err != nil {
		r.complain("%v for job %s", err, list)
		return
	}
	for _, res := range results {
		if res.Error != "" {
			r.complain("%s for job %s", res.Error, res.Job)
		}
	}
}
