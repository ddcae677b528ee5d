package slurmconf

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/hostlist"
)

// CgroupPathFor and GresPathFor name cgroup.conf and gres.conf beside a
// slurm.conf, where Slurm looks for them.
func CgroupPathFor(slurmConf string) string {
	return filepath.Join(filepath.Dir(slurmConf), "cgroup.conf")
}
func GresPathFor(slurmConf string) string { return filepath.Join(filepath.Dir(slurmConf), "gres.conf") }

// CgroupConf is a parsed cgroup.conf.
//
// Drover confines jobs by default: where Slurm defaults ConstrainCores,
// ConstrainRAMSpace, ConstrainSwapSpace and ConstrainDevices to "no", an
// absent cgroup.conf or key means "yes" here (with AllowedSwapSpace 0: no
// swap beyond the memory limit). An explicit "no" turns one off.
type CgroupConf struct {
	File       string
	Plugin     string // autodetect, cgroup/v1, cgroup/v2, disabled
	Mountpoint string

	ConstrainCores, ConstrainRAMSpace, ConstrainSwapSpace, ConstrainDevices bool

	AllowedRAMSpace, AllowedSwapSpace float64 // percent of the allocation
	MaxRAMPercent, MaxSwapPercent     float64 // percent of the node's memory
	MinRAMSpace                       int64   // MiB

	Warnings []string
}

// DefaultCgroupConf is the configuration without a cgroup.conf.
func DefaultCgroupConf() *CgroupConf {
	return &CgroupConf{Plugin: "autodetect", Mountpoint: "/sys/fs/cgroup",
		ConstrainCores: true, ConstrainRAMSpace: true, ConstrainSwapSpace: true, ConstrainDevices: true,
		AllowedRAMSpace: 100, AllowedSwapSpace: 0, MaxRAMPercent: 100, MaxSwapPercent: 100, MinRAMSpace: 30}
}

// cgroupKeys are the cgroup.conf keys Drover knows but does not act on.
var cgroupKeys = keySet(`CgroupAutomount CgroupReleaseAgentDir CgroupSlice EnableControllers IgnoreSystemd
IgnoreSystemdOnFailure MemorySwappiness SignalChildrenProcesses SystemdTimeout AllowedKmemSpace
ConstrainKmemSpace MaxKmemPercent MinKmemSpace`)

// LoadCgroup reads cgroup.conf; a missing file gives the defaults.
func LoadCgroup(path string) (*CgroupConf, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		c := DefaultCgroupConf()
		c.File = path
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseCgroup(f, path)
}

