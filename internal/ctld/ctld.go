package ctld

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/credentials"

	"github.com/drover-hpc/drover/internal/acct/storage"
	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/auth"
	"github.com/drover-hpc/drover/internal/auth/grpcauth"
	"github.com/drover-hpc/drover/internal/clock"
	"github.com/drover-hpc/drover/internal/controller"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/grpcapi"
	"github.com/drover-hpc/drover/internal/localapi"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/raftnode"
	"github.com/drover-hpc/drover/internal/rpcstats"
	"github.com/drover-hpc/drover/internal/sched"
	"github.com/drover-hpc/drover/internal/sched/priority"
	"github.com/drover-hpc/drover/internal/service"
	"github.com/drover-hpc/drover/internal/slurmconf"
	"github.com/drover-hpc/drover/internal/state"
	"github.com/drover-hpc/drover/internal/units"
)

// Options configures a controller process.
type Options struct {
	ConfPath string
	Log      *slog.Logger
	// Listen overrides the TCP listen address (default ":SlurmctldPort").
	Listen string
}

// TokenPath is where the cluster token lives for a configuration.
func TokenPath(cfg *slurmconf.Config) string { return cfg.TokenPath() }

// CAPath is where the cluster CA certificate lives for a configuration:
// clients on the controller's machine read it to verify the TCP port.
func CAPath(cfg *slurmconf.Config) string { return cfg.CAPath() }

// serverHosts are the names and addresses the controller's certificate
// covers: the configured controller hosts, this host, loopback and every
// local interface address.
func serverHosts(cfg *slurmconf.Config, host string) []string {
	hosts := []string{host, "localhost", "127.0.0.1", "::1"}
	for _, h := range cfg.ControllerHosts {
		hosts = append(hosts, h.Name, h.Addr)
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				hosts = append(hosts, ipn.IP.String())
			}
		}
	}
	return hosts
}

// prioritySettings are the priority/multifactor keys, PriorityFlags and
// the partitions' TRESBillingWeights.
func prioritySettings(cfg *slurmconf.Config) service.PriorityConfig {
	p := cfg.Priority
	out := service.PriorityConfig{
		Multifactor: p.Multifactor, DecayHalfLife: p.DecayHalfLife, CalcPeriod: p.CalcPeriod,
		Weights: priority.Weights{Age: p.WeightAge, FairShare: p.WeightFairshare,
			JobSize: p.WeightJobSize, Partition: p.WeightPartition, QOS: p.WeightQOS,
			MaxAge: p.MaxAge, FavorSmall: p.FavorSmall, SmallRelativeToTime: p.SmallRelativeToTime,
			TRES: p.WeightTRES, NoNormalPart: p.NoNormalPart, NoNormalQOS: p.NoNormalQOS, NoNormalTRES: p.NoNormalTRES},
		NoFairTree: p.NoFairTree, WeightTRES: p.WeightTRESRaw, MaxTRES: p.MaxTRES, UsageReset: p.UsageReset,
	}
	if v, ok := cfg.Get("SchedulerParameters"); ok {
		for _, e := range strings.Split(v, ",") {
			out.EnableUserTop = out.EnableUserTop || strings.EqualFold(strings.TrimSpace(e), "enable_user_top")
		}
	}
	for _, part := range cfg.Partitions {
		if len(part.BillingWeights) > 0 {
			if out.Billing == nil {
				out.Billing = map[string][]priority.TRESWeight{}
			}
			out.Billing[part.Name] = part.BillingWeights
		}
	}
	return out
}

// DefaultMaxUserJobBytes is DroverMaxUserJobBytes's default: what one
// user's jobs in memory may hold of scripts, argv, environments and
// submit lines (100 KiB for each of MaxJobCount's 10,000 jobs).
const DefaultMaxUserJobBytes = 1 << 30

