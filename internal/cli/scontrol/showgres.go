package scontrol

import (
	"fmt"
	"strings"

	"github.com/drover-hpc/drover/internal/model"
)

// jobGPUs is the job's GPU count for TRES=: what it holds once running,
// what it asks for before.
func jobGPUs(j *model.Job, spec *model.JobSpec, nodes int) int {
	if len(j.Alloc) > 0 {
		n := 0
		for _, a := range j.Alloc {
			n += a.GPUs.Count()
		}
		if n > 0 {
			return n
		}
	}
	g := spec.GPUs
	switch {
	case !g.Any():
		return 0
	case g.Total > 0:
		return g.Total
	case g.PerNode > 0:
		return g.PerNode * max(1, nodes)
	}
	return g.PerTask * max(1, spec.NTasks)
}

// allocDetail is scontrol -d's per-node block: which CPUs, memory and
// GPUs (by index) the job holds on each node.
func allocDetail(j *model.Job, le string) string {
	var b strings.Builder
	jobGres := "(null)"
	if n := jobGPUs(j, j.Spec, len(j.Alloc)); n > 0 {
		jobGres = fmt.Sprintf("gpu:%d", n)
	}
	fmt.Fprintf(&b, "JOB_GRES=%s%s", jobGres, le)
	for _, a := range j.Alloc {
		gres := ""
		if a.GPUs.Count() > 0 {
			gres = fmt.Sprintf("gpu:%d(IDX:%s)", a.GPUs.Count(), a.GPUs)
		}
		fmt.Fprintf(&b, "  Nodes=%s CPU_IDs=%s Mem=%d GRES=%s%s", a.Node, a.CPUIDs, a.Mem, gres, le)
	}
	return b.String()
}
