// Package up runs a whole Drover cluster on one machine in the foreground:
// it writes DIR/slurm.conf on first use (one node with the machine's real
// CPUs and memory, or N virtual nodes splitting it), starts the controller
// and one agent per node as child processes, and stops them all on SIGINT
// or SIGTERM. Run again on the same DIR, it resumes from the saved state.
package up

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/drover-hpc/drover/internal/gres"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/slurmconf"
)

// Main is `drover up`.
func Main(args []string) int {
	fs := pflag.NewFlagSet("up", pflag.ContinueOnError)
	dir := fs.String("dir", "", "directory holding slurm.conf, state, spool and logs (required)")
	nodes := fs.Int("nodes", 1, "number of nodes; more than one splits this machine into virtual nodes node[1-N]")
	prefix := fs.String("node-prefix", "node", "name of the virtual nodes: PREFIX1 ... PREFIXN (clusters side by side on one machine need their own, cgroups are named after nodes); a single node is named after this host unless a prefix is given")
	cpus := fs.Int("cpus", 0, "CPUs per node (default: this machine's CPUs divided among the nodes)")
	mem := fs.Int64("memory", 0, "memory per node in MiB (default: this machine's memory, less 512 MiB, divided)")
	sets := fs.StringArray("conf", nil, "extra slurm.conf line KEY=VALUE for a new configuration (repeatable)")
	noGPUs := fs.Bool("no-gpus", false, "do not look for NVIDIA GPUs (by default a new configuration gives the nodes the GPUs NVML finds, split among them)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(os.Stderr, "drover up: %v\n", err)
		return 1
	}
	if *dir == "" || *nodes < 1 {
		fmt.Fprintln(os.Stderr, "drover up: --dir is required and --nodes must be at least 1")
		return 1
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "drover up: %v\n", err)
		return 1
	}
	if err := os.MkdirAll(filepath.Join(abs, "log"), 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "drover up: %v\n", err)
		return 1
	}
	// Users' jobs read the configuration and write next to it.
	_ = os.Chmod(abs, 0o755)
	conf := filepath.Join(abs, "slurm.conf")
	if _, err := os.Stat(conf); errors.Is(err, os.ErrNotExist) {
		// A single node takes the host's name, unless a prefix asks for a
		// name of its own (a second one-node cluster beside the first).
		named := *prefix
		if *nodes == 1 && !fs.Changed("node-prefix") {
			named = ""
		}
		var gpus []model.GPU
		if !*noGPUs {
			gpus = detectGPUs(gres.RealNVML())
		}
		if len(gpus) > 0 {
			fmt.Printf("drover: found %d GPU(s) (%s); they are in %s\n", len(gpus), gresOf(gpus), slurmconf.GresPathFor(conf))
		}
		if err := writeConf(conf, abs, named, *nodes, *cpus, *mem, *sets, gpus); err != nil {
			fmt.Fprintf(os.Stderr, "drover up: %v\n", err)
			return 1
		}
	}
	cfg, err := slurmconf.Load(conf)
	if err != nil {
		fmt.Fprintf(os.Stderr, "drover up: %v\n", err)
		return 1
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "drover up: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	// Each daemon is kept up: one that dies is started again (keeper).
	keepCtx, stopKeeping := context.WithCancel(ctx)
	defer stopKeeping()
	var keepers []*keeper
	var kwg sync.WaitGroup
	keep := func(name string, first *child, start func() (*child, error)) *keeper {
		k := &keeper{name: name, start: start, out: os.Stdout}
		k.cur = first
		kwg.Add(1)
		go func() { defer kwg.Done(); k.run(keepCtx, first) }()
		return k
	}
	startCtl := func() (*child, error) {
		return spawn(self, filepath.Join(abs, "log", "controller.log"), "controller", "-f", conf)
	}
	ctl, err := startCtl()
	if err != nil {
		fmt.Fprintf(os.Stderr, "drover up: %v\n", err)
		return 1
	}
	if err := waitSocket(cfg.SocketPath(), ctl, 60*time.Second); err != nil {
		fmt.Fprintf(os.Stderr, "drover up: controller did not start: %v (see %s)\n", err, filepath.Join(abs, "log", "controller.log"))
		ctl.stop(5 * time.Second)
		return 1
	}
	ctlKeeper := keep("controller", ctl, startCtl)
	for _, n := range cfg.Nodes {
		startAgent := func() (*child, error) {
			return spawn(self, filepath.Join(abs, "log", n.Name+".log"), "agent", "-f", conf, "--name", n.Name, "--kill-jobs-on-exit")
		}
		a, err := startAgent()
		if err != nil {
			fmt.Fprintf(os.Stderr, "drover up: %v\n", err)
			break
		}
		keepers = append(keepers, keep("agent "+n.Name, a, startAgent))
	}
	fmt.Printf("drover: cluster %q is up with %d node(s); logs in %s\n", cfg.ClusterName, len(cfg.Nodes), filepath.Join(abs, "log"))
	fmt.Printf("export SLURM_CONF=%s\n", conf)

	<-ctx.Done()
	fmt.Println("drover: stopping")
	stopKeeping()
	kwg.Wait()
	var wg sync.WaitGroup
	for _, k := range keepers {
		wg.Add(1)
		// An agent ending its jobs waits KillWait for tasks that trap
		// SIGTERM before it SIGKILLs them: give it that long.
		go func() { defer wg.Done(); k.stop(max(10*time.Second, cfg.KillWait+15*time.Second)) }()
	}
	wg.Wait()
	ctlKeeper.stop(10 * time.Second)
	fmt.Println("drover: stopped")
	return 0
}

