package cli

import (
	"slices"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/model"
)

// GresUsed renders what of a node's GRES is allocated, as Slurm 22.05's
// GresUsed (scontrol -d show node, sinfo -O gresused) does; "" when the
// node has no GRES. Which form depends on whether the node's GPUs are
// known as devices (a File each, from gres.conf or NVML; Slurm's "topo"
// records):
//
//   - devices known: one entry per GPU type, with the indices in use,
//     "gpu:a100:1(IDX:0),gpu:v100:0(IDX:N/A)"; an untyped GPU's type
//     prints as "(null)", as Slurm prints it;
//   - counts only: "gpu:2", or "gpu:a100:1,gpu:v100:0" per type.
//
// Other GRES names (Drover schedules only gpu) show 0 used.
func GresUsed(n *model.Node) string {
	items, err := model.ParseGres(n.Gres)
	if err != nil || len(items) == 0 {
		return ""
	}
	var parts []string
	seen := map[string]bool{}
	for _, it := range items {
		if seen[it.Name] {
			continue
		}
		seen[it.Name] = true
		if it.Name == "gpu" {
			parts = append(parts, gpusUsed(n, items)...)
			continue
		}
		for _, t := range gresTypes(items, it.Name) {
			if t == "" {
				parts = append(parts, it.Name+":0")
			} else {
				parts = append(parts, it.Name+":"+t+":0")
			}
		}
	}
	return strings.Join(parts, ",")
}

// gresTypes lists the types the items give name, in order; [""] when
// they give it none.
func gresTypes(items []model.GresItem, name string) []string {
	var out []string
	for _, it := range items {
		if it.Name == name && it.Type != "" && !slices.Contains(out, it.Type) {
			out = append(out, it.Type)
		}
	}
	if len(out) == 0 {
		return []string{""}
	}
	return out
}

// gpusUsed renders the gpu entries of GresUsed.
func gpusUsed(n *model.Node, items []model.GresItem) []string {
	devices := false
	for _, g := range n.GPUs {
		devices = devices || g.File != ""
	}
	var out []string
	if devices {
		var types []string
		used := map[string]model.Bitmap{}
		for _, g := range n.GPUs {
			if _, ok := used[g.Type]; !ok {
				types = append(types, g.Type)
				used[g.Type] = nil
			}
			if n.AllocGPUs.Has(g.Index) {
				used[g.Type] = used[g.Type].Or(model.BitmapOf(g.Index))
			}
		}
		for _, t := range types {
			b, idx := used[t], "N/A"
			if b.Count() > 0 {
				idx = b.String()
			}
			if t == "" {
				t = "(null)"
			}
			out = append(out, "gpu:"+t+":"+strconv.Itoa(b.Count())+"(IDX:"+idx+")")
		}
		return out
	}
	types := gresTypes(items, "gpu")
	if len(types) == 1 && types[0] == "" {
		return []string{"gpu:" + strconv.Itoa(n.AllocGPUs.Count())}
	}
	for _, t := range types {
		c := 0
		for _, g := range n.GPUs {
			if g.Type == t && n.AllocGPUs.Has(g.Index) {
				c++
			}
		}
		out = append(out, "gpu:"+t+":"+strconv.Itoa(c))
	}
	return out
}
