package agent

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/executor"
	"github.com/drover-hpc/drover/internal/slurmconf"
	"github.com/drover-hpc/drover/internal/version"
	"github.com/drover-hpc/drover/internal/wire"
)

// Options configures an agent process.
type Options struct {
	ConfPath string
	// ConfNamed: ConfPath was given (-f), not a default. A default path
	// (SLURM_CONF, /etc/slurm/slurm.conf) may hold another cluster's file,
	// a Slurm install's say: a joined node then keeps to the slurm.conf
	// its join brought.
	ConfNamed bool
	Name      string // node name; default: this host's short name
	Token     string // cluster token; default: read DroverTokenFile
	Log       *slog.Logger
	// Join is a join token (drover token create): before starting, the
	// agent gets its certificate and slurm.conf from Controller.
	Join string
	// Controller overrides the controller's HOST:PORT from slurm.conf.
	Controller string
	// KillJobsOnExit kills every job when the agent stops (drover up).
	// Otherwise batch scripts run on under their supervisors and the next
	// agent takes them back; only steps and allocations end with it.
	KillJobsOnExit bool
	// StateDir holds what a join brought; empty: DefaultStateDir when
	// joining, when ConfPath does not exist or when it is a default and
	// DefaultStateDir holds a join, else none (token mode).
	StateDir string
}

// Agent is one running node daemon.
type Agent struct {
	log *slog.Logger
	// cfgp is slurm.conf as last read: at the start, and again at each
	// scontrol reconfigure (reconfigure.go) while jobs read it (conf).
	cfgp     atomic.Pointer[slurmconf.Config]
	confPath string
	node     string
	spool    string
	boot     int64

	// joinedConf is confPath when it is the copy a join brought
	// (configless): reconfigure replaces it with the controller's.
	joinedConf string
	joinMu     sync.Mutex // one takeJoinedConf at a time

	// killWait (KillWait) and cluster (ClusterName) come from slurm.conf
	// and are updated by the controller at registration and launch, while
	// steps read them: atomics, not fields under mu (which terminate paths
	// may not hold).
	killWait atomic.Int64 // nanoseconds
	cluster  atomic.Pointer[string]
	// srunGraceFor overrides srunGrace and msgTimeoutFor msgTimeout
	// (tests); 0: from MessageTimeout.
	srunGraceFor, msgTimeoutFor time.Duration
	acksReports                 atomic.Bool // the controller sends ReportAck
	// exec launches step tasks (and batch scripts without a supervisor);
	// nil: executor.Local. Tests put a fake here.
	exec executor.Executor

	mu   sync.Mutex
	jobs map[uint32]*job
	ends map[uint32]*pb.JobEnded // reported ends awaiting the controller's ack
	// pending are the StepEnded and JobStarted reports awaiting the
	// controller's ReportAck (reports.go).
	pending  map[reportKey]*pendingReport
	stopping bool // jobs killed from now on are not ends to report
	outbox   chan *pb.AgentMessage
	// trash and trashSeq: finished jobs' directories, renamed, waiting
	// for removal (discard.go); nil: removed in place.
	trash chan discarded
	// superPool: emptied supervisor directories kept for reuse (discard.go).
	superPool chan string
	// jobDirs: finished jobs' spool directories kept for their users'
	// next jobs (jobdirs.go).
	jobDirs  jobDirPool
	trashSeq atomic.Uint64
	// fetching counts each user's sbcast transfers running here (bcast.go).
	fetching map[uint32]int
	// attaching counts each user's sattach connections here
	// (stepclients.go).
	attaching map[uint32]int
	killAll   bool // KillJobsOnExit
	sup       *executor.Supervisor
	iso       *isolation
	// unhealthy is the reason of the health checks' last failure; "" =
	// healthy.
	unhealthy   string
	healthKnown bool // a verdict was reached (unhealthy is meaningful)
}