// Settings derives the controller's settings from a parsed slurm.conf.
func Settings(cfg *slurmconf.Config) *service.Settings {
	st := &service.Settings{
		ClusterName:   cfg.ClusterName,
		SlurmdTimeout: int64(cfg.SlurmdTimeout / time.Second),
		KillWait:      int64(cfg.KillWait / time.Second),
		MinJobAge:     int64(cfg.MinJobAge / time.Second),
		MaxArraySize:  cfg.MaxArraySize,
		MaxJobCount:   cfg.MaxJobCount,
		MaxStepCount:  cfg.MaxStepCount,
		MaxScriptSize: cfg.MaxScriptSize,
		Preempt:       preemptConfig(cfg),
		Priority:      prioritySettings(cfg),
		FirstJobID:    model.JobID(cfg.FirstJobID),
		DefMemPerCPU:  cfg.DefMemPerCPU,
		DefMemPerNode: cfg.DefMemPerNode,
		Nodes:         cfg.ModelNodes(),
		Partitions:    cfg.ModelPartitions(),
		EnforceAssoc:  cfg.Accounting.Enforces("associations"),
		EnforceQOS:    cfg.Accounting.Enforces("qos"),
		EnforceLimits: cfg.Accounting.Enforces("limits"),
		Scheduler: service.SchedulerSettings{
			Backfill: cfg.Scheduler.Backfill, BfWindow: int64(cfg.Scheduler.BfWindow / time.Second),
			BfResolution: int64(cfg.Scheduler.BfResolution / time.Second),
			BfMaxJobTest: cfg.Scheduler.BfMaxJobTest, BfMaxJobUser: cfg.Scheduler.BfMaxJobUser,
			BfInterval: cfg.Scheduler.BfInterval, SchedMinInterval: cfg.Scheduler.SchedMinInterval,
			BfMaxJobArrayResv: cfg.Scheduler.BfMaxJobArrayResv,
		},
	}
	st.MaxUserJobBytes = DefaultMaxUserJobBytes
	if v, ok := cfg.Get("DroverMaxUserJobBytes"); ok {
		if mib, err := units.ParseMemMiB(v); err == nil {
			st.MaxUserJobBytes = mib << 20
		}
	}
	st.EnforcePartLimits = "NO"
	if v, ok := cfg.Get("EnforcePartLimits"); ok {
		switch v = strings.ToUpper(strings.TrimSpace(v)); v {
		case "YES":
			st.EnforcePartLimits = "ANY"
		case "ALL", "ANY", "NO":
			st.EnforcePartLimits = v
		}
	}
	if v, ok := cfg.Get("DependencyParameters"); ok {
		for _, f := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), "kill_invalid_depend") {
				st.KillInvalidDepend = true
			}
		}
	}
	if len(cfg.ControllerHosts) > 0 {
		st.ControllerHost = cfg.ControllerHosts[0].Name
	}
	if u, err := user.Lookup(cfg.SlurmUser); err == nil {
		n, _ := strconv.ParseUint(u.Uid, 10, 32)
		st.SlurmUID = uint32(n)
	}
	st.Config = cfg.ShowConfig(time.Time{})
	return st
}

