package sched_test

import (
	"cmp"
	"math/rand"
	"reflect"
	"slices"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
	"github.com/drover-hpc/drover/internal/sched/schedtest"
)

// TestProperties runs several cycles over many random clusters and checks,
// every cycle: the plan invariants (no oversubscription, a reason for every
// waiting job, no double start: schedtest.CheckPlan), determinism, that the
// input is left untouched, and strict priority order within a partition.
func TestProperties(t *testing.T) {
	seeds := 400
	if testing.Short() {
		seeds = 50
	}
	for seed := range int64(seeds) {
		rng := rand.New(rand.NewSource(seed))
		c := schedtest.Random(rng)
		cfg := sched.Config{}
		switch rng.Intn(4) {
		case 1:
			cfg.DefMemPerCPU = int64(1 + rng.Intn(300))
		case 2:
			cfg.DefMemPerNode = int64(1 + rng.Intn(1000))
		case 3:
			cfg.MaxJobsPerCycle = 1 + rng.Intn(3)
		}
		// Odd seeds run sched/backfill: every invariant but strict order
		// holds there too.
		cfg.Backfill = seed%2 == 1
		now := int64(1000)
		for cycle := range 4 {
			in := c.Input()
			nodesBefore := copyNodes(c.Nodes)
			p := sched.Schedule(in, now, cfg)
			if err := schedtest.CheckPlan(in, p); err != nil {
				t.Fatalf("seed %d cycle %d: %v", seed, cycle, err)
			}
			if again := sched.Schedule(in, now, cfg); !reflect.DeepEqual(p, again) {
				t.Fatalf("seed %d cycle %d: same input, different plans", seed, cycle)
			}
			if !reflect.DeepEqual(nodesBefore, copyNodes(c.Nodes)) {
				t.Fatalf("seed %d cycle %d: Schedule wrote to its input nodes", seed, cycle)
			}
			if !cfg.Backfill {
				checkStrictOrder(t, in, p, seed)
			}
			checkFeasibleAgrees(t, in, p, cfg, seed)
			if err := c.Apply(p, now); err != nil {
				t.Fatalf("seed %d cycle %d: apply: %v", seed, cycle, err)
			}
			// Let time pass: some running jobs end, freeing their nodes.
			now += int64(rng.Intn(120))
			for _, j := range c.Jobs {
				if j.State == model.JobRunning && rng.Intn(2) == 0 {
					c.Finish(j, model.JobCompleted, int32(rng.Intn(2)), now)
				}
			}
		}
	}
}

// checkStrictOrder: with no backfill, once a job waits for Resources no
// lower-ordered job starts on any node it could use (its partition's nodes
// less the ones it excludes), in its partition or any other.
func checkStrictOrder(t *testing.T, in *sched.Input, p *sched.Plan, seed int64) {
	t.Helper()
	jobs := map[model.JobID]*model.Job{}
	for _, j := range in.Pending {
		jobs[j.ID] = j
	}
	before := func(a, b *model.Job) bool {
		ta, tb := in.Partitions[a.Partition].PriorityTier, in.Partitions[b.Partition].PriorityTier
		return cmp.Or(cmp.Compare(tb, ta), cmp.Compare(b.Priority, a.Priority), cmp.Compare(a.ID, b.ID)) < 0
	}
	for id, r := range p.Reasons {
		if r != model.ReasonResources {
			continue
		}
		w := jobs[id]
		for _, s := range p.Starts {
			j := jobs[s.Job]
			if !before(w, j) {
				continue
			}
			if j.Partition == w.Partition {
				t.Fatalf("seed %d: job %d started after job %d of partition %s waits for Resources", seed, j.ID, w.ID, w.Partition)
			}
			for _, a := range s.Alloc {
				if in.Partitions[w.Partition].HasNode(a.Node) && !slices.Contains(w.Spec.ExcNodes, a.Node) {
					t.Fatalf("seed %d: job %d took node %s that job %d (ordered before it) waits for", seed, j.ID, a.Node, w.ID)
				}
			}
		}
	}
}

// checkFeasibleAgrees: admission and the scheduler share placement rules,
// so a started job is Feasible and a BadConstraints job is not.
func checkFeasibleAgrees(t *testing.T, in *sched.Input, p *sched.Plan, cfg sched.Config, seed int64) {
	t.Helper()
	for _, j := range in.Pending {
		part := in.Partitions[j.Partition]
		if part == nil {
			continue
		}
		err := sched.Feasible(j.Spec, part, in.Nodes, cfg)
		switch r, waits := p.Reasons[j.ID]; {
		case !waits && err != nil:
			t.Fatalf("seed %d: job %d started but Feasible says %v", seed, j.ID, err)
		case r == model.ReasonBadConstraints && err == nil:
			t.Fatalf("seed %d: job %d waits for BadConstraints but is Feasible", seed, j.ID)
		}
	}
}

func copyNodes(nodes []*model.Node) []model.Node {
	out := make([]model.Node, len(nodes))
	for i, n := range nodes {
		out[i] = *n
	}
	return out
}