type child struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func spawn(self, logPath string, args ...string) (*child, error) {
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, args...)
	cmd.Stdout, cmd.Stderr = lf, lf
	// Own process group: a Ctrl-C in the terminal reaches only `up`, which
	// then stops the children in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, err
	}
	c := &child{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); lf.Close(); close(c.done) }()
	return c, nil
}

func (c *child) stop(grace time.Duration) {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(grace):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

func waitSocket(path string, c *child, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if conn, err := net.Dial("unix", path); err == nil {
			conn.Close()
			return nil
		}
		select {
		case <-c.done:
			return errors.New("controller exited")
		case <-time.After(20 * time.Millisecond):
		}
	}
	return errors.New("timed out")
}

// writeConf creates the cluster's slurm.conf: nodes PREFIX1..N, or one
// node named after this host when prefix is empty; with gpus, a gres.conf
// beside it giving them to the nodes.
func writeConf(path, dir, prefix string, nodes, cpus int, mem int64, extra []string, gpus []model.GPU) error {
	host, _ := os.Hostname()
	short, _, _ := strings.Cut(host, ".")
	if short == "" {
		short = "localhost"
	}
	if cpus <= 0 {
		cpus = max(1, runtime.NumCPU()/nodes)
	}
	if mem <= 0 {
		mem = max(256, (memTotalMiB()-512)/int64(nodes))
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	names := short
	switch {
	case nodes > 1:
		names = fmt.Sprintf("%s[1-%d]", prefix, nodes)
	case prefix != "":
		names = prefix + "1"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by `drover up` for a cluster on this machine; edit and restart to change.\n")
	fmt.Fprintf(&b, "ClusterName=%s\n", "drover")
	fmt.Fprintf(&b, "SlurmctldHost=%s(127.0.0.1)\n", short)
	fmt.Fprintf(&b, "SlurmctldPort=%d\n", port)
	fmt.Fprintf(&b, "StateSaveLocation=%s\n", filepath.Join(dir, "state"))
	fmt.Fprintf(&b, "SlurmdSpoolDir=%s\n", filepath.Join(dir, "spool"))
	fmt.Fprintf(&b, "SlurmdTimeout=30\nKillWait=5\nMinJobAge=300\nMaxArraySize=10001\nMaxJobCount=100000\n")
	fmt.Fprintf(&b, "DefMemPerCPU=%d\n", max(1, mem/int64(cpus)))
	for _, kv := range extra {
		fmt.Fprintf(&b, "%s\n", kv)
	}
	if len(gpus) == 0 {
		fmt.Fprintf(&b, "NodeName=%s NodeAddr=127.0.0.1 CPUs=%d RealMemory=%d State=UNKNOWN\n", names, cpus, mem)
	} else {
		each := []string{names}
		if nodes > 1 {
			each = each[:0]
			for i := 1; i <= nodes; i++ {
				each = append(each, fmt.Sprintf("%s%d", prefix, i))
			}
		}
		per := splitGPUs(gpus, len(each))
		fmt.Fprintf(&b, "GresTypes=gpu\n")
		for i, n := range each {
			g := ""
			if s := gresOf(per[i]); s != "" {
				g = " Gres=" + s
			}
			fmt.Fprintf(&b, "NodeName=%s NodeAddr=127.0.0.1 CPUs=%d RealMemory=%d%s State=UNKNOWN\n", n, cpus, mem, g)
		}
		if err := writeGresConf(slurmconf.GresPathFor(path), each, per); err != nil {
			return err
		}
	}
	fmt.Fprintf(&b, "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func memTotalMiB() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 1024
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return kb / 1024
		}
	}
	return 1024
}
