package scancel

import (
	"bufio"
	"fmt"
	"slices"
	"strings"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/model"
)

// confirm implements --interactive: it lists the jobs the selection picks,
// asks about each one, and returns a selection of the confirmed jobs only
// (filters already applied here, so the result carries targets alone).
func (c *canceller) confirm(client cli.Client) (cli.JobSelection, error) {
	list, err := client.ListJobs(c.ctx, cli.JobQuery{})
	if err != nil {
		return cli.JobSelection{}, err
	}
	in := bufio.NewReader(c.env.Stdin)
	out := cli.JobSelection{UID: -1}
	for _, j := range list.Jobs {
		if !active(j) || !matchFilters(c.sel, j) {
			continue
		}
		steps := []stepChoice{{}}
		if len(c.sel.Targets) > 0 {
			steps = matchTargets(c.sel.Targets, j)
			if steps == nil {
				continue
			}
		}
		for _, step := range steps {
			if !ask(c.env, in, j, step) {
				continue
			}
			t := cli.JobTarget{ID: j.ID, Raw: j.DisplayID(), HasStep: step.has, Step: step.id}
			if step.has {
				t.Raw += "." + step.id.String()
			}
			if j.IsArrayTask() {
				t.ID, t.Tasks = j.ArrayJobID, []int{j.ArrayTaskID}
			}
			out.Targets = append(out.Targets, t)
		}
	}
	return out, nil
}

// ask prints Slurm's confirmation prompt and reads y or n; end of input
// counts as no.
func ask(env *cli.Env, in *bufio.Reader, j *model.Job, step stepChoice) bool {
	name, part := j.Name, j.Partition
	for {
		if !step.has {
			fmt.Fprintf(env.Stdout, "Cancel job_id=%s name=%s partition=%s [y/n]? ", j.DisplayID(), name, part)
		} else {
			fmt.Fprintf(env.Stdout, "Cancel step_id=%s.%s name=%s partition=%s [y/n]? ", j.DisplayID(), step.id, name, part)
		}
		line, err := in.ReadString('\n')
		if line != "" {
			switch line[0] {
			case 'y', 'Y':
				return true
			case 'n', 'N':
				return false
			}
		}
		if err != nil {
			fmt.Fprintln(env.Stdout)
			return false
		}
	}
}

// stepChoice is what a target names on a job: the job itself (has false)
// or one of its steps.
type stepChoice struct {
	has bool
	id  model.StepID
}

// matchTargets returns what the targets name on j (the job itself or some
// of its steps), or nil when no target names j.
func matchTargets(targets []cli.JobTarget, j *model.Job) []stepChoice {
	var steps []stepChoice
	for _, t := range targets {
		hit := false
		switch {
		case t.Tasks == nil:
			hit = j.ID == t.ID || (j.IsArrayTask() && j.ArrayJobID == t.ID)
		default:
			hit = j.IsArrayTask() && j.ArrayJobID == t.ID && slices.Contains(t.Tasks, j.ArrayTaskID)
		}
		c := stepChoice{has: t.HasStep, id: t.Step}
		if !t.HasStep {
			c.id = 0
		}
		if hit && !slices.Contains(steps, c) {
			steps = append(steps, c)
		}
	}
	return steps
}

// matchFilters applies the selection's filters (not its targets) to j, as
// the controller would.
func matchFilters(sel cli.JobSelection, j *model.Job) bool {
	spec := j.Spec
	if spec == nil {
		spec = &model.JobSpec{}
	}
	switch {
	case sel.Name != "" && sel.Name != j.Name:
		return false
	case sel.Partition != "" && sel.Partition != j.Partition:
		return false
	case sel.Account != "" && !strings.EqualFold(sel.Account, spec.Account):
		return false
	case sel.QOS != "" && !strings.EqualFold(sel.QOS, spec.QOS):
		return false
	case sel.User != "" && sel.User != j.UserName:
		return false
	case sel.UID >= 0 && int64(j.UserID) != sel.UID:
		return false
	case len(sel.States) > 0 && !slices.Contains(sel.States, j.State):
		return false
	}
	if len(sel.Nodes) > 0 {
		for _, n := range j.NodeNames() {
			if slices.Contains(sel.Nodes, n) {
				return true
			}
		}
		return false
	}
	return true
}
