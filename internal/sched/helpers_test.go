package sched_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
	"github.com/drover-hpc/drover/internal/sched/schedtest"
)

// scenario is one table entry: build a cluster and queue, run one cycle at
// now, and compare every pending job's outcome.
type scenario struct {
	name  string
	now   int64
	cfg   sched.Config
	setup func(c *schedtest.Cluster)
	// want maps job id → reason, or "start node:cpus:mem ..." for a start.
	want map[model.JobID]string
	// depFailed, when set, is the expected Plan.DepFailed (sorted).
	depFailed []model.JobID
}

func runScenarios(t *testing.T, cases []scenario) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := schedtest.New()
			tc.setup(c)
			p := schedule(t, c, tc.now, tc.cfg)
			got := outcomes(p)
			if !maps.Equal(got, tc.want) {
				t.Errorf("outcomes:\n got  %s\n want %s", show(got), show(tc.want))
			}
			if tc.depFailed != nil {
				gotDF := slices.Sorted(slices.Values(p.DepFailed))
				if !slices.Equal(gotDF, tc.depFailed) {
					t.Errorf("DepFailed = %v, want %v", gotDF, tc.depFailed)
				}
			}
		})
	}
}

// schedule runs one cycle and checks the plan's invariants.
func schedule(t testing.TB, c *schedtest.Cluster, now int64, cfg sched.Config) *sched.Plan {
	t.Helper()
	in := c.Input()
	p := sched.Schedule(in, now, cfg)
	if err := schedtest.CheckPlan(in, p); err != nil {
		t.Fatalf("plan breaks invariants:\n%v", err)
	}
	return p
}

func outcomes(p *sched.Plan) map[model.JobID]string {
	out := make(map[model.JobID]string, len(p.Reasons)+len(p.Starts))
	maps.Copy(out, p.Reasons)
	for _, s := range p.Starts {
		out[s.Job] = startString(s.Alloc)
	}
	return out
}

func startString(alloc []model.NodeAlloc) string {
	parts := make([]string, len(alloc))
	for i, a := range alloc {
		parts[i] = fmt.Sprintf("%s:%d:%d", a.Node, a.CPUs, a.Mem)
	}
	return "start " + strings.Join(parts, " ")
}

func show(m map[model.JobID]string) string {
	var b strings.Builder
	for _, id := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "\n   %d: %s", id, m[id])
	}
	return b.String()
}

// spec returns schedtest.Spec() changed by mod.
func spec(mod func(s *model.JobSpec)) *model.JobSpec {
	s := schedtest.Spec()
	if mod != nil {
		mod(s)
	}
	return s
}

// submit adds n jobs of the same spec and returns the last.
func submit(c *schedtest.Cluster, n int, mod func(s *model.JobSpec)) *model.Job {
	var j *model.Job
	for range n {
		j = c.Submit(spec(mod))
	}
	return j
}

// oneNode is a cluster with n1 (cpus, mem) in partition "p".
func oneNode(c *schedtest.Cluster, cpus int, mem int64) {
	c.AddNode("n1", cpus, mem)
	c.AddPartition("p")
}
