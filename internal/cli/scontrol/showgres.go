package scontrol

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/model"
)

// jobGPUs is the job's GPU count for TRES=: what it holds once running,
// what it asks for before.
func jobGPUs(j *model.Job, spec *model.JobSpec, nodes int) int {
	n := 0
	for _, a := range j.Alloc {
		n += a.GPUs.Count()
	}
	if n > 0 {
		return n
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

// gpuName is the GRES name the job's GPUs go by in its details: "gpu",
// or "gpu:TYPE" when the job asked for a type (Slurm names them by the
// request, not by the node's types).
func gpuName(spec *model.JobSpec) string {
	if spec != nil && spec.GPUs != nil && spec.GPUs.Type != "" {
		return "gpu:" + spec.GPUs.Type
	}
	return "gpu"
}

// allocDetail is scontrol -d's block for a job holding resources:
// JOB_GRES (the GPUs it holds in all, "(null)" without) and one line per
// run of consecutive nodes given the same CPU ids, memory and GPU
// indices, as in
//
//	JOB_GRES=gpu:a100:4
//	  Nodes=n[1-2] CPU_IDs=0-1 Mem=1024 GRES=gpu:a100:2(IDX:0-1)
func allocDetail(j *model.Job, le string) string {
	var b strings.Builder
	name := gpuName(j.Spec)
	total := 0
	for _, a := range j.Alloc {
		total += a.GPUs.Count()
	}
	jobGres := "(null)"
	if total > 0 {
		jobGres = name + ":" + strconv.Itoa(total)
	}
	fmt.Fprintf(&b, "JOB_GRES=%s%s", jobGres, le)
	type group struct {
		nodes           []string
		cpus, mem, gres string
	}
	var groups []group
	for _, a := range j.Alloc {
		gres := ""
		if n := a.GPUs.Count(); n > 0 {
			gres = fmt.Sprintf("%s:%d(IDX:%s)", name, n, a.GPUs)
		}
		cur := group{nodes: []string{a.Node}, cpus: a.CPUIDs.String(), mem: strconv.FormatInt(a.Mem, 10), gres: gres}
		if k := len(groups) - 1; k >= 0 && groups[k].cpus == cur.cpus && groups[k].mem == cur.mem && groups[k].gres == cur.gres {
			groups[k].nodes = append(groups[k].nodes, a.Node)
			continue
		}
		groups = append(groups, cur)
	}
	for _, g := range groups {
		fmt.Fprintf(&b, "  Nodes=%s CPU_IDs=%s Mem=%s GRES=%s%s", hostlist.Compress(g.nodes), g.cpus, g.mem, g.gres, le)
	}
	return b.String()
}

// gpuLines are the optional lines of a job (or step) record that repeat
// its GPU request, in Slurm's order: CpusPerTres, MemPerTres, then the
// TresPerJob / TresPerNode / TresPerTask it was given as.
func gpuLines(g *model.GPUReq) []string {
	key, val := g.TRES()
	if key == "" {
		return nil
	}
	var out []string
	if g.CPUsPerGPU > 0 {
		out = append(out, "CpusPerTres=gres:gpu:"+strconv.Itoa(g.CPUsPerGPU))
	}
	if g.MemPerGPU > 0 {
		out = append(out, "MemPerTres=gres:gpu:"+strconv.FormatInt(g.MemPerGPU, 10))
	}
	return append(out, key+"="+val)
}
