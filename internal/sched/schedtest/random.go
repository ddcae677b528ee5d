package schedtest

import (
	"fmt"
	"math/rand"

	"github.com/drover-hpc/drover/internal/model"
)

// Random builds a small, messy cluster from rng for property tests: nodes
// of mixed sizes and states with some load, overlapping partitions with
// limits and states, running and finished jobs, and a queue mixing every
// request shape, holds, begin times (around now = 1000), dependencies
// (some on unknown ids), arrays with throttles and singleton names.
func Random(rng *rand.Rand) *Cluster {
	c := New()
	nNodes := 1 + rng.Intn(12)
	for i := range nNodes {
		n := c.AddNode(fmt.Sprintf("n%d", i+1), []int{1, 2, 4, 8, 16}[rng.Intn(5)], int64(256*(1+rng.Intn(16))))
		n.Weight = rng.Intn(3)
		switch rng.Intn(10) {
		case 0:
			n.State = model.NodeDown
		case 1:
			n.Drain = true
		case 2:
			n.Responding = false
		}
		if rng.Intn(3) == 0 { // load from jobs the test does not model
			n.AllocCPUs = rng.Intn(n.CPUs + 1)
			n.AllocMem = rng.Int63n(n.Memory + 1)
		}
	}
	names := func() []string {
		var out []string
		for _, n := range c.Nodes {
			if rng.Intn(2) == 0 {
				out = append(out, n.Name)
			}
		}
		if len(out) == 0 {
			out = append(out, c.Nodes[rng.Intn(len(c.Nodes))].Name)
		}
		rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
		return out
	}
	c.AddPartition("p0") // every node
	extra := rng.Intn(3)
	for i := 1; i <= extra; i++ {
		p := c.AddPartition(fmt.Sprintf("p%d", i), names()...)
		p.PriorityTier = rng.Intn(3)
		if rng.Intn(4) == 0 {
			p.MaxNodes = 1 + rng.Intn(3)
		}
		if rng.Intn(4) == 0 {
			p.MaxTime = 3600
		}
		p.State = []model.PartitionState{model.PartUp, model.PartUp, model.PartUp, model.PartDown, model.PartDrain, model.PartInactive}[rng.Intn(6)]
	}
	parts := make([]string, 0, len(c.Partitions))
	for i := range len(c.Partitions) {
		parts = append(parts, fmt.Sprintf("p%d", i))
	}

	for range 5 + rng.Intn(40) {
		s := RandomSpec(rng, c, parts)
		var jobs []*model.Job
		if rng.Intn(6) == 0 {
			n := 1 + rng.Intn(5)
			s.Array = &model.ArraySpec{Throttle: rng.Intn(3)}
			for t := range n {
				s.Array.TaskIDs = append(s.Array.TaskIDs, t)
			}
			jobs = c.SubmitArray(s)
		} else {
			jobs = []*model.Job{c.Submit(s)}
		}
		for _, j := range jobs {
			j.Priority = uint32(rng.Intn(5))
			j.HoldUser = rng.Intn(15) == 0
			j.HoldAdmin = rng.Intn(30) == 0
			j.UserID = uint32(1000 + rng.Intn(2))
			c.randomLifecycle(rng, j)
		}
	}
	return c
}

// randomLifecycle moves some submitted jobs on: running on a node that has
// room, or finished in some end state.
func (c *Cluster) randomLifecycle(rng *rand.Rand, j *model.Job) {
	switch rng.Intn(6) {
	case 0:
		for _, n := range c.Nodes {
			if n.Usable() && n.FreeCPUs() >= 1 {
				c.Run(j, 900, []model.NodeAlloc{{Node: n.Name, CPUs: 1}})
				j.Completing = rng.Intn(4) == 0
				return
			}
		}
	case 1:
		states := []model.JobState{model.JobCompleted, model.JobFailed, model.JobCancelled, model.JobTimeout}
		st := states[rng.Intn(len(states))]
		c.Finish(j, st, int32(rng.Intn(2)), 950)
	}
}

// RandomSpec returns a spec of random shape over c's nodes and the given
// partitions: layouts, memory kinds, exclusive, -w/-x, dependencies,
// singleton names and begin times.
func RandomSpec(rng *rand.Rand, c *Cluster, parts []string) *model.JobSpec {
	s := Spec()
	s.Partition = parts[rng.Intn(len(parts))]
	s.Name = []string{"a", "b", "c"}[rng.Intn(3)]
	switch rng.Intn(5) {
	case 1:
		s.NTasks = 1 + rng.Intn(8)
	case 2:
		s.MinNodes = 1 + rng.Intn(3)
		if rng.Intn(2) == 0 {
			s.NTasks = s.MinNodes + rng.Intn(6)
		}
	case 3:
		s.TasksPerNode = 1 + rng.Intn(3)
		if rng.Intn(2) == 0 {
			s.NTasks = 1 + rng.Intn(6)
		}
	}
	if rng.Intn(3) == 0 {
		s.CPUsPerTask = 1 + rng.Intn(4)
	}
	switch rng.Intn(5) {
	case 1:
		s.MemPerNode = int64(rng.Intn(3000))
	case 2:
		s.MemPerCPU = int64(1 + rng.Intn(600))
	}
	s.Exclusive = rng.Intn(8) == 0
	if rng.Intn(8) == 0 {
		s.ReqNodes = []string{c.Nodes[rng.Intn(len(c.Nodes))].Name}
	}
	if rng.Intn(6) == 0 {
		s.ExcNodes = []string{c.Nodes[rng.Intn(len(c.Nodes))].Name}
	}
	if rng.Intn(4) == 0 {
		s.TimeLimit = int64(60 * (1 + rng.Intn(120)))
	}
	if rng.Intn(8) == 0 {
		s.BeginTime = int64(900 + rng.Intn(200))
	}
	if rng.Intn(4) == 0 && c.nextID > 1 {
		types := []model.DepType{model.DepAfter, model.DepAfterAny, model.DepAfterOK,
			model.DepAfterNotOK, model.DepAfterCorr, model.DepSingleton}
		d := &model.Dependency{Any: rng.Intn(3) == 0}
		for range 1 + rng.Intn(2) {
			t := model.DepTerm{Type: types[rng.Intn(len(types))], Task: model.NoArrayTask,
				Job: model.JobID(1 + rng.Intn(int(c.nextID)+1))} // may name no job
			if t.Type == model.DepAfter {
				t.Delay = int64(rng.Intn(200))
			}
			d.Terms = append(d.Terms, t)
		}
		s.Dependency = d
	}
	return s
}
