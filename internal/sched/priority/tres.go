package priority

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/model"
)

// TRESWeight is one entry of PriorityWeightTRES or a partition's
// TRESBillingWeights: a TRES name in Slurm's lower-case spelling (cpu,
// mem, node, billing, gres/gpu, gres/gpu:a100, license/x) and its
// weight. A billing weight for mem is per MiB.
type TRESWeight struct {
	Name   string
	Weight float64
}

// MaxWeight is the largest weight Slurm's 32-bit priority can carry.
const MaxWeight = 1<<32 - 1

// ParseTRESWeights reads "CPU=1000,Mem=2000,GRES/gpu=3000". With
// memUnits (TRESBillingWeights) a mem weight may end in K, M, G, T or P:
// that much per KiB, MiB, GiB, TiB or PiB (per MiB without a suffix).
// Weights must be numbers from 0 to 2^32-1.
func ParseTRESWeights(s string, memUnits bool) ([]TRESWeight, error) {
	var out []TRESWeight
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, val, ok := strings.Cut(item, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("%q: want TRES=weight", item)
		}
		name = strings.ToLower(strings.TrimSpace(name))
		switch {
		case name == "cpu", name == "mem", name == "node", name == "billing", name == "energy",
			strings.HasPrefix(name, "gres/"), strings.HasPrefix(name, "license/"):
		default:
			return nil, fmt.Errorf("%q: unknown TRES %q", item, name)
		}
		per := 1.0
		if memUnits && name == "mem" && val != "" {
			if i := strings.IndexAny("KMGTP", strings.ToUpper(val[len(val)-1:])); i >= 0 {
				per = math.Pow(1024, float64(i-1))
				val = val[:len(val)-1]
			}
		}
		w, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil || math.IsNaN(w) || w < 0 || w > MaxWeight {
			return nil, fmt.Errorf("%q: the weight must be a number from 0 to %d", item, int64(MaxWeight))
		}
		out = append(out, TRESWeight{Name: name, Weight: w / per})
	}
	return out, nil
}

// TRES counts what a job asks for or holds: CPUs, memory in MiB, nodes
// and GPUs (of GPUType when the request names one; "*" in a partition's
// total, which counts its GPUs of every type).
type TRES struct {
	CPU, Mem, Node, GPU float64
	GPUType             string
}

// Get is the count of the named TRES (0 for one Drover does not count).
func (t *TRES) Get(name string) float64 {
	switch name {
	case "cpu", "billing":
		return t.CPU
	case "mem":
		return t.Mem
	case "node":
		return t.Node
	case "gres/gpu":
		return t.GPU
	}
	if typ, ok := strings.CutPrefix(name, "gres/gpu:"); ok && (typ == t.GPUType || t.GPUType == "*") {
		return t.GPU
	}
	return 0
}

// Add adds o's counts to t (a partition's total over its nodes).
func (t *TRES) Add(o TRES) {
	t.CPU += o.CPU
	t.Mem += o.Mem
	t.Node += o.Node
	t.GPU += o.GPU
}

// Requested is what spec asks for; nodeMem is the memory of a node of
// its partition, for a job that asks for all of it (--mem=0).
func Requested(spec *model.JobSpec, nodeMem float64) TRES {
	if spec == nil {
		return TRES{}
	}
	nodes := float64(max(1, spec.MinNodes))
	t := TRES{CPU: float64(requestedCPUs(spec)), Node: nodes}
	switch {
	case spec.MemPerNode > 0:
		t.Mem = float64(spec.MemPerNode) * nodes
	case spec.MemPerNode == 0:
		t.Mem = nodeMem * nodes
	case spec.MemPerCPU > 0:
		t.Mem = float64(spec.MemPerCPU) * t.CPU
	}
	if g := spec.GPUs; g.Any() {
		t.GPUType = g.Type
		switch {
		case g.PerNode > 0:
			t.GPU = float64(g.PerNode) * nodes
		case g.Total > 0:
			t.GPU = float64(g.Total)
		default:
			t.GPU = float64(g.PerTask * max(1, spec.NTasks))
		}
	}
	return t
}

// Allocated is what j holds on its nodes.
func Allocated(j *model.Job) TRES {
	t := TRES{Node: float64(len(j.Alloc))}
	for _, a := range j.Alloc {
		t.CPU += float64(a.CPUs)
		t.Mem += float64(a.Mem)
		t.GPU += float64(a.GPUs.Count())
	}
	if j.Spec != nil && j.Spec.GPUs != nil {
		t.GPUType = j.Spec.GPUs.Type
	}
	return t
}

// Billing is the TRES-billing value of t under a partition's
// TRESBillingWeights: the weighted sum, or with PriorityFlags=MAX_TRES
// the largest weighted node TRES (cpu, mem, node, GRES) plus the sum of
// the others. Without weights a job bills its CPUs, as in Slurm.
func Billing(t *TRES, weights []TRESWeight, maxTRES bool) float64 {
	if len(weights) == 0 {
		return t.CPU
	}
	sum, most := 0.0, 0.0
	for _, w := range weights {
		if w.Name == "billing" {
			continue
		}
		v := t.Get(w.Name) * w.Weight
		if maxTRES && (w.Name == "cpu" || w.Name == "mem" || w.Name == "node" || strings.HasPrefix(w.Name, "gres/")) {
			most = math.Max(most, v)
			continue
		}
		sum += v
	}
	return sum + most
}
