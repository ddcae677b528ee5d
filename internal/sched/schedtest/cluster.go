// Package schedtest builds clusters, queues and job indexes for scheduler
// tests, benchmarks and the simulator, and checks the invariants every
// Plan must keep. It is test support: stdlib, model and sched only, no
// clock (callers pass now), no randomness of its own.
package schedtest

import (
	"fmt"
	"slices"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
)

// Cluster is an in-memory cluster and job table. It implements
// sched.JobIndex, and its fields may be edited freely between cycles.
type Cluster struct {
	Nodes      []*model.Node
	Partitions map[string]*model.Partition
	Jobs       map[model.JobID]*model.Job

	order  []model.JobID                 // submission order
	arrays map[model.JobID][]model.JobID // array id → task job ids
	nextID model.JobID
}

// New returns an empty cluster whose first job will get ID 1.
func New() *Cluster {
	return &Cluster{
		Partitions: map[string]*model.Partition{},
		Jobs:       map[model.JobID]*model.Job{},
		arrays:     map[model.JobID][]model.JobID{},
		nextID:     1,
	}
}

// AddNode adds an up, responding, idle node.
func (c *Cluster) AddNode(name string, cpus int, mem int64) *model.Node {
	n := &model.Node{Name: name, CPUs: cpus, Memory: mem, Sockets: 1, Cores: cpus, Threads: 1,
		State: model.NodeUp, Responding: true, Weight: 1}
	c.Nodes = append(c.Nodes, n)
	return n
}

// AddGPUs gives node n count GPUs of type typ after those it has.
func AddGPUs(n *model.Node, typ string, count int) {
	for range count {
		n.GPUs = append(n.GPUs, model.GPU{Index: len(n.GPUs), Type: typ, Major: 195, Minor: int64(len(n.GPUs))})
	}
}

// AddNodes adds count nodes named prefix1 … prefixN and returns their names.
func (c *Cluster) AddNodes(prefix string, count, cpus int, mem int64) []string {
	names := make([]string, count)
	for i := range count {
		names[i] = fmt.Sprintf("%s%d", prefix, i+1)
		c.AddNode(names[i], cpus, mem)
	}
	return names
}

// AddPartition adds an UP partition without limits; the first one added is
// the default. With no node names it holds every node added so far.
func (c *Cluster) AddPartition(name string, nodes ...string) *model.Partition {
	if len(nodes) == 0 {
		for _, n := range c.Nodes {
			nodes = append(nodes, n.Name)
		}
	}
	p := &model.Partition{Name: name, Nodes: nodes, Default: len(c.Partitions) == 0,
		MaxTime: model.Unlimited, DefaultTime: model.Unset, State: model.PartUp,
		PriorityTier: 1, MaxNodes: model.Unlimited}
	c.Partitions[name] = p
	return p
}

