package agent

import (
	"errors"
	"os"
	"strings"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/gres"
	"github.com/drover-hpc/drover/internal/slurmconf"
)

// reconfigure is the agent's part of scontrol reconfigure, as slurmd's: it
// reads slurm.conf, cgroup.conf and gres.conf again.
//
//   - slurm.conf: what the agent reads per use takes the new values at
//     once — Prolog, Epilog, TaskProlog, TaskEpilog, PrologEpilogTimeout,
//     the health check (HealthCheckProgram, Interval, NodeState: from its
//     next round), MessageTimeout, SlurmdTimeout's heartbeat,
//     SchedulerParameters, DroverMinFreeSpace. What the agent set up at
//     its start stays until it is restarted, as slurm.conf(5) says for
//     most of them: the controller's address and credentials, the spool
//     directory, this node's own line (CPUs, memory; the controller
//     keeps the node as registered), UnkillableStepTimeout and
//     JobAcctGatherFrequency. A changed one is logged.
//   - cgroup.conf: the Constrain* keys and the memory limits apply to the
//     cgroups made from then on (new jobs, and new steps of running
//     jobs, which stay inside their job's); running jobs keep theirs.
//     CgroupPlugin needs a restart.
//   - gres.conf: the GPUs are registered again on the open stream, so the
//     controller schedules the devices the node has now.
//
// A file that cannot be read or parsed, or a slurm.conf without this
// node, leaves everything as it was, with a warning: slurmd would stop,
// the agent keeps its running jobs and the configuration it had.
func (a *Agent) reconfigure() {
	cfg, err := slurmconf.Load(a.confPath)
	if err == nil {
		if _, ok := cfg.Node(a.node); !ok {
			err = errNodeGone
		}
	}
	if err != nil {
		a.log.Warn("reconfigure: slurm.conf not read again; the agent keeps its configuration", "err", err)
		return
	}
	var cc *slurmconf.CgroupConf
	if a.iso != nil {
		cc, err = slurmconf.LoadCgroup(slurmconf.CgroupPathFor(a.confPath))
		if err != nil {
			a.log.Warn("reconfigure: cgroup.conf not read again; the agent keeps its configuration", "err", err)
			return
		}
	}
	old := a.conf()
	for _, k := range restartOnly(old, cfg, a.node) {
		a.log.Warn("reconfigure: a changed setting needs the agent restarted; the old value stays until then", "key", k)
	}
	a.cfgp.Store(cfg)
	if d := cfg.KillWait; d > 0 {
		a.setKillWait(d)
	}
	if a.iso == nil {
		a.log.Info("reconfigure: slurm.conf read again")
		return
	}
	for _, w := range cc.Warnings {
		a.log.Warn("cgroup.conf", "warning", w)
	}
	if was := a.iso.cc().Plugin; !strings.EqualFold(cc.Plugin, was) {
		a.log.Warn("reconfigure: a changed setting needs the agent restarted; the old value stays until then", "key", "CgroupPlugin")
		cc.Plugin = was
	}
	a.iso.confp.Store(cc)
	a.log.Info("reconfigure: slurm.conf and cgroup.conf read again",
		"cores", cc.ConstrainCores, "ram", cc.ConstrainRAMSpace, "devices", cc.ConstrainDevices)
	a.reconfigureGres()
}

// reconfigureGres reads gres.conf again and registers the GPUs it finds
// (an added GPU, one gone, a node short of GPUs whose devices came back).
// A gres.conf that cannot be read or names a missing device leaves the
// node's GPUs as they were, with a warning: the agent would not have
// started on it either.
func (a *Agent) reconfigureGres() {
	gc, err := slurmconf.LoadGres(slurmconf.GresPathFor(a.confPath))
	if err != nil {
		a.log.Warn("reconfigure: gres.conf not read again; the node keeps its GPUs", "err", err)
		return
	}
	gpus, warns, err := gres.Discover(a.node, gc, gres.RealNVML())
	if err != nil {
		a.log.Warn("reconfigure: gres.conf not taken; the node keeps its GPUs", "err", err)
		return
	}
	for _, w := range warns {
		a.log.Warn("gres", "warning", w)
	}
	a.iso.setGPUs(gpus)
	a.log.Info("reconfigure: gres.conf read again", "gpus", len(gpus))
	a.report(&pb.AgentMessage{Msg: &pb.AgentMessage_Register{Register: a.registration()}})
}

var errNodeGone = errors.New("this node is not defined in it")

// takeJoinedConf replaces the slurm.conf a join brought with text, the
// controller's as it read it for this reconfigure: a joined node has no
// slurm.conf of its own to read again (Slurm's configless slurmd takes
// the files slurmctld sends likewise). A text that does not parse, or
// does not define this node, is not taken (reconfigure then keeps the
// configuration, as for a local file); a node with a slurm.conf of its
// own ignores it.
func (a *Agent) takeJoinedConf(text string) {
	if a.joinedConf == "" || text == "" {
		return
	}
	a.joinMu.Lock()
	defer a.joinMu.Unlock()
	if old, err := os.ReadFile(a.joinedConf); err == nil && string(old) == text {
		return
	}
	tmp := a.joinedConf + ".new"
	err := os.WriteFile(tmp, []byte(text), 0o644)
	if err == nil {
		var cfg *slurmconf.Config
		if cfg, err = slurmconf.Load(tmp); err == nil {
			if _, ok := cfg.Node(a.node); !ok {
				err = errNodeGone
			}
		}
	}
	if err == nil {
		err = os.Rename(tmp, a.joinedConf)
	}
	if err != nil {
		_ = os.Remove(tmp)
		a.log.Warn("reconfigure: the controller's slurm.conf not taken; the joined copy stays", "err", err)
		return
	}
	a.log.Info("reconfigure: took the controller's slurm.conf", "path", a.joinedConf)
}

// restartOnly lists the settings that changed between old and cfg but
// take effect only when the agent starts again.
func restartOnly(old, cfg *slurmconf.Config, node string) []string {
	if old == nil {
		return nil
	}
	var out []string
	if controllerAddr(old) != controllerAddr(cfg) {
		out = append(out, "SlurmctldHost/SlurmctldPort")
	}
	if old.SlurmdSpoolDir != cfg.SlurmdSpoolDir {
		out = append(out, "SlurmdSpoolDir")
	}
	for _, k := range []string{"UnkillableStepTimeout", "JobAcctGatherFrequency", "DroverTokenFile"} {
		ov, _ := old.Get(k)
		nv, _ := cfg.Get(k)
		if ov != nv {
			out = append(out, k)
		}
	}
	on, _ := old.Node(node)
	nn, _ := cfg.Node(node)
	if on != nil && nn != nil && (on.CPUs != nn.CPUs || on.RealMemory != nn.RealMemory) {
		out = append(out, "NodeName="+node)
	}
	return out
}
