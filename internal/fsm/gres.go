package fsm

import (
	"fmt"
	"strings"

	"github.com/drover-hpc/drover/internal/model"
)

// ReasonGresLow starts the drain reason of a node whose agent found fewer
// GPUs than slurm.conf declares (Slurm's wording).
const ReasonGresLow = "gres/gpu count reported lower than configured"

// registerGPUs takes the GPUs a node's agent found in place of the
// configured placeholders. The count and the types stay slurm.conf's: the
// devices fill them in order. A node that reports fewer GPUs than it is
// configured with is drained and marked InvalidReg, as Slurm 22.05 does:
// jobs would be given devices that do not exist, so no job goes there
// even if an administrator resumes it (Slurm refuses that resume), until
// a registration reports them all; that registration also lifts the
// drain if it was this one.
func registerGPUs(n *model.Node, found []model.GPU, now int64) {
	want := len(n.GPUs)
	if want == 0 {
		n.InvalidReg = false
		return // GPUs slurm.conf does not declare are not scheduled
	}
	if len(found) < want {
		n.InvalidReg = true
		if !n.Drain || n.Reason == "" {
			n.Drain = true
			n.Reason = fmt.Sprintf("%s (%d < %d)", ReasonGresLow, len(found), want)
			n.ReasonTime, n.ReasonUID = now, 0
		}
		return
	}
	gpus := make([]model.GPU, want)
	for i := range want {
		g := found[i]
		g.Index = i
		if t := n.GPUs[i].Type; t != "" {
			g.Type = t
		}
		gpus[i] = g
	}
	n.GPUs = gpus
	n.InvalidReg = false
	if n.Drain && strings.HasPrefix(n.Reason, ReasonGresLow) {
		n.Drain, n.Reason, n.ReasonTime, n.ReasonUID = false, "", 0, 0
	}
}
