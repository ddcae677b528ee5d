package model

import (
	"errors"
	"strconv"
	"strings"
)

// GPU is one GPU of a node. Index is its GRES index: the position in the
// node's GPU list, which is what jobs are given and what SLURM_JOB_GPUS and
// CUDA_VISIBLE_DEVICES name.
type GPU struct {
	Index int    `json:"index"`
	Type  string `json:"type,omitempty"` // "a100"; "" when untyped
	File  string `json:"file,omitempty"` // device file, /dev/nvidia0
	// Major/Minor of File, for the devices cgroup; -1 when unknown.
	Major int64 `json:"major"`
	Minor int64 `json:"minor"`
}

// GresItem is one entry of a Gres= list: name[:type]:count.
type GresItem struct {
	Name  string `json:"name"`
	Type  string `json:"type,omitempty"`
	Count int    `json:"count"`
}

// String renders the item as slurm.conf writes it.
func (g GresItem) String() string {
	s := g.Name
	if g.Type != "" {
		s += ":" + g.Type
	}
	return s + ":" + strconv.Itoa(g.Count)
}

// ErrGresSyntax reports a malformed Gres= value.
var ErrGresSyntax = errors.New("invalid generic resource (gres) specification")

// ParseGres reads a node's Gres= value ("gpu:a100:4,gpu:v100:2", "gpu:2",
// "gpu" meaning 1). Counts take K/M/G suffixes (Slurm allows them for
// counters such as mps). "(null)" and "" are empty.
func ParseGres(s string) ([]GresItem, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "(null)" {
		return nil, nil
	}
	var out []GresItem
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		// Slurm allows a trailing "(S:0-1)" socket binding on a count;
		// it has no meaning here.
		if i := strings.IndexByte(item, '('); i >= 0 && strings.HasSuffix(item, ")") {
			item = item[:i]
		}
		f := strings.Split(item, ":")
		g := GresItem{Name: f[0], Count: 1}
		if g.Name == "" || len(f) > 3 {
			return nil, ErrGresSyntax
		}
		if len(f) > 1 {
			last := f[len(f)-1]
			n, err := parseCount(last)
			numeric := last != "" && (last[0] == '-' || last[0] >= '0' && last[0] <= '9')
			switch {
			case err == nil:
				g.Count = n
				if len(f) == 3 {
					g.Type = f[1]
				}
			case len(f) == 2 && !numeric: // gpu:a100 = one of that type
				g.Type = f[1]
			default:
				return nil, ErrGresSyntax
			}
		}
		if g.Count < 0 || (g.Type != "" && !validGresWord(g.Type)) || !validGresWord(g.Name) {
			return nil, ErrGresSyntax
		}
		out = append(out, g)
	}
	return out, nil
}

func validGresWord(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

func parseCount(s string) (int, error) {
	mult := 1
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'k', 'K':
			mult, s = 1<<10, s[:n-1]
		case 'm', 'M':
			mult, s = 1<<20, s[:n-1]
		case 'g', 'G':
			mult, s = 1<<30, s[:n-1]
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > (1<<31-1)/mult {
		return 0, ErrGresSyntax
	}
	return n * mult, nil
}

// GPUCount is how many GPUs a Gres list declares (of type typ, or any when
// typ is "").
func GPUCount(items []GresItem, typ string) int {
	n := 0
	for _, g := range items {
		if g.Name == "gpu" && (typ == "" || g.Type == typ) {
			n += g.Count
		}
	}
	return n
}

// GPUReq is a job's (or step's) GPU request after the options were merged.
// At most one of PerNode, Total, PerTask is set (the last given wins, as
// Slurm keeps one TRES-per-x request for gpu).
type GPUReq struct {
	Type    string `json:"type,omitempty"`
	PerNode int    `json:"per_node,omitempty"` // --gres=gpu:N, --gpus-per-node
	Total   int    `json:"total,omitempty"`    // -G/--gpus
	PerTask int    `json:"per_task,omitempty"` // --gpus-per-task
	// CPUsPerGPU and MemPerGPU (MiB) size CPUs and memory by the GPUs a
	// node gets (--cpus-per-gpu, --mem-per-gpu).
	CPUsPerGPU int   `json:"cpus_per_gpu,omitempty"`
	MemPerGPU  int64 `json:"mem_per_gpu,omitempty"`
}

// Any reports whether GPUs are requested at all.
func (r *GPUReq) Any() bool { return r != nil && (r.PerNode > 0 || r.Total > 0 || r.PerTask > 0) }

// TRES renders the request as Slurm 22.05 shows it (TresPerNode
// "gres:gpu:a100:2", TresPerJob "gres:gpu:4", TresPerTask "gres:gpu:1"):
// which key and value.
func (r *GPUReq) TRES() (key, val string) {
	if !r.Any() {
		return "", ""
	}
	name := "gres:gpu"
	if r.Type != "" {
		name += ":" + r.Type
	}
	switch {
	case r.PerNode > 0:
		return "TresPerNode", name + ":" + strconv.Itoa(r.PerNode)
	case r.Total > 0:
		return "TresPerJob", name + ":" + strconv.Itoa(r.Total)
	default:
		return "TresPerTask", name + ":" + strconv.Itoa(r.PerTask)
	}
}