// Node returns the node with that name, or nil.
func (c *Cluster) Node(name string) *model.Node {
	for _, n := range c.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// Spec returns a job spec with every request unset: one task of one CPU
// on one node, memory by the cluster defaults, no time limit.
func Spec() *model.JobSpec {
	return &model.JobSpec{
		Name: "job", TimeLimit: model.Unset, TimeMin: model.Unset,
		MinNodes: model.Unset, MaxNodes: model.Unset, NTasks: model.Unset,
		CPUsPerTask: model.Unset, TasksPerNode: model.Unset,
		MemPerNode: model.Unset, MemPerCPU: model.Unset,
	}
}

// Submit adds a pending job for spec (user 1000, priority 1), as the
// controller would after admission: partition chosen, time limit resolved.
func (c *Cluster) Submit(spec *model.JobSpec) *model.Job {
	j := c.newJob(spec)
	c.add(j)
	return j
}

// SubmitArray adds one pending job per task id of spec.Array; the array id
// is the first task's job id.
func (c *Cluster) SubmitArray(spec *model.JobSpec) []*model.Job {
	var tasks []*model.Job
	for _, t := range spec.Array.TaskIDs {
		j := c.newJob(spec)
		j.ArrayTaskID = t
		if len(tasks) == 0 {
			j.ArrayJobID = j.ID
		} else {
			j.ArrayJobID = tasks[0].ID
		}
		c.arrays[j.ArrayJobID] = append(c.arrays[j.ArrayJobID], j.ID)
		c.add(j)
		tasks = append(tasks, j)
	}
	return tasks
}

func (c *Cluster) newJob(spec *model.JobSpec) *model.Job {
	part := spec.Partition
	if part == "" {
		for name, p := range c.Partitions {
			if p.Default {
				part = name
			}
		}
	}
	limit := spec.TimeLimit
	if p := c.Partitions[part]; p != nil && limit == model.Unset {
		limit = p.DefaultTime
		if limit == model.Unset {
			limit = p.MaxTime
		}
	}
	j := &model.Job{ID: c.nextID, ArrayTaskID: model.NoArrayTask, Spec: spec, SpecID: c.nextID,
		UserID: 1000, GroupID: 1000, UserName: "user", Partition: part, State: model.JobPending,
		Priority: 1, TimeLimit: limit, Name: spec.Name, SubmitTime: int64(c.nextID)}
	c.nextID++
	return j
}

func (c *Cluster) add(j *model.Job) {
	c.Jobs[j.ID] = j
	c.order = append(c.order, j.ID)
}

// Pending lists the pending jobs in submission order.
func (c *Cluster) Pending() []*model.Job {
	var out []*model.Job
	for _, id := range c.order {
		if j := c.Jobs[id]; j.State == model.JobPending {
			out = append(out, j)
		}
	}
	return out
}

// Input builds the scheduler input from the current state.
func (c *Cluster) Input() *sched.Input {
	return &sched.Input{Pending: c.Pending(), Nodes: c.Nodes, Partitions: c.Partitions, Jobs: c, Running: c.Running()}
}

// Running lists the jobs holding resources in submission order.
func (c *Cluster) Running() []*model.Job {
	var out []*model.Job
	for _, id := range c.order {
		if j := c.Jobs[id]; len(j.Alloc) > 0 && (j.State == model.JobRunning || j.State == model.JobSuspended || j.Completing) {
			out = append(out, j)
		}
	}
	return out
}

// Job implements sched.JobIndex.
func (c *Cluster) Job(id model.JobID) *model.Job { return c.Jobs[id] }

// ArrayTasks implements sched.JobIndex.
func (c *Cluster) ArrayTasks(arrayJobID model.JobID) []*model.Job {
	var out []*model.Job
	for _, id := range c.arrays[arrayJobID] {
		out = append(out, c.Jobs[id])
	}
	return out
}

// ActiveByNameUser implements sched.JobIndex.
func (c *Cluster) ActiveByNameUser(name string, uid uint32) []*model.Job {
	var out []*model.Job
	for _, id := range c.order {
		j := c.Jobs[id]
		if j.Name == name && j.UserID == uid && !j.Finished() {
			out = append(out, j)
		}
	}
	return out
}

// Run marks j running since now on the given allocation and charges the
// nodes, as a committed start would.
func (c *Cluster) Run(j *model.Job, now int64, alloc []model.NodeAlloc) {
	j.State, j.StartTime, j.Alloc, j.Reason = model.JobRunning, now, alloc, ""
	for _, a := range alloc {
		if n := c.Node(a.Node); n != nil {
			n.AllocCPUs += a.CPUs
			n.AllocMem += a.Mem
			n.AllocCores = n.AllocCores.Or(a.CPUIDs)
			n.AllocGPUs = n.AllocGPUs.Or(a.GPUs)
		}
	}
}

// Finish ends j with state and exit code at now and frees its nodes.
func (c *Cluster) Finish(j *model.Job, state model.JobState, exit int32, now int64) {
	for _, a := range j.Alloc {
		if n := c.Node(a.Node); n != nil {
			n.AllocCPUs -= a.CPUs
			n.AllocMem -= a.Mem
			n.AllocCores = n.AllocCores.AndNot(a.CPUIDs)
			n.AllocGPUs = n.AllocGPUs.AndNot(a.GPUs)
		}
	}
	if j.StartTime == 0 && state != model.JobCancelled {
		j.StartTime = now
	}
	j.State, j.ExitCode, j.EndTime, j.Completing = state, exit, now, false
}

// Apply commits a plan as the leader would: starts, reasons, failed
// dependencies. It checks the plan first and changes nothing if it is bad.
func (c *Cluster) Apply(p *sched.Plan, now int64) error {
	if err := CheckPlan(c.Input(), p); err != nil {
		return err
	}
	for _, s := range p.Starts {
		c.Run(c.Jobs[s.Job], now, slices.Clone(s.Alloc))
	}
	for id, r := range p.Reasons {
		c.Jobs[id].Reason = r
	}
	for _, id := range p.DepFailed {
		c.Jobs[id].DepFailed = true
	}
	return nil
}
