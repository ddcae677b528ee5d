package up

import (
	"fmt"
	"os"
	"strings"

	"github.com/drover-hpc/drover/internal/gres"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/slurmconf"
)

// detectGPUs asks NVIDIA's library for this machine's GPUs, so that a lab's
// GPU box comes up with its GPUs schedulable (--gres=gpu:N) and confined
// without anyone writing gres.conf. No library, no driver or a build
// without cgo is no GPU: a CPU machine comes up as before.
func detectGPUs(nv gres.NVML) []model.GPU {
	gpus, _, err := gres.Discover("", &slurmconf.GresConf{AutoDetect: "nvml"}, nv)
	if err != nil {
		return nil
	}
	var out []model.GPU
	for _, g := range gpus {
		// A MIG slice (no device numbers) cannot be confined: leave it
		// to an admin's gres.conf.
		if g.File != "" && g.Major >= 0 {
			out = append(out, g)
		}
	}
	return out
}

// splitGPUs deals gpus to nodes virtual nodes in index order, the first
// nodes taking one more when they do not divide evenly.
func splitGPUs(gpus []model.GPU, nodes int) [][]model.GPU {
	out := make([][]model.GPU, nodes)
	per, extra := len(gpus)/nodes, len(gpus)%nodes
	at := 0
	for i := range out {
		n := per
		if i < extra {
			n++
		}
		out[i] = gpus[at : at+n]
		at += n
	}
	return out
}

// gresOf is a node's Gres= value for its GPUs: gpu:TYPE:N per type, in
// first-seen order ("" for none).
func gresOf(gpus []model.GPU) string {
	var order []string
	count := map[string]int{}
	for _, g := range gpus {
		if count[g.Type] == 0 {
			order = append(order, g.Type)
		}
		count[g.Type]++
	}
	items := make([]string, 0, len(order))
	for _, t := range order {
		if t == "" {
			items = append(items, fmt.Sprintf("gpu:%d", count[t]))
		} else {
			items = append(items, fmt.Sprintf("gpu:%s:%d", t, count[t]))
		}
	}
	return strings.Join(items, ",")
}

// writeGresConf names each node's GPUs by device file, so that virtual
// nodes of one machine each confine their own share.
func writeGresConf(path string, names []string, per [][]model.GPU) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by `drover up` from the GPUs NVML found; edit and restart to change.\n")
	for i, gpus := range per {
		for _, g := range gpus {
			typ := ""
			if g.Type != "" {
				typ = " Type=" + g.Type
			}
			fmt.Fprintf(&b, "NodeName=%s Name=gpu%s File=%s\n", names[i], typ, g.File)
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