// Run runs the agent until ctx ends.
func Run(ctx context.Context, o Options) error {
	if path := os.Getenv("DROVER_AGENT_CPUPROFILE"); path != "" {
		// For performance work (as DROVER_CTLD_CPUPROFILE for the
		// controller): a CPU profile of the whole run, written when the
		// agent stops. Several agents of one `drover up` get one file each.
		if f, err := os.Create(path + "." + strconv.Itoa(os.Getpid())); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				defer pprof.StopCPUProfile()
			}
		}
	}
	name := o.Name
	if name == "" {
		h, _ := os.Hostname()
		name, _, _ = strings.Cut(h, ".")
	}
	stateDir := agentStateDir(o, DefaultStateDir)
	if o.Join != "" {
		if err := joinCluster(ctx, o.Join, o.Controller, name, stateDir); err != nil {
			return err
		}
		o.Log.Info("joined the cluster", "node", name, "controller", o.Controller, "state", stateDir)
	}
	confPath := agentConfPath(o, stateDir)
	cfg, err := slurmconf.Load(confPath)
	if err != nil {
		return err
	}
	if _, ok := cfg.Node(name); !ok {
		return fmt.Errorf("node %q is not defined in %s", name, confPath)
	}
	o.ConfPath = confPath
	spool := filepath.Join(cfg.SlurmdSpoolDir, name)
	if cfg.SlurmdSpoolDir == "" {
		spool = filepath.Join(os.TempDir(), "drover-spool", name)
	}
	// Jobs' directories below are the users' own (0700); others may pass
	// through to them but not list them.
	if err := os.MkdirAll(spool, 0o711); err != nil {
		return err
	}
	_ = os.Chmod(spool, 0o711)
	a := &Agent{
		log: o.Log, confPath: o.ConfPath, node: name, spool: spool,
		boot: bootTime(),
		jobs: map[uint32]*job{}, ends: map[uint32]*pb.JobEnded{}, pending: map[reportKey]*pendingReport{},
		outbox: make(chan *pb.AgentMessage, 4096), killAll: o.KillJobsOnExit,
	}
	if stateDir != "" && confPath == filepath.Join(stateDir, joinedConfName) {
		a.joinedConf = confPath
	}
	a.cfgp.Store(cfg)
	sweepTrash(spool, filepath.Join(spool, "super"))
	a.startTrash()
	a.setKillWait(cfg.KillWait)
	a.setCluster(cfg.ClusterName)
	if d := unkillableTimeout(cfg); d > 0 {
		// Set once, before any task runs: the executor's Wait reads it.
		executor.GroupKillTimeout = d
	}
	if err := a.setupIsolation(confPath); err != nil {
		return err
	}
	a.recover()
	go a.keepSupervisor(ctx)
	a.removeStrayGroups()
	addr := o.Controller
	if addr == "" {
		addr = joinedController(stateDir)
	}
	if addr == "" {
		addr = controllerAddr(cfg)
	}
	creds, err := a.waitTransport(ctx, stateDir, o.Token, addr)
	if err != nil {
		return err
	}
	a.log.Info("agent starting", "node", name, "controller", addr, "spool", spool)
	go a.healthLoop(ctx)
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		start := time.Now()
		err := a.session(ctx, addr, creds)
		if ctx.Err() != nil {
			break
		}
		if time.Since(start) > 10*time.Second {
			backoff = 100 * time.Millisecond
		}
		a.log.Warn("controller connection lost; retrying", "err", err, "in", backoff)
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
	a.shutdown()
	return nil
}

// waitTransport gets the credentials to reach the controller. An agent
// started before the controller's first start finds no cluster CA (or
// token) yet: like slurmd, it waits and retries with backoff, saying what
// it waits for, instead of exiting.
func (a *Agent) waitTransport(ctx context.Context, stateDir, token, addr string) ([]grpc.DialOption, error) {
	backoff := 200 * time.Millisecond
	for {
		creds, err := transport(a.conf(), stateDir, token, addr)
		if err == nil {
			return creds, nil
		}
		a.log.Warn("waiting for the cluster's credentials (is the controller started?)", "err", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("stopped while waiting for the cluster's credentials: %w", err)
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 10*time.Second)
	}
}

func controllerAddr(cfg *slurmconf.Config) string {
	host := "127.0.0.1"
	if len(cfg.ControllerHosts) > 0 {
		h := cfg.ControllerHosts[0]
		host = h.Name
		if h.Addr != "" {
			host = h.Addr
		}
	}
	return net.JoinHostPort(host, strconv.Itoa(cfg.SlurmctldPort))
}

// session is one connection to the controller: register, then serve.
func (a *Agent) session(ctx context.Context, addr string, creds []grpc.DialOption) error {
	conn, err := grpc.NewClient("passthrough:///"+addr, append(creds, streamOptions()...)...)
	if err != nil {
		return err
	}
	defer conn.Close()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := pb.NewAgentServiceClient(conn).Connect(sctx)
	if err != nil {
		return err
	}
	return a.serve(sctx, cancel, stream)
}

