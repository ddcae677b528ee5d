// Package commands runs the Slurm commands (sbatch, squeue, ...): option
// parsing, a connection to the controller and formatting, nothing else.
// It links no daemon code (Raft, SQLite, cgroups, eBPF), so that the lean
// binary cmd/drover-cli, which the command names point to, starts in about
// the time Slurm's do; cmd/drover runs them too, through the same code.
package commands

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"

	lclient "github.com/drover-hpc/drover/client/local"
	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/localwire"
	"github.com/drover-hpc/drover/internal/slurmconf"
	"github.com/drover-hpc/drover/internal/version"
)

// Main runs the command of cmds that argv[0] names (or argv[1] when
// invoked as the binary itself, e.g. drover-cli) and returns its exit
// status. cmds is the binary's table: all of them (package table), or one
// in a binary for that command alone (cmd/drover-sbatch).
func Main(argv []string, cmds map[string]cli.Command) int {
	name, args := filepath.Base(argv[0]), argv[1:]
	if cmds[name] == nil && len(args) == 1 && args[0] == "--list-commands" {
		for _, c := range slices.Sorted(maps.Keys(cmds)) {
			fmt.Println(c)
		}
		return 0
	}
	if cmds[name] == nil && len(args) > 0 {
		name, args = args[0], args[1:]
	}
	if cmds[name] == nil {
		what := "the Slurm commands"
		if len(cmds) == 1 {
			what = strings.Join(slices.Collect(maps.Keys(cmds)), "")
		}
		fmt.Fprintf(os.Stderr, "%s: unknown command %q; it runs %s only (the daemons are in drover)\n", filepath.Base(argv[0]), name, what)
		return 1
	}
	return Run(name, cmds[name], args)
}

// Run runs one command, cmd, as name.
func Run(name string, cmd cli.Command, args []string) int {
	if os.Getenv("GOGC") == "" {
		// A command lives for milliseconds: collecting garbage would only
		// slow it down. The limit keeps a huge listing from running away.
		debug.SetGCPercent(-1)
		debug.SetMemoryLimit(1 << 30)
	}
	defer profile()()
	running.name, running.args = name, args
	if needsFull(args) {
		execFull()
	}
	env := cli.NewOSEnv(name, version.Version, Dial)
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
	// The commands learn nodes and partitions from the controller.
	cfg, err := slurmconf.Load(ConfPath(), slurmconf.ControllerOnly())
	if err != nil {
		return nil, err
	}
	loadedConf = cfg
	return cfg, nil
}

// Target is how slurm.conf says to reach the controller.
type Target struct {
	Socket string // the controller's Unix socket on this machine
	Addr   string // the first SlurmctldHost's TCP API
	// Backups are the later SlurmctldHost lines' addresses, tried in
	// order when the ones before cannot be reached.
	Backups []string
	Token   string // DROVER_TOKEN, for TCP
	CAFile  string // the cluster CA that the TCP port's certificate chains to
}

// DialRemote connects over gRPC (TCP with TLS, a token, leader
// following). The full binary sets it (internal/app); the lean one leaves
// it nil, so that it links no gRPC: it hands such commands to the full
// binary (see execFull).
var DialRemote func(Target) (cli.Client, error)

// The command being run, for handing it to the full binary.
var running struct {
	name string
	args []string
}

// target reads slurm.conf's controller lines.
func target() (Target, error) {
	cfg, err := loadConf()
	if err != nil {
		return Target{}, fmt.Errorf("%w (%v)", cli.ErrNoController, err)
	}
	t := Target{Socket: cfg.SocketPath()}
	// The first SlurmctldHost is dialled; the others are tried in order
	// when it cannot be reached.
	for i, h := range cfg.ControllerHosts {
		host := h.Addr
		if host == "" {
			host = h.Name
		}
		addr := net.JoinHostPort(host, strconv.Itoa(cfg.SlurmctldPort))
		if i == 0 {
			t.Addr = addr
		} else {
			t.Backups = append(t.Backups, addr)
		}
	}
	t.Token = os.Getenv("DROVER_TOKEN")
	t.CAFile = os.Getenv("DROVER_CA")
	if t.CAFile == "" {
		t.CAFile = cfg.CAPath()
	}
	return t, nil
}

