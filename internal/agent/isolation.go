package agent

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/drover-hpc/drover/internal/cgroups"
	"github.com/drover-hpc/drover/internal/executor"
	"github.com/drover-hpc/drover/internal/gres"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/slurmconf"
)

// isolation is what confines jobs on this node: the cgroup manager, the
// cgroup.conf settings, the node's GPUs and the real CPUs behind the
// node's CPU ids.
type isolation struct {
	cg cgroups.Manager
	// confp is cgroup.conf as last read (cc); scontrol reconfigure
	// replaces it (reconfigure.go) for the groups made from then on.
	confp atomic.Pointer[slurmconf.CgroupConf]
	// gpus are the node's GPUs; scontrol reconfigure replaces them
	// (reconfigure.go) while launches read them.
	gpus   atomic.Pointer[[]model.GPU]
	real   []int // the CPUs this agent may use, ascending
	memMiB int64 // the node's memory as configured or found
	every  time.Duration
}

// setupIsolation reads cgroup.conf and gres.conf beside slurm.conf, finds
// the node's GPUs and opens the node's cgroup subtree. Bad configuration
// is an error (the agent does not start half-confined).
func (a *Agent) setupIsolation(confPath string) error {
	cc, err := slurmconf.LoadCgroup(slurmconf.CgroupPathFor(confPath))
	if err != nil {
		return err
	}
	for _, w := range cc.Warnings {
		a.log.Warn("cgroup.conf", "warning", w)
	}
	gc, err := slurmconf.LoadGres(slurmconf.GresPathFor(confPath))
	if err != nil {
		return err
	}
	gpus, warns, err := gres.Discover(a.node, gc, gres.RealNVML())
	if err != nil {
		return fmt.Errorf("gres.conf: %w", err)
	}
	for _, w := range warns {
		a.log.Warn("gres", "warning", w)
	}
	layout := cgroups.Detect()
	switch strings.ToLower(cc.Plugin) {
	case "disabled":
		layout = cgroups.LayoutNone
	case "cgroup/v1":
		if layout != cgroups.LayoutV1 {
			return fmt.Errorf("cgroup.conf: CgroupPlugin=cgroup/v1 but this machine has %s", layout)
		}
	case "cgroup/v2":
		if layout != cgroups.LayoutV2 {
			return fmt.Errorf("cgroup.conf: CgroupPlugin=cgroup/v2 but this machine has %s", layout)
		}
	}
	if os.Geteuid() != 0 && layout != cgroups.LayoutNone {
		a.log.Warn("not root: jobs run without cgroups")
		layout = cgroups.LayoutNone
	}
	m, err := cgroups.New(layout, "drover/"+a.node)
	if err == nil && layout != cgroups.LayoutNone {
		// A machine can show cgroups it does not let us write (a
		// container): try once, and run unconfined with a warning
		// rather than fail every job.
		var g cgroups.Group
		if g, err = m.Create("probe", cgroups.Limits{}); err == nil {
			err = g.Delete()
		}
	}
	if err != nil {
		if strings.ToLower(cc.Plugin) != "autodetect" && cc.Plugin != "" {
			return fmt.Errorf("cgroups: %w", err)
		}
		a.log.Warn("cgroups unusable here: jobs run without limits", "err", err)
		layout = cgroups.LayoutNone
		m, _ = cgroups.New(cgroups.LayoutNone, "")
	}
	nc, _ := a.conf().Node(a.node)
	mem := int64(0)
	if nc != nil && !nc.DetectMemory {
		mem = nc.RealMemory
	}
	if mem <= 0 {
		mem = detectMemMiB()
	}
	a.iso = &isolation{cg: m, real: realCPUs(), memMiB: mem, every: acctFrequency(a.conf())}
	a.iso.confp.Store(cc)
	a.iso.setGPUs(gpus)
	a.log.Info("isolation", "cgroups", layout.String(), "gpus", len(gpus),
		"cores", cc.ConstrainCores, "ram", cc.ConstrainRAMSpace, "devices", cc.ConstrainDevices)
	return nil
}

// GPUs are the node's GPUs (nil when iso is).
func (iso *isolation) GPUs() []model.GPU {
	if iso == nil {
		return nil
	}
	if p := iso.gpus.Load(); p != nil {
		return *p
	}
	return nil
}

func (iso *isolation) setGPUs(g []model.GPU) { iso.gpus.Store(&g) }

// cc is cgroup.conf as last read.
func (iso *isolation) cc() *slurmconf.CgroupConf { return iso.confp.Load() }

