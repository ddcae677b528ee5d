package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/drover-hpc/drover/internal/acct/storage"
	"github.com/drover-hpc/drover/internal/agent"
	"github.com/drover-hpc/drover/internal/app/commands"
	"github.com/drover-hpc/drover/internal/app/commands/table"
	"github.com/drover-hpc/drover/internal/app/remote"
	"github.com/drover-hpc/drover/internal/ctld"
	"github.com/drover-hpc/drover/internal/dbd"
	"github.com/drover-hpc/drover/internal/executor"
	"github.com/drover-hpc/drover/internal/sim"
	"github.com/drover-hpc/drover/internal/slurmconf"
	"github.com/drover-hpc/drover/internal/up"
	"github.com/drover-hpc/drover/internal/version"
)

// Commands are the Slurm commands this binary also runs (see package
// commands, which cmd/drover-cli links alone).
var Commands = table.Commands

// Main runs the invocation and returns the exit status.
func Main(argv []string) int {
	commands.DialRemote = remote.Dial
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
	case "up", "controller", "agent", "dbd":
		executor.SealInheritedFDs()
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
		// Before anything else: it may execute the process again.
		ctld.UseTimerSlack(os.Getenv)
		return daemon(name, args, func(ctx context.Context, conf string, log *slog.Logger, fs *pflag.FlagSet) error {
			return ctld.Run(ctx, ctld.Options{ConfPath: conf, Log: log})
		})
	case "agent":
		var node, token, join, ctl, stateDir string
		var killOnExit bool
		return daemon(name, args, func(ctx context.Context, conf string, log *slog.Logger, fs *pflag.FlagSet) error {
			return agent.Run(ctx, agent.Options{ConfPath: conf, ConfNamed: fs.Changed("conf"), Name: node, Token: token, Log: log,
				Join: join, Controller: ctl, StateDir: stateDir, KillJobsOnExit: killOnExit})
		}, func(fs *pflag.FlagSet) {
			fs.BoolVar(&killOnExit, "kill-jobs-on-exit", false, "kill the node's jobs when the agent stops (default: batch jobs run on, and a restarted agent takes them back)")
			fs.StringVar(&node, "name", "", "node name in slurm.conf (default: short hostname)")
			fs.StringVar(&token, "token", "", "cluster token (default: read from the controller's state dir)")
			fs.StringVar(&join, "join", "", "join the cluster with this token (from drover token create)")
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
	if Commands[name] == nil {
		fmt.Fprintf(os.Stderr, "drover: unknown command %q\n", name)
		usage(os.Stderr)
		return 1
	}
	return commands.Run(name, Commands[name], args)
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
  token create --nodes NAMES   make a join token for these nodes (admins; --uses N, --ttl 24h)
  token list | delete ID       show the join tokens (no secrets), revoke one
  gres [-f slurm.conf] [--autodetect]  list the GPUs this node finds (gres.conf lines)
  sim --trace F.swf | --scenario F.yaml  replay a workload through the scheduler (simulated clock)
  version                      print the version

Slurm commands (also callable through a symlink of that name):
  %s
`, strings.Join(names, " "))
}

func confPath() string { return commands.ConfPath() }

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