// ParseCgroup parses cgroup.conf text; errors name file:line.
func ParseCgroup(r io.Reader, name string) (*CgroupConf, error) {
	c := DefaultCgroupConf()
	c.File = name
	err := readLines(r, name, func(l logicalLine) error {
		pairs, err := splitPairs(l.text)
		if err != nil {
			return perr(name, l.num, err.Error())
		}
		for _, kv := range pairs {
			if err := c.set(name, l.num, kv); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (c *CgroupConf) set(file string, line int, kv pair) error {
	bad := func(want string) error {
		return perr(file, line, fmt.Sprintf("invalid %s %q: want %s", kv.key, kv.value, want))
	}
	yes := func(dst *bool) error {
		switch strings.ToLower(kv.value) {
		case "yes", "true", "1":
			*dst = true
		case "no", "false", "0":
			*dst = false
		default:
			return bad("yes or no")
		}
		return nil
	}
	pct := func(dst *float64) error {
		v, err := strconv.ParseFloat(strings.TrimSuffix(kv.value, "%"), 64)
		if err != nil || v < 0 || v > 1e6 {
			return bad("a percentage")
		}
		*dst = v
		return nil
	}
	switch strings.ToLower(kv.key) {
	case "cgroupplugin":
		switch v := strings.ToLower(kv.value); v {
		case "autodetect", "cgroup/v1", "cgroup/v2", "disabled":
			c.Plugin = v
		default:
			return bad("autodetect, cgroup/v1, cgroup/v2 or disabled")
		}
	case "cgroupmountpoint":
		c.Mountpoint = kv.value
	case "constraincores":
		return yes(&c.ConstrainCores)
	case "constrainramspace":
		return yes(&c.ConstrainRAMSpace)
	case "constrainswapspace":
		return yes(&c.ConstrainSwapSpace)
	case "constraindevices":
		return yes(&c.ConstrainDevices)
	case "allowedramspace":
		return pct(&c.AllowedRAMSpace)
	case "allowedswapspace":
		return pct(&c.AllowedSwapSpace)
	case "maxrampercent":
		return pct(&c.MaxRAMPercent)
	case "maxswappercent":
		return pct(&c.MaxSwapPercent)
	case "minramspace":
		n, err := parseInt(kv.value, 0, 1<<40)
		if err != nil {
			return bad("MiB")
		}
		c.MinRAMSpace = int64(n)
	default:
		if !cgroupKeys[strings.ToLower(kv.key)] {
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s:%d: unknown key %s ignored", file, line, kv.key))
		}
	}
	return nil
}

// MemLimit is the memory limit (and memory+swap limit) of a job holding
// allocMiB on a node of nodeMiB, in bytes, by cgroup.conf's rules: the
// allocation × AllowedRAMSpace%, capped at MaxRAMPercent of the node and
// raised to MinRAMSpace; swap adds allocation × AllowedSwapSpace%, capped
// at MaxSwapPercent of the node. 0, 0 when memory is not constrained.
func (c *CgroupConf) MemLimit(allocMiB, nodeMiB int64) (ram, memSwap int64) {
	if !c.ConstrainRAMSpace || allocMiB <= 0 {
		return 0, 0
	}
	const mib = 1 << 20
	a := float64(allocMiB) * mib
	ram = int64(a * c.AllowedRAMSpace / 100)
	if nodeMiB > 0 {
		ram = min(ram, int64(float64(nodeMiB)*mib*c.MaxRAMPercent/100))
	}
	ram = max(ram, c.MinRAMSpace*mib)
	if !c.ConstrainSwapSpace {
		return ram, 0
	}
	swap := int64(a * c.AllowedSwapSpace / 100)
	if nodeMiB > 0 {
		swap = min(swap, int64(float64(nodeMiB)*mib*c.MaxSwapPercent/100))
	}
	return ram, ram + swap
}

// GresConf is a parsed gres.conf.
type GresConf struct {
	File       string
	AutoDetect string // global AutoDetect, lower case; "" when unset
	Lines      []GresLine
}

// GresLine is one device line of gres.conf.
type GresLine struct {
	Nodes      []string // NodeName=, expanded; nil = every node
	Name, Type string
	Files      []string // File=, expanded in order
	Count      int64    // Count=, else the number of Files, else 1
	Cores      string
	Links      string
	Flags      []string
	AutoDetect string
	Pos        Pos
}

var gresKeys = keySet(`NodeName Name Type File Count Cores CoreSpecCount Links Flags MultipleFiles AutoDetect`)

// LoadGres reads gres.conf; a missing file is an empty configuration.
func LoadGres(path string) (*GresConf, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return &GresConf{File: path}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseGres(f, path)
}

// ParseGres parses gres.conf text; errors name file:line.
func ParseGres(r io.Reader, name string) (*GresConf, error) {
	g := &GresConf{File: name}
	err := readLines(r, name, func(l logicalLine) error {
		pairs, err := splitPairs(l.text)
		if err != nil {
			return perr(name, l.num, err.Error())
		}
		line := GresLine{Pos: Pos{File: name, Line: l.num}}
		bad := func(kv pair, want string) error {
			return perr(name, l.num, fmt.Sprintf("invalid %s %q: want %s", kv.key, kv.value, want))
		}
		for _, kv := range pairs {
			key := strings.ToLower(kv.key)
			if !gresKeys[key] {
				return perr(name, l.num, "unknown key "+kv.key)
			}
			switch key {
			case "nodename":
				nodes, err := hostlist.Expand(kv.value)
				if err != nil {
					return bad(kv, "a host list")
				}
				line.Nodes = nodes
			case "name":
				line.Name = kv.value
			case "type":
				line.Type = kv.value
			case "file", "multiplefiles":
				files, err := expandPaths(kv.value)
				if err != nil {
					return bad(kv, "device paths, e.g. /dev/nvidia[0-3]")
				}
				line.Files = append(line.Files, files...)
			case "count":
				n, err := parseGresCount(kv.value)
				if err != nil {
					return bad(kv, "a count (K, M, G suffixes allowed)")
				}
				line.Count = n
			case "cores":
				line.Cores = kv.value
			case "links":
				line.Links = kv.value
			case "flags":
				line.Flags = splitList(kv.value)
			case "autodetect":
				v := strings.ToLower(kv.value)
				switch v {
				case "nvml", "rsmi", "oneapi", "nrt", "nvidia", "off":
				default:
					return bad(kv, "nvml, rsmi, oneapi, nrt, nvidia or off")
				}
				line.AutoDetect = v
			}
		}
		if line.Name == "" {
			if line.AutoDetect != "" && line.Nodes == nil && line.Type == "" && len(line.Files) == 0 {
				g.AutoDetect = line.AutoDetect // a global AutoDetect line
				return nil
			}
			if line.AutoDetect == "" {
				return perr(name, l.num, "missing Name= (e.g. Name=gpu)")
			}
		}
		if len(line.Files) > 0 {
			if line.Count != 0 && line.Count != int64(len(line.Files)) {
				return perr(name, l.num, fmt.Sprintf("Count=%d disagrees with the %d File= devices", line.Count, len(line.Files)))
			}
			line.Count = int64(len(line.Files))
		}
		if line.Count == 0 && line.Name != "" {
			line.Count = 1
		}
		g.Lines = append(g.Lines, line)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return g, nil
}

func parseGresCount(v string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(v, "K"), strings.HasSuffix(v, "k"):
		mult = 1 << 10
	case strings.HasSuffix(v, "M"), strings.HasSuffix(v, "m"):
		mult = 1 << 20
	case strings.HasSuffix(v, "G"), strings.HasSuffix(v, "g"):
		mult = 1 << 30
	}
	if mult > 1 {
		v = v[:len(v)-1]
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > (1<<40)/mult {
		return 0, errors.New("bad count")
	}
	return n * mult, nil
}

// expandPaths expands "/dev/nvidia[0-3]" and comma lists of such.
func expandPaths(v string) ([]string, error) {
	out, err := hostlist.Expand(v)
	if err != nil {
		return nil, err
	}
	for _, p := range out {
		if !strings.HasPrefix(p, "/") {
			return nil, errors.New("not an absolute path: " + p)
		}
	}
	return out, nil
}

// ForNode returns the lines that apply to node, in file order, and the
// AutoDetect in effect there (a line naming the node wins over the
// global one).
func (g *GresConf) ForNode(node string) (lines []GresLine, autodetect string) {
	autodetect = g.AutoDetect
	for _, l := range g.Lines {
		if l.Nodes != nil && !hasString(l.Nodes, node) {
			continue
		}
		if l.AutoDetect != "" {
			autodetect = l.AutoDetect
		}
		if l.Name != "" {
			lines = append(lines, l)
		}
	}
	return lines, autodetect
}
