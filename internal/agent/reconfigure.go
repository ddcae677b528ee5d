package agent

import (
	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/gres"
	"github.com/drover-hpc/drover/internal/slurmconf"
)

// reconfigure is the agent's part of scontrol reconfigure, as slurmd's:
// it reads gres.conf again and registers the GPUs it finds on the open
// stream, so the controller schedules the devices the node has now (an
// added GPU, one gone, a node short of GPUs whose devices came back). A
// gres.conf that cannot be read or names a missing device leaves the
// node's GPUs as they were, with a warning: the agent would not have
// started on it either.
func (a *Agent) reconfigure() {
	if a.iso == nil {
		return
	}
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