// acctFrequency is how often running steps' memory is sampled (AveRSS):
// JobAcctGatherFrequency's task= value, or a bare number; 30 s as in
// Slurm when unset.
func acctFrequency(cfg *slurmconf.Config) time.Duration {
	v, ok := cfg.Get("JobAcctGatherFrequency")
	if !ok {
		return 30 * time.Second
	}
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimPrefix(strings.TrimSpace(part), "task=")
		if n, err := strconv.Atoi(part); err == nil && n > 0 {
			return time.Duration(n) * time.Second
		}
	}
	return 30 * time.Second
}

func realCPUs() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	var out []int
	for i := 0; i < 8192 && len(out) < set.Count(); i++ {
		if set.IsSet(i) {
			out = append(out, i)
		}
	}
	return out
}

// cpuList maps the node's CPU ids (0..CPUs-1, as the scheduler gives
// them) onto this machine's CPUs. They are the same unless several
// virtual nodes share a machine or the node claims more CPUs than the
// machine has; then ids wrap around the real ones.
func (iso *isolation) cpuList(ids model.Bitmap) model.Bitmap {
	if len(iso.real) == 0 {
		return nil
	}
	var out model.Bitmap
	for _, id := range ids.IDs() {
		out = out.Or(model.BitmapOf(iso.real[id%len(iso.real)]))
	}
	return out
}

// nodeAlloc is the job's share of this node.
func nodeAlloc(mj *model.Job, node string) model.NodeAlloc {
	for _, a := range mj.Alloc {
		if a.Node == node {
			return a
		}
	}
	return model.NodeAlloc{Node: node}
}

// jobLimits are the limits of a job's cgroup on this node.
func (a *Agent) jobLimits(mj *model.Job) cgroups.Limits {
	iso, al := a.iso, nodeAlloc(mj, a.node)
	cc := iso.cc() // one reading, whatever a reconfigure does meanwhile
	var l cgroups.Limits
	if cc.ConstrainCores && al.CPUIDs.Count() > 0 {
		l.CPUs = iso.cpuList(al.CPUIDs).String()
	}
	if cc.ConstrainRAMSpace {
		mem := al.Mem
		if mem <= 0 { // no memory asked for: the node's, no more
			mem = iso.memMiB
		}
		l.MemoryBytes, l.MemSwapBytes = cc.MemLimit(mem, iso.memMiB)
	}
	if cc.ConstrainDevices {
		l.DenyDevices = denyDevices(gres.DenyList(iso.GPUs(), al.GPUs))
	}
	return l
}

func denyDevices(gs []model.GPU) []cgroups.Device {
	out := make([]cgroups.Device, 0, len(gs))
	for _, g := range gs {
		if g.Major >= 0 {
			out = append(out, cgroups.Device{Type: 'c', Major: g.Major, Minor: g.Minor})
		}
	}
	return out
}

func jobGroupName(id uint32) string { return "job_" + strconv.FormatUint(uint64(id), 10) }

// jobGroup creates (once) the job's cgroup on this node.
func (a *Agent) jobGroup(j *job) (cgroups.Group, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.cg != nil {
		return j.cg, nil
	}
	g, err := a.iso.cg.Create(jobGroupName(j.id), a.jobLimits(j.model))
	if err != nil {
		return nil, err
	}
	j.cg = g
	return g, nil
}

// stepGroup creates the cgroup of one of the job's steps ("batch" or a
// number) inside the job's. A step bound to some of the job's CPUs (cpus;
// nil = all) gets a cpuset of its own; one that holds only some of the
// job's GPUs is also denied the others.
func (a *Agent) stepGroup(j *job, step string, cpus, gpus model.Bitmap) (cgroups.Group, error) {
	jg, err := a.jobGroup(j)
	if err != nil {
		return nil, err
	}
	l := cgroups.Limits{}
	var jobCPUs string
	cc := a.iso.cc()
	if cc.ConstrainDevices {
		j.mu.Lock()
		l = a.jobLimits(j.model)
		jobGPUs := nodeAlloc(j.model, a.node).GPUs
		j.mu.Unlock()
		var deny []model.GPU
		for _, g := range a.iso.GPUs() {
			if jobGPUs.Has(g.Index) && !gpus.Has(g.Index) {
				deny = append(deny, g)
			}
		}
		jobCPUs = l.CPUs
		l = cgroups.Limits{CPUs: l.CPUs, DenyDevices: append(l.DenyDevices, denyDevices(deny)...)}
		if len(deny) == 0 && a.iso.cg.Layout() == cgroups.LayoutV1 {
			// v1 sub-groups inherit the job's device list: a step
			// refused nothing more stays in the job's devices group.
			l.DenyDevices = nil
		}
	}
	if cc.ConstrainCores && cpus.Count() > 0 {
		l.CPUs = a.iso.cpuList(cpus).String()
	}
	if a.iso.cg.Layout() == cgroups.LayoutV1 && l.CPUs != "" {
		if jobCPUs == "" {
			j.mu.Lock()
			jobCPUs = a.jobLimits(j.model).CPUs
			j.mu.Unlock()
		}
		if l.CPUs == jobCPUs {
			// The job's CPUs (a batch step, a step over all of them):
			// the step's processes stay in the job's cpuset (see
			// cgroups.Manager.Create), one group less to make.
			l.CPUs = ""
		}
	}
	// The batch step is frozen (suspend) only with its job and ends the
	// job: whatever it leaves is killed by the job's group, just after
	// its own (finish). On v1 it keeps its processes in the job's freezer
	// and pids groups, two directories fewer per job; its memory and
	// cpuacct groups stay its own (its use is reported apart from its
	// steps'). Steps run by srun keep a freezer of their own: one is
	// killed while its job lives on.
	l.InParentFreezer = step == "batch"
	if cm, ok := a.iso.cg.(cgroups.ChildMaker); ok {
		// The job's directories as its group's Create found them, not
		// looked up again (cgroupfs path walks, ~5% of the agent's CPU
		// per short job).
		return cm.CreateChild(jg, "step_"+step, l)
	}
	return a.iso.cg.Create(jobGroupName(j.id)+"/step_"+step, l)
}