// ControllerAddr is the TCP address of the first SlurmctldHost, as
// slurm.conf gives it ("" without one): what other machines dial.
func ControllerAddr() string {
	t, err := target()
	if err != nil {
		return ""
	}
	return t.Addr
}

// transport is DROVER_TRANSPORT: "local" (the socket's local protocol
// only), "grpc" (gRPC only, the socket or TCP), or "" — the local
// protocol when the controller's socket is on this machine, else gRPC.
func transport() string { return os.Getenv("DROVER_TRANSPORT") }

// local reports whether t's controller is reached with the local
// protocol: its socket is here (or there is nothing else to try), and
// gRPC is not asked for.
func local(t Target) bool {
	switch transport() {
	case "grpc":
		return false
	case "local":
		return true
	}
	if _, err := os.Stat(t.Socket); err == nil || t.Addr == "" {
		return true
	}
	return false
}

// Dial connects commands to the controller named by slurm.conf.
func Dial() (cli.Client, error) {
	t, err := target()
	if err != nil {
		return nil, err
	}
	if local(t) {
		c := lclient.Dial(t.Socket)
		c.Fallback = func(err error) { fallback(t, err) }
		return c, nil
	}
	if DialRemote != nil {
		return DialRemote(t)
	}
	execFull()
	return nil, fmt.Errorf("%w (the controller is not on this machine, and the drover binary that reaches it over TCP was not found beside %s)",
		cli.ErrNoController, os.Args[0])
}

// fallback runs the command again over gRPC when the local protocol
// could not do what gRPC can: a follower refused a change and named the
// leader, the socket's controller is down and slurm.conf names others,
// or the controller is another build (its local protocol is not this
// one's; gRPC's messages are versioned). Nothing was done, so the
// command starts over (it has printed nothing yet: commands change state
// before they report).
func fallback(t Target, err error) {
	_, notLeader := api.IsNotLeader(err)
	other := errors.Is(err, localwire.ErrOtherBuild)
	if transport() == "" && (notLeader || other || (errors.Is(err, api.ErrNoController) && len(t.Backups) > 0)) {
		execFull()
	}
}

// execFull hands the command being run to a binary with gRPC
// (drover-cli-remote or drover beside this one; this one when it has
// gRPC) with DROVER_TRANSPORT=grpc, and returns only if it cannot.
func execFull() {
	if running.name == "" || (DialRemote != nil && transport() == "grpc") {
		return // nothing to hand on, or the full binary already on gRPC
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	if DialRemote == nil {
		// drover-cli-remote (the commands with gRPC) starts faster than
		// drover (the daemons too); either is installed beside us.
		dir := filepath.Dir(exe)
		exe = filepath.Join(dir, "drover-cli-remote")
		if _, err := os.Stat(exe); err != nil {
			exe = filepath.Join(dir, "drover")
		}
	}
	env := append(os.Environ(), "DROVER_TRANSPORT=grpc")
	_ = syscall.Exec(exe, append([]string{running.name}, running.args...), env)
}

// needsFull reports whether the lean binary must hand the command to the
// full one before it starts (it may read its standard input, which
// cannot be handed on after): the controller is reached only over TCP.
// Asking for the version or help needs no controller.
func needsFull(args []string) bool {
	if DialRemote != nil {
		return false
	}
	for _, a := range args {
		switch a {
		case "--version", "-V", "--help", "-h", "--usage":
			return false
		}
	}
	t, err := target()
	return err == nil && !local(t)
}

// WithLaunchHost is cmd for the commands whose tasks dial back to the
// command (srun, sattach, sbcast): it gives them the local address that
// routes to the controller first. A wrapper rather than a case in Run, so
// that a binary without those commands links no UDP dial (net's dialer).
func WithLaunchHost(cmd cli.Command) cli.Command {
	return func(ctx context.Context, env *cli.Env, args []string) int {
		env.Host.LaunchHost = launchHost()
		return cmd(ctx, env, args)
	}
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