// streamOptions are the Connect stream's dial options. Fixed flow-control
// windows (the controller's side has the same) turn off gRPC's bandwidth
// estimation, which answered every message the controller sent (each
// launch, each end's acknowledgement) with a window update and a ping, and
// the controller with a ping reply: two more TLS records, writes, reads
// and goroutine wake-ups on both sides per message, for a window that a
// node's stream never needs to grow past these.
func streamOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256 << 20)),
		grpc.WithInitialWindowSize(8 << 20), grpc.WithInitialConnWindowSize(16 << 20)}
}

// agentStream is the agent's side of the Connect stream.
type agentStream interface {
	Send(*pb.AgentMessage) error
	Recv() (*pb.ControllerMessage, error)
}

// serve registers on stream and serves it until it fails or ctx ends;
// cancel cancels the stream (a send or the registration that takes longer
// than msgTimeout ends the session, so a stuck controller or network
// cannot hold the agent's reports forever).
func (a *Agent) serve(ctx context.Context, cancel context.CancelFunc, stream agentStream) error {
	if err := a.sendWithin(stream, cancel, &pb.AgentMessage{Msg: &pb.AgentMessage_Register{Register: a.registration()}}); err != nil {
		return err
	}
	// Registration commits through the controller's log: more time than
	// a send, still bounded.
	t := time.AfterFunc(3*a.msgTimeout(), cancel)
	first, err := stream.Recv()
	t.Stop()
	if err != nil {
		return err
	}
	reg := first.GetRegistered()
	if reg == nil {
		return errors.New("controller did not confirm registration")
	}
	if reg.KillWait > 0 {
		a.setKillWait(time.Duration(reg.KillWait) * time.Second)
	}
	a.setCluster(reg.Cluster)
	a.acksReports.Store(reg.AcksReports)
	a.killUnexpected(reg.Expected, reg.ExpectedRuns)
	if reg.HasSuspended {
		a.matchSuspension(reg.Expected, reg.Suspended)
	}
	if reg.HasLimits {
		a.matchTimeLimits(reg.ExpectedRuns)
	}
	a.log.Info("registered with controller", "node", a.node)
	a.resendHealth()

	// Resend every end the controller has not confirmed.
	a.mu.Lock()
	ends := slices.Collect(maps.Values(a.ends))
	a.mu.Unlock()
	for _, e := range ends {
		if err := a.sendWithin(stream, cancel, &pb.AgentMessage{Msg: &pb.AgentMessage_JobEnded{JobEnded: e}}); err != nil {
			return err
		}
	}
	// And every start and step end it has not.
	if err := a.resendReports(stream, cancel, 0); err != nil {
		return err
	}

	errc := make(chan error, 2)
	go func() {
		hb := time.NewTicker(a.heartbeatEvery())
		defer hb.Stop()
		for {
			var m *pb.AgentMessage
			select {
			case <-ctx.Done():
				errc <- ctx.Err()
				return
			case m = <-a.outbox:
			case <-hb.C:
				if err := a.resendReports(stream, cancel, a.resendAfter()); err != nil {
					errc <- err
					return
				}
				m = &pb.AgentMessage{Msg: &pb.AgentMessage_Heartbeat{Heartbeat: &pb.Heartbeat{Running: a.runningIDs(), Runs: a.runs()}}}
			}
			if err := a.sendWithin(stream, cancel, m); err != nil {
				errc <- err
				return
			}
		}
	}()
	go func() {
		for {
			m, err := stream.Recv()
			if err != nil {
				errc <- err
				return
			}
			a.handle(m)
		}
	}()
	err = <-errc
	cancel()
	return err
}

// registration is what the node registers: its resources, GPUs, jobs.
func (a *Agent) registration() *pb.Register {
	cpus, sockets, cores, threads := detectCPUs()
	host, _ := os.Hostname()
	return &pb.Register{
		Node: a.node, Cpus: int32(cpus), Sockets: int32(sockets), Cores: int32(cores), Threads: int32(threads),
		Memory: detectMemMiB(), Hostname: host, Version: version.Version, BootTime: a.boot, Running: a.runningIDs(),
		Ended: a.endedIDs(), RunningSteps: a.runningSteps(), Gpus: wire.GPUsToPB(a.iso.GPUs()), Runs: a.runs(),
	}
}

