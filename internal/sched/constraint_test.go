package sched_test

import (
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched/schedtest"
)

// --constraint narrows the candidate nodes; --mincpus raises what each node gives.
func TestConstraintAndMinCPUs(t *testing.T) {
	feats := func(c *schedtest.Cluster) {
		c.AddNodes("n", 3, 4, 1000)
		c.Node("n1").Features = []string{"intel"}
		c.Node("n2").Features = []string{"amd", "ib"}
		c.Node("n3").Features = []string{"intel", "ib"}
		c.AddPartition("p")
	}
	runScenarios(t, []scenario{{
		name:  "AND picks the only node with both",
		setup: func(c *schedtest.Cluster) { feats(c); submit(c, 1, func(s *model.JobSpec) { s.Features = "intel&ib" }) },
		want:  map[model.JobID]string{1: "start n3:1:0"},
	}, {
		name:  "OR",
		setup: func(c *schedtest.Cluster) { feats(c); submit(c, 1, func(s *model.JobSpec) { s.Features = "amd|gpu" }) },
		want:  map[model.JobID]string{1: "start n2:1:0"},
	}, {
		name: "features nobody has: BadConstraints",
		setup: func(c *schedtest.Cluster) {
			feats(c)
			submit(c, 1, func(s *model.JobSpec) { s.Features = "gpu" })
		},
		want: map[model.JobID]string{1: model.ReasonBadConstraints},
	}, {
		name: "a busy matching node makes the job wait, not move",
		setup: func(c *schedtest.Cluster) {
			feats(c)
			submit(c, 1, func(s *model.JobSpec) { s.Features = "amd"; s.NTasks = 4 })
			submit(c, 1, func(s *model.JobSpec) { s.Features = "amd" })
		},
		want: map[model.JobID]string{1: "start n2:4:0", 2: model.ReasonResources},
	}, {
		name: "--mincpus takes at least that many CPUs per node",
		setup: func(c *schedtest.Cluster) {
			oneNode(c, 4, 1000)
			submit(c, 1, func(s *model.JobSpec) { s.MinCPUsNode = 3 })
			submit(c, 1, func(s *model.JobSpec) { s.MinCPUsNode = 2 })
		},
		want: map[model.JobID]string{1: "start n1:3:0", 2: model.ReasonResources},
	}, {
		name: "--mincpus above any node: BadConstraints",
		setup: func(c *schedtest.Cluster) {
			oneNode(c, 4, 1000)
			submit(c, 1, func(s *model.JobSpec) { s.MinCPUsNode = 8 })
		},
		want: map[model.JobID]string{1: model.ReasonBadConstraints},
	}})
}
