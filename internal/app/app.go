package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/drover-hpc/drover/client"
	"github.com/drover-hpc/drover/internal/acct/storage"
	"github.com/drover-hpc/drover/internal/agent"
	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/cli/sacct"
	"github.com/drover-hpc/drover/internal/cli/sacctmgr"
	"github.com/drover-hpc/drover/internal/cli/salloc"
	"github.com/drover-hpc/drover/internal/cli/sbatch"
	"github.com/drover-hpc/drover/internal/cli/sbcast"
	"github.com/drover-hpc/drover/internal/cli/scancel"
	"github.com/drover-hpc/drover/internal/cli/scontrol"
	"github.com/drover-hpc/drover/internal/cli/sdiag"
	"github.com/drover-hpc/drover/internal/cli/sinfo"
	"github.com/drover-hpc/drover/internal/cli/squeue"
	"github.com/drover-hpc/drover/internal/cli/sreport"
	"github.com/drover-hpc/drover/internal/cli/srun"
	"github.com/drover-hpc/drover/internal/cli/sstat"
	"github.com/drover-hpc/drover/internal/ctld"
	"github.com/drover-hpc/drover/internal/dbd"
	"github.com/drover-hpc/drover/internal/executor"
	"github.com/drover-hpc/drover/internal/sim"
	"github.com/drover-hpc/drover/internal/slurmconf"
	"github.com/drover-hpc/drover/internal/up"
	"github.com/drover-hpc/drover/internal/version"
)

// Commands are the Slurm commands this binary implements; `make build`
// links each name to bin/drover.
var Commands = map[string]cli.Command{
	"sbatch":   sbatch.Run,
	"srun":     srun.Run,
	"salloc":   salloc.Run,
	"sattach":  srun.Sattach,
	"sbcast":   sbcast.Run,
	"squeue":   squeue.Run,
	"sinfo":    sinfo.Run,
	"scancel":  scancel.Run,
	"scontrol": scontrol.Run,
	"sstat":    sstat.Run,
	"sdiag":    sdiag.Run,
	"sacctmgr": sacctmgr.Run,
	"sacct":    sacct.Run,
	"sreport":  sreport.Run,
}