// sendWithin sends m, cancelling the stream if the send takes longer than
// msgTimeout (a controller that stopped reading fills the flow-control
// window and Send would block forever).
func (a *Agent) sendWithin(stream agentStream, cancel context.CancelFunc, m *pb.AgentMessage) error {
	d := a.msgTimeout()
	var late atomic.Bool
	t := time.AfterFunc(d, func() { late.Store(true); cancel() })
	err := stream.Send(m)
	t.Stop()
	if late.Load() {
		return fmt.Errorf("controller took no message for %s: %w", d, errSendTimeout)
	}
	return err
}

var errSendTimeout = errors.New("send timed out")

// msgTimeout bounds one exchange with the controller or srun:
// MessageTimeout (Slurm's default, 10 s, when unset).
func (a *Agent) msgTimeout() time.Duration {
	if a.msgTimeoutFor > 0 {
		return a.msgTimeoutFor
	}
	if cfg := a.conf(); cfg != nil {
		if v, ok := cfg.Get("MessageTimeout"); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
				return time.Duration(n) * time.Second
			}
		}
	}
	return DefaultMessageTimeout
}

// unkillableTimeout is UnkillableStepTimeout when slurm.conf sets it: how
// long a step's processes may survive SIGKILL (the executor keeps killing
// the group that long). 0: not set, the executor's default stands.
func unkillableTimeout(cfg *slurmconf.Config) time.Duration {
	v, ok := cfg.Get("UnkillableStepTimeout")
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n <= 0 {
		return 0
	}
	return time.Duration(n) * time.Second
}

// conf is slurm.conf as the agent last read it (nil in some tests).
func (a *Agent) conf() *slurmconf.Config { return a.cfgp.Load() }

// DefaultMessageTimeout is Slurm's MessageTimeout default.
const DefaultMessageTimeout = 10 * time.Second

func (a *Agent) heartbeatEvery() time.Duration {
	d := a.conf().SlurmdTimeout / 4
	return max(200*time.Millisecond, min(d, 10*time.Second))
}

func (a *Agent) handle(m *pb.ControllerMessage) {
	switch x := m.Msg.(type) {
	case *pb.ControllerMessage_Launch:
		a.launch(x.Launch)
	case *pb.ControllerMessage_Signal:
		a.signal(x.Signal)
	case *pb.ControllerMessage_LaunchStep:
		a.launchStep(x.LaunchStep)
	case *pb.ControllerMessage_SignalStep:
		a.signalStep(x.SignalStep)
	case *pb.ControllerMessage_Attach:
		a.attach(x.Attach)
	case *pb.ControllerMessage_Fetch:
		go a.fetch(x.Fetch)
	case *pb.ControllerMessage_Stat:
		go a.stat(x.Stat)
	case *pb.ControllerMessage_ReportAck:
		a.acked(x.ReportAck)
	case *pb.ControllerMessage_Reconfigure:
		conf := x.Reconfigure.GetSlurmConf()
		go func() {
			a.takeJoinedConf(conf)
			a.reconfigure()
		}()
	case *pb.ControllerMessage_EndAck:
		a.mu.Lock()
		if e := a.ends[x.EndAck.JobId]; e != nil && (x.EndAck.Run == 0 || x.EndAck.Run == e.Run) {
			delete(a.ends, x.EndAck.JobId)
		}
		_, again := a.jobs[x.EndAck.JobId] // a newer run of a requeued job
		sup := a.sup
		a.mu.Unlock()
		if !again {
			// The end is committed: the supervisor's record and the
			// result it holds have served.
			dir := a.superDir(x.EndAck.JobId)
			if sup != nil {
				sup.Forget(dir)
			}
			a.discard(dir, a.recycleSuperDir)
		}
	}
}

// endedIDs lists the ends the controller has not confirmed yet.
func (a *Agent) endedIDs() []uint32 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Collect(maps.Keys(a.ends))
}

// runningSteps lists the steps with tasks on this node, as "job.step".
func (a *Agent) runningSteps() []string {
	a.mu.Lock()
	jobs := slices.Collect(maps.Values(a.jobs))
	a.mu.Unlock()
	var out []string
	for _, j := range jobs {
		j.mu.Lock()
		for id := range j.steps {
			out = append(out, fmt.Sprintf("%d.%d", j.id, id))
		}
		j.mu.Unlock()
	}
	return out
}

