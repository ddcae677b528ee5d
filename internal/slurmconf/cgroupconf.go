package slurmconf

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CgroupPathFor names the cgroup.conf beside a slurm.conf, where Slurm
// looks for it.
func CgroupPathFor(slurmConfPath string) string {
	return filepath.Join(filepath.Dir(slurmConfPath), "cgroup.conf")
}

// CgroupConf is a parsed cgroup.conf.
//
// Drover confines jobs by default. Slurm defaults ConstrainCores,
// ConstrainRAMSpace, ConstrainSwapSpace and ConstrainDevices to "no"
// (cgroup.conf(5)); in Drover an absent cgroup.conf, or an absent key,
// means "yes". With AllowedSwapSpace at its default of 0 the swap
// constraint means no swap beyond the memory limit. An explicit "no" turns
// a constraint off.
type CgroupConf struct {
	File       string
	Plugin     string // autodetect, cgroup/v1, cgroup/v2 or disabled, lower case
	Mountpoint string

	ConstrainCores, ConstrainRAMSpace, ConstrainSwapSpace, ConstrainDevices bool

	AllowedRAMSpace, AllowedSwapSpace float64 // percent of the job's allocated memory
	MaxRAMPercent, MaxSwapPercent     float64 // percent of the node's RealMemory
	MinRAMSpace                       int64   // MiB

	// Warnings are non-fatal findings, each "file:line: message".
	Warnings []string
}

// Slurm's cgroup.conf defaults for the keys Drover types (the Constrain*
// keys excepted: see CgroupConf).
const (
	DefaultCgroupPlugin     = "autodetect"
	DefaultCgroupMountpoint = "/sys/fs/cgroup"
	DefaultAllowedRAMSpace  = 100
	DefaultAllowedSwapSpace = 0
	DefaultMaxRAMPercent    = 100
	DefaultMaxSwapPercent   = 100
	DefaultMinRAMSpace      = 30 // MiB
)

// DefaultCgroupConf is the configuration without a cgroup.conf: Slurm's
// defaults, with every constraint on.
func DefaultCgroupConf() *CgroupConf {
	return &CgroupConf{
		Plugin:     DefaultCgroupPlugin,
		Mountpoint: DefaultCgroupMountpoint,

		ConstrainCores: true, ConstrainRAMSpace: true, ConstrainSwapSpace: true, ConstrainDevices: true,

		AllowedRAMSpace:  DefaultAllowedRAMSpace,
		AllowedSwapSpace: DefaultAllowedSwapSpace,
		MaxRAMPercent:    DefaultMaxRAMPercent,
		MaxSwapPercent:   DefaultMaxSwapPercent,
		MinRAMSpace:      DefaultMinRAMSpace,
	}
}

// cgroupKeys are cgroup.conf keys Drover knows but does not act on, among
// them retired ones still found in old files. Anything else is warned
// about: cgroup.conf has many keys, so an unknown one is not fatal.
var cgroupKeys = keySet(`
AllowedDevicesFile AllowedKmemSpace CgroupAutomount CgroupJobIdPaths CgroupReleaseAgentDir
CgroupSlice ConstrainKmemSpace EnableControllers EnableExtraControllers IgnoreSystemd
IgnoreSystemdOnFailure MaxKmemPercent MemorySwappiness MinKmemSpace SignalChildrenProcesses
SystemdTimeout TaskAffinity
`)

// LoadCgroup reads the cgroup.conf at path. A missing file is not an
// error: it gives DefaultCgroupConf.
func LoadCgroup(path string, opts ...Option) (*CgroupConf, error) {
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
	return ParseCgroup(f, path, opts...)
}