// Main runs the invocation and returns the exit status.
func Main(argv []string) int {
	name := filepath.Base(argv[0])
	args := argv[1:]
	if name == "drover" || Commands[name] == nil {
		if len(args) == 0 {
			usage(os.Stderr)
			return 1
		}
		name, args = args[0], args[1:]
	}
	switch name {
	case executor.StepExecArg:
		return executor.StepExecMain(args)
	case executor.SuperviseArg:
		return executor.SuperviseMain(args)
	case "version", "--version", "-V":
		fmt.Println("drover", version.Version)
		return 0
	case "help", "--help", "-h":
		usage(os.Stdout)
		return 0
	case "controller":
		return daemon(name, args, func(ctx context.Context, conf string, log *slog.Logger, fs *pflag.FlagSet) error {
			return ctld.Run(ctx, ctld.Options{ConfPath: conf, Log: log})
		})
	case "agent":
		var node, token, join, ctl, stateDir string
		var killOnExit bool
		return daemon(name, args, func(ctx context.Context, conf string, log *slog.Logger, fs *pflag.FlagSet) error {
			return agent.Run(ctx, agent.Options{ConfPath: conf, Name: node, Token: token, Log: log,
				Join: join, Controller: ctl, StateDir: stateDir, KillJobsOnExit: killOnExit})
		}, func(fs *pflag.FlagSet) {
			fs.BoolVar(&killOnExit, "kill-jobs-on-exit", false, "kill the node's jobs when the agent stops (default: batch jobs run on, and a restarted agent takes them back)")
			fs.StringVar(&node, "name", "", "node name in slurm.conf (default: short hostname)")
			fs.StringVar(&token, "token", "", "cluster token (default: read from the controller's state dir)")
			fs.StringVar(&join, "join", "", "join the cluster with this token (from `drover token create`)")
			fs.StringVar(&ctl, "controller", "", "controller HOST:PORT (default: from slurm.conf, or the join)")
			fs.StringVar(&stateDir, "state-dir", "", "where a joined node keeps its certificate and slurm.conf (default "+agent.DefaultStateDir+")")
		})
	case "dbd":
		var listen string
		return daemon(name, args, func(ctx context.Context, conf string, log *slog.Logger, fs *pflag.FlagSet) error {
			if !fs.Changed("conf") {
				conf = filepath.Join(filepath.Dir(confPath()), "slurmdbd.conf")
			}
			c, err := slurmconf.LoadDbd(conf)
			if err != nil {
				return err
			}
			for _, w := range c.Warnings {
				log.Warn("slurmdbd.conf: " + w)
			}
			st, err := storage.Open(ctx, c.Storage, c.StateDir, log)
			if err != nil {
				return err
			}
			if st == nil {
				return errors.New("slurmdbd.conf: StorageType=none leaves the dbd nothing to serve")
			}
			defer st.Close()
			return dbd.Run(ctx, dbd.Options{Conf: c, Store: st, Log: log, Listen: listen})
		}, func(fs *pflag.FlagSet) {
			fs.StringVar(&listen, "listen", "", "listen address (default DbdAddr:DbdPort of slurmdbd.conf)")
		})
	case "token":
		return tokenCmd(args)
	case "gres":
		return gresCmd(args)
	case "up":
		return up.Main(args)
	case "sim":
		return sim.Main(args, os.Stdout, os.Stderr)
	}
	cmd := Commands[name]
	if cmd == nil {
		fmt.Fprintf(os.Stderr, "drover: unknown command %q\n", name)
		usage(os.Stderr)
		return 1
	}
	if os.Getenv("GOGC") == "" {
		// A command lives for milliseconds: collecting garbage would only
		// slow it down. The limit keeps a huge listing from running away.
		debug.SetGCPercent(-1)
		debug.SetMemoryLimit(1 << 30)
	}
	if path := os.Getenv("DROVER_CPUPROFILE"); path != "" {
		// For performance work on the commands: profile one invocation.
		if f, err := os.Create(path); err == nil {
			_ = pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}
	env := cli.NewOSEnv(name, version.Version, dialer)
	switch name {
	case "srun", "sattach":
		srun.LaunchHost = launchHost()
	case "sbcast":
		sbcast.LaunchHost = launchHost()
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	return cmd(ctx, env, args)
}

func usage(w *os.File) {
	names := make([]string, 0, len(Commands))
	for n := range Commands {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(w, `usage: drover <command> [args]

Cluster:
  up --dir DIR [--nodes N]     run a whole cluster on this machine (foreground)
  controller -f slurm.conf     run the controller
  agent -f slurm.conf          run a node agent
  agent --join TOKEN --controller HOST:PORT [--name NODE]
                               join a new machine to the cluster
  dbd [-f slurmdbd.conf]       run an accounting daemon shared by several clusters
  token create [--ttl 24h]     make a join token (admins)
  gres [-f slurm.conf] [--autodetect]  list the GPUs this node finds (gres.conf lines)
  sim --trace F.swf | --scenario F.yaml  replay a workload through the scheduler (simulated clock)
  version                      print the version

Slurm commands (also callable through a symlink of that name):
  %s
`, strings.Join(names, " "))
}

// confPath is where commands and daemons find slurm.conf.
func confPath() string {
	if p := os.Getenv("SLURM_CONF"); p != "" {
		return p
	}
	return "/etc/slurm/slurm.conf"
}

var loadedConf *slurmconf.Config

func loadConf() (*slurmconf.Config, error) {
	if loadedConf != nil {
		return loadedConf, nil
	}
	cfg, err := slurmconf.Load(confPath())
	if err != nil {
		return nil, err
	}
	loadedConf = cfg
	return cfg, nil
}

// dialer connects commands to the controller named by slurm.conf.
func dialer() (cli.Client, error) {
	cfg, err := loadConf()
	if err != nil {
		return nil, fmt.Errorf("%w (%v)", cli.ErrNoController, err)
	}
	o := client.Options{Socket: cfg.SocketPath()}
	if len(cfg.ControllerHosts) > 0 {
		h := cfg.ControllerHosts[0]
		host := h.Addr
		if host == "" {
			host = h.Name
		}
		o.Addr = net.JoinHostPort(host, strconv.Itoa(cfg.SlurmctldPort))
	}
	if tok := os.Getenv("DROVER_TOKEN"); tok != "" {
		o.Token = tok
	}
	o.CAFile = os.Getenv("DROVER_CA")
	if o.CAFile == "" {
		o.CAFile = ctld.CAPath(cfg)
	}
	return client.Dial(o)
}

// launchHost picks the local address that routes to the controller, so the
// node running an srun task can dial back.
func launchHost() string {
	cfg, err := loadConf()
	if err != nil || len(cfg.ControllerHosts) == 0 {
		return "127.0.0.1"
	}
	h := cfg.ControllerHosts[0]
	host := h.Addr
	if host == "" {
		host = h.Name
	}
	c, err := net.Dial("udp", net.JoinHostPort(host, strconv.Itoa(cfg.SlurmctldPort)))
	if err != nil {
		return "127.0.0.1"
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).IP.String()
}

// daemon parses the common daemon flags and runs fn until SIGINT/SIGTERM.
func daemon(name string, args []string, fn func(context.Context, string, *slog.Logger, *pflag.FlagSet) error, extra ...func(*pflag.FlagSet)) int {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	conf := fs.StringP("conf", "f", confPath(), "path of slurm.conf")
	verbose := fs.CountP("verbose", "v", "more logging")
	for _, e := range extra {
		e(fs)
	}
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			return 0
		}
		fmt.Fprintf(os.Stderr, "drover %s: %v\n", name, err)
		return 1
	}
	level := slog.LevelInfo
	if *verbose > 0 {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})).With("daemon", name)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := fn(ctx, *conf, log, fs); err != nil {
		log.Error("fatal", "err", err)
		fmt.Fprintf(os.Stderr, "drover %s: %v\n", name, err)
		return 1
	}
	return 0
}

// tokenCmd is `drover token create [--ttl D]`.
func tokenCmd(args []string) int {
	fs := pflag.NewFlagSet("token", pflag.ContinueOnError)
	ttl := fs.Duration("ttl", 24*time.Hour, "how long the token lasts")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 || fs.Arg(0) != "create" {
		fmt.Fprintln(os.Stderr, "usage: drover token create [--ttl 24h]")
		return 2
	}
	c, err := dialer()
	if err != nil {
		fmt.Fprintf(os.Stderr, "drover token: %v\n", err)
		return 1
	}
	defer c.Close()
	tc, ok := c.(interface {
		CreateJoinToken(context.Context, time.Duration) (string, int64, error)
	})
	if !ok {
		fmt.Fprintln(os.Stderr, "drover token: not supported by this client")
		return 1
	}
	tok, exp, err := tc.CreateJoinToken(context.Background(), *ttl)
	if err != nil {
		fmt.Fprintf(os.Stderr, "drover token: %v\n", err)
		return 1
	}
	fmt.Println(tok)
	fmt.Fprintf(os.Stderr, "expires %s; on the new machine:\n  drover agent --join %s --controller HOST:PORT [--name NODE]\n",
		time.Unix(exp, 0).Format(time.RFC3339), tok)
	return 0
}