// runs lists the run of each job held on this node.
func (a *Agent) runs() []*pb.JobRun {
	a.mu.Lock()
	jobs := slices.Collect(maps.Values(a.jobs))
	a.mu.Unlock()
	out := make([]*pb.JobRun, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, &pb.JobRun{JobId: j.id, Run: j.run()})
	}
	return out
}

// runningIDs lists the jobs running on this node.
func (a *Agent) runningIDs() []uint32 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Collect(maps.Keys(a.jobs))
}

// killUnexpected ends the runs the controller did not assign to this node:
// jobs cancelled or purged while it was cut off, and earlier runs of jobs
// requeued meanwhile (which may run elsewhere now). They end here and their
// ends are reported as theirs; the controller never applies them to a new
// run. A controller that names no runs (an older one) names jobs only.
func (a *Agent) killUnexpected(expected []uint32, runs []*pb.JobRun) {
	want := map[uint32]uint32{}
	for _, id := range expected {
		want[id] = 0
	}
	for _, r := range runs {
		want[r.JobId] = r.Run
	}
	a.mu.Lock()
	var stray []*job
	for id, j := range a.jobs {
		if run, ok := want[id]; !ok || (run != 0 && run != j.run()) {
			stray = append(stray, j)
		}
	}
	a.mu.Unlock()
	for _, j := range stray {
		a.log.Warn("ending a run the controller did not assign to this node", "job", j.id, "run", j.run())
		a.terminateJob(j, "", 0)
	}
}

// report queues a message for the controller.
func (a *Agent) report(m *pb.AgentMessage) {
	select {
	case a.outbox <- m:
	default:
		a.log.Warn("outbox full; message will be resent on reconnect")
	}
}

// shutdown ends the node's steps and allocations, which cannot outlive
// the agent; batch scripts run on under their supervisors unless
// KillJobsOnExit, and the next agent takes them back. A job killed here is
// not reported: the controller relaunches or fails it when the node
// registers again.
func (a *Agent) shutdown() {
	// Kept groups (cgroups.Recycler) hold nothing: not left behind.
	defer a.dropRecycled()
	a.mu.Lock()
	a.stopping = true
	var kill, detach []*job
	for _, j := range a.jobs {
		if a.killAll || !(j.detachable() || j.hasSupervisedSteps()) {
			kill = append(kill, j)
		} else {
			detach = append(detach, j)
		}
	}
	a.mu.Unlock()
	if len(detach) > 0 {
		a.log.Info("agent stopping; batch jobs run on under their supervisors", "count", len(detach))
	}
	for _, j := range detach {
		a.endUnsupervisedSteps(j)
	}
	if len(kill) == 0 {
		return
	}
	a.log.Info("agent stopping; ending jobs that cannot outlive it", "count", len(kill))
	for _, j := range kill {
		// A frozen job (suspended, gang-scheduled) cannot act on signals:
		// left frozen, it and its supervisor would outlive the agent.
		a.suspend(j, false)
		a.terminateJob(j, "", 0)
	}
	// Tasks that ignore SIGTERM get SIGKILL after KillWait; then their
	// process groups are reaped (GroupKillTimeout). Leaving before that
	// would leave them running with nobody to send the SIGKILL.
	deadline := time.Now().Add(a.getKillWait() + executor.GroupKillTimeout + 2*time.Second)
	for time.Now().Before(deadline) {
		left := 0
		a.mu.Lock()
		for _, j := range kill {
			if a.jobs[j.id] == j {
				left++
			}
		}
		a.mu.Unlock()
		if left == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func detectCPUs() (cpus, sockets, cores, threads int) {
	cpus = runtime.NumCPU()
	return cpus, 1, cpus, 1
}

func detectMemMiB() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return kb / 1024
		}
	}
	return 0
}

func bootTime() int64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func (a *Agent) getKillWait() time.Duration  { return time.Duration(a.killWait.Load()) }
func (a *Agent) setKillWait(d time.Duration) { a.killWait.Store(int64(d)) }

func (a *Agent) clusterName() string {
	if p := a.cluster.Load(); p != nil {
		return *p
	}
	return ""
}

func (a *Agent) setCluster(name string) { a.cluster.Store(&name) }

func (a *Agent) executor() executor.Executor {
	if a.exec != nil {
		return a.exec
	}
	return executor.Local{}
}
