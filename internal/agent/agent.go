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
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/auth"
	"github.com/drover-hpc/drover/internal/ctld"
	"github.com/drover-hpc/drover/internal/slurmconf"
	"github.com/drover-hpc/drover/internal/version"
)

// Options configures an agent process.
type Options struct {
	ConfPath string
	Name     string // node name; default: this host's short name
	Token    string // cluster token; default: read DroverTokenFile
	Log      *slog.Logger
}

// Agent is one running node daemon.
type Agent struct {
	log      *slog.Logger
	cfg      *slurmconf.Config
	confPath string
	node     string
	spool    string
	killWait time.Duration
	cluster  string
	boot     int64

	mu       sync.Mutex
	jobs     map[uint32]*job
	ends     map[uint32]*pb.JobEnded // reported ends awaiting the controller's ack
	stopping bool                    // jobs killed from now on are not ends to report
	outbox   chan *pb.AgentMessage
}

// Run runs the agent until ctx ends.
func Run(ctx context.Context, o Options) error {
	cfg, err := slurmconf.Load(o.ConfPath)
	if err != nil {
		return err
	}
	name := o.Name
	if name == "" {
		h, _ := os.Hostname()
		name, _, _ = strings.Cut(h, ".")
	}
	if _, ok := cfg.Node(name); !ok {
		return fmt.Errorf("node %q is not defined in %s", name, o.ConfPath)
	}
	token := o.Token
	if token == "" {
		if token, err = auth.ReadToken(ctld.TokenPath(cfg)); err != nil {
			return err
		}
	}
	spool := filepath.Join(cfg.SlurmdSpoolDir, name)
	if cfg.SlurmdSpoolDir == "" {
		spool = filepath.Join(os.TempDir(), "drover-spool", name)
	}
	if err := os.MkdirAll(spool, 0o755); err != nil {
		return err
	}
	a := &Agent{
		log: o.Log, cfg: cfg, confPath: o.ConfPath, node: name, spool: spool,
		killWait: cfg.KillWait, cluster: cfg.ClusterName, boot: bootTime(),
		jobs: map[uint32]*job{}, ends: map[uint32]*pb.JobEnded{},
		outbox: make(chan *pb.AgentMessage, 4096),
	}
	addr := controllerAddr(cfg)
	a.log.Info("agent starting", "node", name, "controller", addr, "spool", spool)
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		start := time.Now()
		err := a.session(ctx, addr, token)
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
func (a *Agent) session(ctx context.Context, addr, token string) error {
	conn, err := grpc.NewClient("passthrough:///"+addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(auth.TokenCreds(token)),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20)))
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
	cpus, sockets, cores, threads := detectCPUs()
	host, _ := os.Hostname()
	if err := stream.Send(&pb.AgentMessage{Msg: &pb.AgentMessage_Register{Register: &pb.Register{
		Node: a.node, Cpus: int32(cpus), Sockets: int32(sockets), Cores: int32(cores), Threads: int32(threads),
		Memory: detectMemMiB(), Hostname: host, Version: version.Version, BootTime: a.boot, Running: a.runningIDs(),
		Ended: a.endedIDs(),
	}}}); err != nil {
		return err
	}
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	reg := first.GetRegistered()
	if reg == nil {
		return errors.New("controller did not confirm registration")
	}
	if reg.KillWait > 0 {
		a.killWait = time.Duration(reg.KillWait) * time.Second
	}
	a.cluster = reg.Cluster
	a.killUnexpected(reg.Expected)
	a.log.Info("registered with controller", "node", a.node)

	// Resend every end the controller has not confirmed.
	a.mu.Lock()
	for _, e := range a.ends {
		if err := stream.Send(&pb.AgentMessage{Msg: &pb.AgentMessage_JobEnded{JobEnded: e}}); err != nil {
			a.mu.Unlock()
			return err
		}
	}
	a.mu.Unlock()

	errc := make(chan error, 2)
	go func() {
		hb := time.NewTicker(a.heartbeatEvery())
		defer hb.Stop()
		for {
			var m *pb.AgentMessage
			select {
			case <-sctx.Done():
				errc <- sctx.Err()
				return
			case m = <-a.outbox:
			case <-hb.C:
				m = &pb.AgentMessage{Msg: &pb.AgentMessage_Heartbeat{Heartbeat: &pb.Heartbeat{Running: a.runningIDs()}}}
			}
			if err := stream.Send(m); err != nil {
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

func (a *Agent) heartbeatEvery() time.Duration {
	d := a.cfg.SlurmdTimeout / 4
	return max(200*time.Millisecond, min(d, 10*time.Second))
}

func (a *Agent) handle(m *pb.ControllerMessage) {
	switch x := m.Msg.(type) {
	case *pb.ControllerMessage_Launch:
		a.launch(x.Launch)
	case *pb.ControllerMessage_Signal:
		a.signal(x.Signal)
	case *pb.ControllerMessage_EndAck:
		a.mu.Lock()
		delete(a.ends, x.EndAck.JobId)
		a.mu.Unlock()
	}
}

// endedIDs lists the ends the controller has not confirmed yet.
func (a *Agent) endedIDs() []uint32 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Collect(maps.Keys(a.ends))
}

// runningIDs lists the jobs running on this node.
func (a *Agent) runningIDs() []uint32 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Collect(maps.Keys(a.jobs))
}

// killUnexpected ends jobs the controller no longer knows (cancelled or
// purged while this node was cut off).
func (a *Agent) killUnexpected(expected []uint32) {
	want := map[uint32]bool{}
	for _, id := range expected {
		want[id] = true
	}
	a.mu.Lock()
	var stray []*job
	for id, j := range a.jobs {
		if !want[id] {
			stray = append(stray, j)
		}
	}
	a.mu.Unlock()
	for _, j := range stray {
		a.log.Warn("killing job the controller does not expect", "job", j.id)
		j.terminate(a.killWait, "")
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

// shutdown kills the node's jobs: an agent that stops takes its work with
// it, and the controller relaunches or fails those jobs when a new agent
// registers.
func (a *Agent) shutdown() {
	a.mu.Lock()
	a.stopping = true
	var jobs []*job
	for _, j := range a.jobs {
		jobs = append(jobs, j)
	}
	a.mu.Unlock()
	if len(jobs) == 0 {
		return
	}
	a.log.Info("agent stopping; killing its jobs", "running", len(jobs))
	for _, j := range jobs {
		j.terminate(time.Second, "")
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		a.mu.Lock()
		n := len(a.jobs)
		a.mu.Unlock()
		if n == 0 {
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