// Run serves until ctx is cancelled.
func Run(ctx context.Context, o Options) error {
	log := o.Log
	// The controller holds every job in memory: a heap that grows half as
	// far past its live size, and at least 128 MiB past it (gc.go).
	tuneGC(os.Getenv)
	if path := os.Getenv("DROVER_CTLD_CPUPROFILE"); path != "" {
		// For performance work: a CPU profile of the whole run, written
		// when the controller stops.
		if f, err := os.Create(path); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				defer pprof.StopCPUProfile()
			}
		}
	}
	if path := os.Getenv("DROVER_CTLD_ALLOCPROFILE"); path != "" {
		// The same for allocations (what the garbage collector pays for).
		defer func() {
			if f, err := os.Create(path); err == nil {
				pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}()
	}
	cfg, err := slurmconf.Load(o.ConfPath)
	if err != nil {
		return err
	}
	for _, w := range cfg.Warnings {
		log.Warn("slurm.conf: " + w)
	}
	if cfg.StateSaveLocation == "" {
		return errors.New("slurm.conf: StateSaveLocation is required")
	}
	raiseFileLimit(log)
	if err := secureStateDir(cfg.StateSaveLocation, log); err != nil {
		return err
	}
	token, err := auth.LoadOrCreateToken(TokenPath(cfg))
	if err != nil {
		return err
	}
	settings := Settings(cfg)
	host, _ := os.Hostname()

	store := state.New(settings.FirstJobID)
	f := fsm.New(store, log.With("component", "fsm"))
	rn, err := raftnode.Open(raftnode.Config{Dir: filepath.Join(cfg.StateSaveLocation, "raft"), ID: "ctld-" + host, Log: log,
		MinFree: minFree(cfg, log), LateSync: !fsyncBeforeReply(cfg, log)}, f)
	if err != nil {
		return err
	}
	defer rn.Close()

	clk := clock.Real{}
	// Only the leader proposes: the service's changes and the
	// controller's loops commit through the same leadership gate.
	commit := controller.LeaderOnly(rn, rn)
	ctl := controller.New(log.With("component", "controller"), store, commit, clk)
	ctl.SetLeadership(controller.Polled(ctx, rn, clk, 100*time.Millisecond))
	verifier := grpcauth.NewVerifier(token)
	svc := service.New(log.With("component", "service"), store, commit, clk, ctl, settings)
	svc.SetHost(host)
	svc.SetDiagSource(func(d *api.DiagInfo, reset bool) { diagFrom(ctl, d, reset) })
	svc.Reload = func() (*service.Settings, error) {
		c, err := slurmconf.Load(o.ConfPath)
		if err != nil {
			return nil, err
		}
		return Settings(c), nil
	}
	ctl.SetService(svc)
	accounting, err := storage.Open(ctx, cfg.Accounting, cfg.StateSaveLocation, log)
	if err != nil {
		return err
	}
	if accounting != nil {
		defer accounting.Close()
		ctl.SetAccounting(accounting, cfg.ClusterName)
		svc.SetAccounting(accounting)
	}
	if err := svc.InstallConfig(settings); err != nil {
		return fmt.Errorf("install configuration: %w", err)
	}

	sock := cfg.SocketPath()
	if filepath.Dir(sock) == slurmconf.LongSocketDir {
		_ = os.MkdirAll(slurmconf.LongSocketDir, 0o755)
		_ = os.Chmod(slurmconf.LongSocketDir, 0o755) // under umask 077
	}
	_ = os.Remove(sock)
	ul, err := net.Listen("unix", sock)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", sock, err)
	}
	// Every local user may connect; the kernel tells us who they are.
	_ = os.Chmod(sock, 0o666)
	addr := o.Listen
	if addr == "" {
		addr = ":" + strconv.Itoa(cfg.SlurmctldPort)
	}
	tl, err := net.Listen("tcp", addr)
	if err != nil {
		ul.Close()
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	ca, err := auth.LoadOrCreateCA(filepath.Join(cfg.StateSaveLocation, "ca"), cfg.ClusterName)
	if err != nil {
		ul.Close()
		tl.Close()
		return fmt.Errorf("cluster CA: %w", err)
	}
	publishCA(filepath.Join(cfg.StateSaveLocation, "ca"))
	srvCert, err := ca.IssueServer(serverHosts(cfg, host))
	if err != nil {
		ul.Close()
		tl.Close()
		return fmt.Errorf("controller certificate: %w", err)
	}
	svc.SetCA(ca, func() (string, error) {
		b, err := os.ReadFile(o.ConfPath)
		return string(b), err
	})
	tcpTLS := credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{srvCert}, ClientAuth: tls.VerifyClientCertIfGiven,
		ClientCAs: ca.Pool(), MinVersion: tls.VersionTLS13,
	})
	lim := connLimits(cfg, log)
	lim.Probation = grpcauth.NewProbation(2 * lim.Handshake) // the handshake, then as long again for a first call
	slurmUID := settings.SlurmUID
	exempt := func(uid uint32) bool { return uid == 0 || uid == slurmUID }
	lim.UserRequests, lim.Exempt = grpcapi.DefaultUserRequests, exempt
	lim.UserAnswers = grpcapi.DefaultUserAnswerBytes
	// Both adapters count their calls in one table (sdiag).
	stats := rpcstats.New()
	g := grpcapi.NewGRPC(svc, ctl, verifier, tcpTLS, lim, stats)
	ul = grpcapi.LimitPerUser(ul, lim.PerUser, exempt, log)
	// The socket carries the commands' local protocol beside gRPC: it
	// is told apart by a connection's first bytes.
	lsrv := localapi.New(ctx, svc, localapi.Limits{IO: lim.Handshake, Idle: lim.Idle, Exempt: exempt}, stats, log.With("component", "localapi"))
	go g.Serve(localapi.Split(ul, lsrv.Timeout(), lsrv.ServeConn))
	go g.Serve(lim.Probation.Listener(tl))
	log.Info("controller ready", "cluster", cfg.ClusterName, "socket", sock, "addr", tl.Addr().String(),
		"jobs", store.Snapshot().NumJobs(), "next_job_id", store.Snapshot().NextJobID)

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { ctl.Run(runCtx); close(done) }()
	<-ctx.Done()
	log.Info("controller stopping")
	stop()
	<-done
	stopped := make(chan struct{})
	go func() { g.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(2 * time.Second):
		g.Stop()
	}
	_ = os.Remove(sock)
	return nil
}