// place points a launch at a cgroup.
func place(es *executor.Spec, g cgroups.Group) {
	if g == nil {
		return
	}
	es.CgroupV1Dirs, es.CgroupV2Dir = g.Targets()
}

// isolationEnv is what a job's programs learn of their CPUs and GPUs here:
// SLURM_CPU_BIND* for the cores they are bound to, and the GPU variables
// (CUDA_VISIBLE_DEVICES, SLURM_JOB_GPUS, ...).
func (a *Agent) isolationEnv(mj *model.Job, cpus, gpus model.Bitmap, step bool) []string {
	iso, al := a.iso, nodeAlloc(mj, a.node)
	if cpus.Count() == 0 {
		cpus = al.CPUIDs
	}
	var env []string
	cc := iso.cc()
	if cc.ConstrainCores && cpus.Count() > 0 && iso.cg.Layout() != cgroups.LayoutNone {
		mask := cpuMask(iso.cpuList(cpus))
		env = append(env, "SLURM_CPU_BIND=quiet,mask_cpu:"+mask, "SLURM_CPU_BIND_LIST="+mask,
			"SLURM_CPU_BIND_TYPE=mask_cpu:", "SLURM_CPU_BIND_VERBOSE=quiet")
	}
	if len(iso.GPUs()) > 0 && (al.GPUs.Count() > 0 || (mj.Spec != nil && mj.Spec.GPUs.Any())) {
		env = append(env, gres.Env(iso.GPUs(), gpus, step, cc.ConstrainDevices)...)
	}
	return env
}

// taskGPUs is the share of the step's GPUs on this node that its task
// with local id localID sees with --gpus-per-task N: the localID-th run of
// N (Slurm binds such tasks to their own GPUs). nil: every task sees all.
func taskGPUs(req *model.GPUReq, stepGPUs model.Bitmap, localID int) model.Bitmap {
	if req == nil || req.PerTask <= 0 {
		return nil
	}
	ids := stepGPUs.IDs()
	lo, hi := localID*req.PerTask, (localID+1)*req.PerTask
	if hi > len(ids) {
		return nil
	}
	return model.BitmapOf(ids[lo:hi]...)
}

// cpuMask renders CPUs as Slurm's hexadecimal mask, "0x3".
func cpuMask(cpus model.Bitmap) string {
	ids := cpus.IDs()
	if len(ids) == 0 {
		return "0x0"
	}
	digits := make([]byte, ids[len(ids)-1]/4+1)
	for _, id := range ids {
		digits[len(digits)-1-id/4] |= 1 << (id % 4)
	}
	for i, d := range digits {
		digits[i] = "0123456789abcdef"[d]
	}
	return "0x" + string(digits)
}

// sampler follows a step's cgroup while it runs: memory samples for AveRSS
// and the highest process count.
type sampler struct {
	g    cgroups.Group
	stop chan struct{}

	mu      sync.Mutex
	sum     int64
	n       int64
	maxPids int64
	last    cgroups.Stats // the latest sample
}

func newSampler(g cgroups.Group, every time.Duration) *sampler {
	s := &sampler{g: g, stop: make(chan struct{})}
	if g == nil {
		return s
	}
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				s.sample()
			}
		}
	}()
	return s
}