// ParseCgroup parses cgroup.conf text read from r; name is used in
// messages and as the base of relative Include paths. Errors are
// *ParseError values naming file and line.
func ParseCgroup(r io.Reader, name string, opts ...Option) (*CgroupConf, error) {
	c := DefaultCgroupConf()
	c.File = name
	err := readConf(r, name, opts, func(file string, l logicalLine) error {
		pairs, err := splitPairs(l.text)
		if err != nil {
			return perr(file, l.num, err.Error())
		}
		for _, kv := range pairs {
			if err := c.set(Pos{file, l.num}, kv); err != nil {
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

func (c *CgroupConf) set(pos Pos, kv pair) error {
	bad := func(want string) error {
		return perr(pos.File, pos.Line, fmt.Sprintf("invalid %s %q: want %s", kv.key, kv.value, want))
	}
	yes := func(dst *bool) error {
		b, ok := parseYesNo(kv.value)
		if !ok {
			return bad("yes or no")
		}
		*dst = b
		return nil
	}
	pct := func(dst *float64) error {
		v, err := strconv.ParseFloat(strings.TrimSuffix(kv.value, "%"), 64)
		if err != nil || math.IsNaN(v) || v < 0 || v > 1e6 {
			return bad("a percentage (a number such as 100 or 101.5)")
		}
		*dst = v
		return nil
	}
	switch key := strings.ToLower(kv.key); key {
	case "cgroupplugin":
		switch v := strings.ToLower(kv.value); v {
		case "autodetect", "cgroup/v1", "cgroup/v2", "disabled":
			c.Plugin = v
		default:
			return bad("autodetect, cgroup/v1, cgroup/v2 or disabled")
		}
	case "cgroupmountpoint":
		if !strings.HasPrefix(kv.value, "/") {
			return bad("an absolute path")
		}
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
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSuffix(kv.value, "M"), "m"), 10, 64)
		if err != nil || n < 0 || n > 1<<40 {
			return bad("a size in MiB")
		}
		c.MinRAMSpace = n
	default:
		if !cgroupKeys.has(key) {
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s: unknown key %q ignored", pos, kv.key))
		}
	}
	return nil
}

// parseYesNo reads a cgroup.conf boolean.
func parseYesNo(v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "yes", "true", "1":
		return true, true
	case "no", "false", "0":
		return false, true
	}
	return false, false
}

// MemLimit is the memory limit and the memory+swap limit, in bytes, of a
// job (or step) allocated allocMiB on a node of nodeMiB (its RealMemory),
// by cgroup.conf(5)'s rules as slurmstepd applies them:
//
//   - RAM: allocMiB × AllowedRAMSpace%, at most nodeMiB × MaxRAMPercent%;
//   - RAM+swap: the RAM limit plus allocMiB × AllowedSwapSpace%, at most
//     nodeMiB × (MaxRAMPercent + MaxSwapPercent)%;
//   - neither below MinRAMSpace, which wins over the caps.
//
// nodeMiB <= 0 (unknown) applies no cap. swapBytes is 0 (no RAM+swap
// limit) when ConstrainSwapSpace is off, and never below ramBytes. Both
// are 0 when ConstrainRAMSpace is off or allocMiB <= 0 (no memory
// allocated). Slurm differs in two corners: with ConstrainRAMSpace=no but
// ConstrainSwapSpace=yes it sets the RAM limit to the RAM+swap one, and a
// job without allocated memory gets the node's; Drover leaves memory
// unconstrained there, since its swap constraint is on by default.
func (c *CgroupConf) MemLimit(allocMiB, nodeMiB int64) (ramBytes, swapBytes int64) {
	if !c.ConstrainRAMSpace || allocMiB <= 0 {
		return 0, 0
	}
	const mib = 1 << 20
	alloc := float64(allocMiB) * mib
	floor := float64(c.MinRAMSpace) * mib
	ramCap, swapCap := math.Inf(1), math.Inf(1)
	if nodeMiB > 0 {
		node := float64(nodeMiB) * mib
		ramCap = node * c.MaxRAMPercent / 100
		swapCap = ramCap + node*c.MaxSwapPercent/100
	}
	ram := clampMem(alloc*c.AllowedRAMSpace/100, floor, ramCap)
	if !c.ConstrainSwapSpace {
		return memBytes(ram), 0
	}
	swap := max(clampMem(ram+alloc*c.AllowedSwapSpace/100, floor, swapCap), ram)
	return memBytes(ram), memBytes(swap)
}

// clampMem bounds v by hi, then raises it to lo: the floor wins.
func clampMem(v, lo, hi float64) float64 {
	return max(min(v, hi), lo)
}

// memBytes rounds a limit down to whole bytes, saturating at MaxInt64.
func memBytes(v float64) int64 {
	if v >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(v)
}