// minFree is the free space the state directory keeps before changes are
// refused: DroverMinFreeSpace (a size, "512M"; the same key sets the
// agents' disk-full drain), else raftnode's default rule.
func minFree(cfg *slurmconf.Config, log *slog.Logger) int64 {
	v, ok := cfg.Get("DroverMinFreeSpace")
	if !ok {
		return 0
	}
	mib, err := units.ParseMemMiB(v)
	if err != nil || mib < 0 {
		log.Warn("slurm.conf: DroverMinFreeSpace is not a size; using the default", "value", v)
		return 0
	}
	if mib == 0 {
		return -1 // "0": no reserve
	}
	return mib << 20
}

// fsyncBeforeReply is DroverFsyncBeforeReply. By default ("yes") every
// change waits for the log's fsync before it is answered, so an
// acknowledged job survives a crash of the machine and a follower never
// acks an entry it could forget (Raft's rule). "no" answers once the log
// is written and fsyncs right after: a crash of the controller still loses
// nothing, a power loss can lose the last milliseconds of answered changes
// (Slurm's own state save is later still); a single-controller site may
// take that for a faster submission path.
func fsyncBeforeReply(cfg *slurmconf.Config, log *slog.Logger) bool {
	v, ok := cfg.Get("DroverFsyncBeforeReply")
	if !ok {
		return true
	}
	switch strings.ToLower(v) {
	case "yes", "true", "1":
		return true
	case "no", "false", "0":
		return false
	}
	log.Warn("slurm.conf: DroverFsyncBeforeReply is yes or no; using yes", "value", v)
	return true
}

// diagFrom fills in sdiag's figures that the controller's loops keep
// (resetting the scheduler's first when asked).
func diagFrom(ctl *controller.Controller, d *api.DiagInfo, reset bool) {
	if reset {
		ctl.ResetSchedStats()
	}
	acct, sched := ctl.AcctStatus(), ctl.SchedStats()
	d.AcctBacklog, d.AcctError = acct.Backlog, acct.LastError
	d.SchedLast, d.SchedMax, d.SchedTotal = sched.Last.Microseconds(), sched.Max.Microseconds(), sched.Total.Microseconds()
	d.SchedCycles, d.SchedDepthSum, d.SchedLastQueue = sched.Cycles, sched.DepthSum, sched.LastQueue
	d.SchedSince = sched.Started.Unix()
}

// preemptConfig is the scheduler's view of PreemptType, PreemptMode,
// PreemptExemptTime, PreemptParameters and SchedulerTimeSlice.
func preemptConfig(cfg *slurmconf.Config) sched.Preempt {
	reorder := cfg.PreemptReorderCount
	if reorder == 0 {
		reorder = -1 // sched reads 0 as the default, 1
	}
	return sched.Preempt{Type: cfg.PreemptType, Mode: cfg.PreemptMode, Gang: cfg.PreemptGang,
		ExemptTime: cfg.PreemptExemptTime, MinExemptPriority: cfg.PreemptMinExemptPriority,
		ReorderCount: reorder, TimeSlice: cfg.SchedulerTimeSlice,
		Within: cfg.PreemptWithin, YoungestFirst: cfg.PreemptYoungestFirst}
}