func (s *sampler) sample() (cgroups.Stats, bool) {
	st, err := s.g.Stats()
	if err != nil {
		return st, false
	}
	s.mu.Lock()
	s.sum += st.MemoryCurrent
	s.n++
	s.maxPids = max(s.maxPids, st.Pids)
	s.last = st
	s.mu.Unlock()
	return st, true
}

// usage is the step's use on this node so far. A step that never ran in
// a cgroup reports nothing.
func (s *sampler) usage(node string, gpus model.Bitmap) *model.Usage {
	if s == nil || s.g == nil {
		return nil
	}
	st, ok := s.sample()
	if !ok {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	u := &model.Usage{
		MaxRSS: max(st.MemoryPeak, st.MemoryCurrent), MaxRSSNode: node, Samples: s.n,
		UserCPU: st.UserCPU.Microseconds(), SystemCPU: st.SystemCPU.Microseconds(), MaxPids: s.maxPids, Nodes: 1,
	}
	if s.n > 0 {
		u.AveRSS = s.sum / s.n
	}
	if gpus.Count() > 0 {
		u.GPUs = node + ":" + gpus.String()
	}
	return u
}

// ooms is the OOM kill count as of the latest sample.
func (s *sampler) ooms() uint64 {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last.OOMKills
}

// close stops the sampling.
func (s *sampler) close() {
	if s != nil {
		select {
		case <-s.stop:
		default:
			close(s.stop)
		}
	}
}

// oomMessage is the line a job's error file gets when the kernel killed
// some of its processes for memory, in slurmstepd's words.
func (a *Agent) oomMessage(kills uint64, jobID uint32, step string) string {
	return fmt.Sprintf("slurmstepd: error: Detected %d oom-kill event(s) in StepId=%d.%s. "+
		"Some of your processes may have been killed by the cgroup out-of-memory handler.\n", kills, jobID, step)
}

// removeJobGroup kills whatever is left in the job's cgroup on this node
// (processes that left the process group, daemons a script started) and
// removes the group.
func (a *Agent) removeJobGroup(j *job) (removed bool) {
	j.mu.Lock()
	g := j.cg
	j.cg = nil
	j.mu.Unlock()
	if a.replaced(j) {
		// The groups have the job's names, and a newer run of it uses
		// them: they are its to kill, keep or remove.
		a.log.Warn("a stale run ended after its job's new run started: its cgroup is left to the new run", "job", j.id)
		return false
	}
	if g == nil {
		if a.iso == nil {
			return false
		}
		var err error
		if g, err = a.iso.cg.Open(jobGroupName(j.id)); err != nil {
			return false
		}
	}
	if err := g.Delete(); err != nil {
		a.log.Warn("cannot remove the job's cgroup", "job", j.id, "err", err)
		return false
	}
	return true
}

// replaced reports whether another run of j's job holds the agent's
// record of it: replaceStale gave up waiting for j and started that run,
// which uses the job's cgroups under the same names.
func (a *Agent) replaced(j *job) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	cur, ok := a.jobs[j.id]
	return ok && cur != j
}

// oomSignal is the signal part of an OUT_OF_MEMORY job's ExitCode: Slurm
// shows such jobs as 0:125.
const oomSignal = 125

// reopenSampler follows a step's cgroup left by a previous agent; nil
// when there is none.
func (a *Agent) reopenSampler(rel string) *sampler {
	g, err := a.iso.cg.Open(rel)
	if err != nil {
		return nil
	}
	return newSampler(g, a.iso.every)
}

// removeStrayGroups removes job cgroups of this node that belong to no
// job the agent runs or took back: leftovers of a crash, whose processes
// are killed.
func (a *Agent) removeStrayGroups() {
	names, err := a.iso.cg.List()
	if err != nil {
		return
	}
	for _, name := range names {
		id, err := strconv.ParseUint(strings.TrimPrefix(name, "job_"), 10, 32)
		if err != nil || !strings.HasPrefix(name, "job_") {
			continue
		}
		a.mu.Lock()
		_, running := a.jobs[uint32(id)]
		a.mu.Unlock()
		if running {
			continue
		}
		if g, err := a.iso.cg.Open(name); err == nil {
			a.log.Warn("removing the cgroup of a job that no longer runs here", "job", id)
			_ = g.Delete()
		}
	}
}

// isStopping: the agent is shutting down (shutdown).
func (a *Agent) isStopping() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stopping
}

// dropRecycled removes the emptied job groups kept for later jobs
// (cgroups.Recycler): no job follows on this agent.
func (a *Agent) dropRecycled() {
	if a.iso == nil {
		return
	}
	if d, ok := a.iso.cg.(cgroups.RecycleDropper); ok {
		d.DropRecycled()
	}
}
