// Package commands runs the Slurm commands (sbatch, squeue, ...): option
// parsing, a connection to the controller and formatting, nothing else.
// It links no daemon code (Raft, SQLite, cgroups, eBPF), so that the lean
// binary cmd/drover-cli, which the command names point to, starts in about
// the time Slurm's do; cmd/drover runs them too, through the same code.
package commands

import (
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"

	"github.com/drover-hpc/drover/client"
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
	"github.com/drover-hpc/drover/internal/cli/sprio"
	"github.com/drover-hpc/drover/internal/cli/squeue"
	"github.com/drover-hpc/drover/internal/cli/sreport"
	"github.com/drover-hpc/drover/internal/cli/srun"
	"github.com/drover-hpc/drover/internal/cli/sshare"
	"github.com/drover-hpc/drover/internal/cli/sstat"
	"github.com/drover-hpc/drover/internal/slurmconf"
	"github.com/drover-hpc/drover/internal/version"
)

// Commands are the Slurm commands Drover implements: the one list. `make
// build` links each name to bin/drover-cli (drover-cli --list-commands
// prints them), and the e2e harness links them the same way.
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
	"sprio":    sprio.Run,
	"sshare":   sshare.Run,
}

// Main runs the command argv[0] names (or argv[1] when invoked as
// drover-cli) and returns its exit status.
func Main(argv []string) int {
	name, args := filepath.Base(argv[0]), argv[1:]
	if Commands[name] == nil && len(args) == 1 && args[0] == "--list-commands" {
		for _, c := range slices.Sorted(maps.Keys(Commands)) {
			fmt.Println(c)
		}
		return 0
	}
	if Commands[name] == nil && len(args) > 0 {
		name, args = args[0], args[1:]
	}
	if Commands[name] == nil {
		fmt.Fprintf(os.Stderr, "drover-cli: unknown command %q; it runs the Slurm commands only (the daemons are in drover)\n", name)
		return 1
	}
	return Run(name, args)
}

// Run runs one command.
func Run(name string, args []string) int {
	cmd := Commands[name]
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
	env := cli.NewOSEnv(name, version.Version, Dial)
	switch name {
	case "srun", "sattach", "sbcast":
		env.Host.LaunchHost = launchHost()
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	return cmd(ctx, env, args)
}

// ConfPath is where commands and daemons find slurm.conf.
func ConfPath() string {
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
	cfg, err := slurmconf.Load(ConfPath())
	if err != nil {
		return nil, err
	}
	loadedConf = cfg
	return cfg, nil
}

// Dial connects commands to the controller named by slurm.conf.
func Dial() (cli.Client, error) {
	cfg, err := loadConf()
	if err != nil {
		return nil, fmt.Errorf("%w (%v)", cli.ErrNoController, err)
	}
	o := client.Options{Socket: cfg.SocketPath()}
	// The first SlurmctldHost is dialled; the others are tried in order
	// when it cannot be reached.
	for i, h := range cfg.ControllerHosts {
		host := h.Addr
		if host == "" {
			host = h.Name
		}
		addr := net.JoinHostPort(host, strconv.Itoa(cfg.SlurmctldPort))
		if i == 0 {
			o.Addr = addr
		} else {
			o.Backups = append(o.Backups, addr)
		}
	}
	if tok := os.Getenv("DROVER_TOKEN"); tok != "" {
		o.Token = tok
	}
	o.CAFile = os.Getenv("DROVER_CA")
	if o.CAFile == "" {
		o.CAFile = cfg.CAPath()
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
