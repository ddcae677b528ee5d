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

	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/model"
)

// GresPathFor names the gres.conf beside a slurm.conf, where Slurm looks
// for it.
func GresPathFor(slurmConfPath string) string {
	return filepath.Join(filepath.Dir(slurmConfPath), "gres.conf")
}

// GresConf is a parsed gres.conf: how each node's generic resources (GPUs
// above all) map to device files, and whether they are auto-detected.
type GresConf struct {
	File string
	// AutoDetect is the global AutoDetect (a line of its own), lower
	// case; "" when unset.
	AutoDetect string
	// Lines are the resource lines in file order, and the lines that only
	// set AutoDetect for some nodes (Name "").
	Lines []GresLine
	// Warnings are non-fatal findings, each "file:line: message".
	Warnings []string
}

// GresLine is one line of gres.conf.
type GresLine struct {
	Nodes      []string // NodeName=, expanded; nil: every node
	Name, Type string   // Name "": a line that only sets AutoDetect for Nodes
	// Files are the device files (File= or MultipleFiles=), expanded in
	// order: /dev/nvidia[0-1] is /dev/nvidia0, /dev/nvidia1.
	Files []string
	// MultipleFiles: Files (MultipleFiles=) are one device, such as a MIG
	// slice; otherwise each file is one device.
	MultipleFiles bool
	// Count is the number of resources: Count= when given, else the
	// number of File= devices, else 1. For mps and shard lines with File=
	// it is the number of shares of those GPUs, as written.
	Count int64
	Cores string   // Cores=, as written (a core index list, "0-15,32-47")
	Links string   // Links=, as written
	Flags []string // Flags=, as written (CountOnly, nvidia_gpu_env, ...)
	// AutoDetect is the line's, lower case, for its Nodes; "" when it
	// sets none. Only NodeName= lines have one: on other lines AutoDetect
	// is global ahead of Name= and ignored (with a warning) after it, as
	// Slurm reads them.
	AutoDetect string
	Pos        Pos
}

// gresKeys are the keys of a gres.conf line; any other key is an error,
// as in Slurm.
var gresKeys = keySet(`AutoDetect Cores Count File Flags Links MultipleFiles Name NodeName Type`)

// gresFlags are the Flags= values gres.conf(5) documents, lower case.
var gresFlags = keySet(`CountOnly env_uuid explicit one_sharing all_sharing nvidia_gpu_env amd_gpu_env
intel_gpu_env opencl_env no_gpu_env`)

// gresAutoDetect are the AutoDetect= values: nvml, rsmi, oneapi, nrt and
// off, plus nvidia (Slurm 24.11) and full (Slurm 26.11).
var gresAutoDetect = keySet(`nvml nvidia rsmi oneapi nrt off full`)

// maxGresFiles is the most devices one line may name: Slurm limits Count
// to 1024 per node when File= is given.
const maxGresFiles = 1024

// LoadGres reads the gres.conf at path. A missing file is not an error: it
// gives an empty configuration (no GPUs unless slurm.conf says so).
func LoadGres(path string, opts ...Option) (*GresConf, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return &GresConf{File: path}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseGres(f, path, opts...)
}

// ParseGres parses gres.conf text read from r; name is used in messages and
// as the base of relative Include paths. Errors are *ParseError values
// naming file and line.
func ParseGres(r io.Reader, name string, opts ...Option) (*GresConf, error) {
	gp := &gresParser{g: &GresConf{File: name}, nodeAuto: map[string]autoAt{}}
	if err := readConf(r, name, opts, gp.line); err != nil {
		return nil, err
	}
	return gp.g, nil
}

type gresParser struct {
	g        *GresConf
	globalAt *Pos
	nodeAuto map[string]autoAt // node -> the AutoDetect a NodeName line gave it
}

type autoAt struct {
	value string
	pos   Pos
}

func (gp *gresParser) warnf(pos Pos, format string, args ...any) {
	gp.g.Warnings = append(gp.g.Warnings, pos.String()+": "+fmt.Sprintf(format, args...))
}

func (gp *gresParser) line(file string, l logicalLine) error {
	pos := Pos{file, l.num}
	fail := func(format string, args ...any) error {
		return perr(file, l.num, fmt.Sprintf(format, args...))
	}
	pairs, err := splitPairs(l.text)
	if err != nil {
		return fail("%s", err.Error())
	}
	line := GresLine{Pos: pos}
	seen := map[string]string{}
	var fileKey string
	autoFirst := false // AutoDetect came before Name
	for _, kv := range pairs {
		key := strings.ToLower(kv.key)
		if !gresKeys.has(key) {
			return fail("unknown key %q (gres.conf keys: NodeName, Name, Type, File, MultipleFiles, Count, Cores, Links, Flags, AutoDetect)", kv.key)
		}
		if _, dup := seen[key]; dup {
			// Slurm logs this and keeps the last value.
			gp.warnf(pos, "%s given more than once on the line; the last value counts", kv.key)
		}
		seen[key] = kv.value
		bad := func(want string) error {
			return fail("invalid %s %q: want %s", kv.key, kv.value, want)
		}
		switch key {
		case "nodename":
			nodes, err := hostlist.Expand(kv.value)
			if err != nil || len(nodes) == 0 {
				return bad("a host list such as gpu[01-04]")
			}
			line.Nodes = nodes
		case "name":
			if !validGresName(kv.value) {
				return bad("a resource name such as gpu, mps or shard")
			}
			line.Name = kv.value
		case "type":
			if !validGresName(kv.value) {
				return bad("a type name (letters, digits, '_', '-', '.')")
			}
			line.Type = kv.value
		case "file", "multiplefiles":
			if fileKey != "" && fileKey != key {
				return fail("File and MultipleFiles cannot be combined on one line")
			}
			fileKey = key
			files, err := expandPaths(kv.value)
			if err != nil {
				return bad(err.Error())
			}
			line.Files = files
			line.MultipleFiles = key == "multiplefiles"
		case "count":
			n, err := parseGresCount(kv.value)
			if err != nil {
				return bad("a number, with an optional K, M, G, T or P suffix")
			}
			line.Count = n
		case "cores":
			if !validCoreList(kv.value) {
				return bad("core indices such as 0-15,32-47")
			}
			line.Cores = kv.value
		case "links":
			if !validLinks(kv.value) {
				return bad("a comma list of link counts such as -1,2,0,0")
			}
			line.Links = kv.value
		case "flags":
			line.Flags = splitList(kv.value)
			gp.checkFlags(pos, line.Flags)
		case "autodetect":
			v := strings.ToLower(kv.value)
			if !gresAutoDetect.has(v) {
				return bad("nvml, nvidia, rsmi, oneapi, nrt, full or off")
			}
			line.AutoDetect = v
			_, afterName := seen["name"]
			autoFirst = !afterName
		}
	}
	if line.AutoDetect != "" && line.Nodes == nil && line.Name != "" {
		// Slurm reads an AutoDetect ahead of Name= on a line without
		// NodeName= as the global one, and ignores one after it.
		if autoFirst {
			gp.global(pos, line.AutoDetect)
		} else {
			gp.warnf(pos, "AutoDetect=%s ignored: on a Name= line it needs NodeName= (or a line of its own)", line.AutoDetect)
		}
		line.AutoDetect = ""
	}
	if line.Name == "" {
		devKeys := false
		for k := range seen {
			devKeys = devKeys || k != "nodename" && k != "autodetect"
		}
		switch {
		case line.AutoDetect == "" || devKeys:
			return fail("missing Name= (the resource, e.g. Name=gpu)")
		case line.Nodes == nil:
			// AutoDetect on a line of its own: the global default.
			gp.global(pos, line.AutoDetect)
			return nil
		}
	}
	_, countGiven := seen["count"]
	if err := gp.count(&line, countGiven); err != nil {
		return err
	}
	if line.AutoDetect != "" && line.Nodes != nil {
		if err := gp.nodeAutoDetect(&line); err != nil {
			return err
		}
	}
	gp.g.Lines = append(gp.g.Lines, line)
	return nil
}

// global sets the global AutoDetect; the last one given counts.
func (gp *gresParser) global(pos Pos, v string) {
	if gp.globalAt != nil && gp.g.AutoDetect != v {
		gp.warnf(pos, "AutoDetect=%s replaces AutoDetect=%s given at %s", v, gp.g.AutoDetect, gp.globalAt)
	}
	gp.g.AutoDetect, gp.globalAt = v, &pos
}

// count settles line.Count against its device files.
func (gp *gresParser) count(line *GresLine, given bool) error {
	fail := func(format string, args ...any) error {
		return perr(line.Pos.File, line.Pos.Line, fmt.Sprintf(format, args...))
	}
	n := int64(len(line.Files))
	devices := n
	switch {
	case line.Name == "":
	case line.MultipleFiles:
		// All the files are one device (a MIG slice).
		devices = 1
		if given && line.Count != 1 {
			return fail("Count=%d with MultipleFiles: the files are one device, so Count must be 1 or absent", line.Count)
		}
		line.Count = 1
	case n > 0 && isSharingGres(line.Name):
		// mps/shard: Count is how many shares the GPUs of File= offer.
		if !given {
			line.Count = n
		}
	case n > 0:
		if given && line.Count != n {
			return fail("Count=%d disagrees with the %d devices of File= (Slurm rejects this: Count must equal the number of files or be left out)", line.Count, n)
		}
		line.Count = n
	case !given:
		line.Count = 1
	}
	if line.Links != "" && devices > 1 {
		return fail("Links= applies to one device, but this line names %d", devices)
	}
	return nil
}

// nodeAutoDetect checks that a NodeName line's AutoDetect agrees with any
// earlier one for the same nodes: Slurm wants one value per node.
func (gp *gresParser) nodeAutoDetect(line *GresLine) error {
	for _, n := range line.Nodes {
		if prev, ok := gp.nodeAuto[n]; ok && prev.value != line.AutoDetect {
			return perr(line.Pos.File, line.Pos.Line, fmt.Sprintf(
				"AutoDetect=%s for node %s conflicts with AutoDetect=%s at %s (a node may have only one)",
				line.AutoDetect, n, prev.value, prev.pos))
		}
	}
	for _, n := range line.Nodes {
		gp.nodeAuto[n] = autoAt{line.AutoDetect, line.Pos}
	}
	return nil
}

func (gp *gresParser) checkFlags(pos Pos, flags []string) {
	env, noEnv := false, false
	for _, f := range flags {
		lf := strings.ToLower(f)
		switch {
		case !gresFlags.has(lf):
			gp.warnf(pos, "Flags: unknown flag %q", f)
		case lf == "no_gpu_env":
			noEnv = true
		case strings.HasSuffix(lf, "_env"):
			env = true
		}
	}
	if noEnv && env {
		gp.warnf(pos, "Flags: no_gpu_env cannot be combined with other *_env flags")
	}
}

// isSharingGres reports whether name is a GRES that shares GPUs (mps,
// shard), whose Count may differ from its number of device files.
func isSharingGres(name string) bool {
	return strings.EqualFold(name, "mps") || strings.EqualFold(name, "shard")
}

func validGresName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// validCoreList accepts "0-15,32-47", optionally in brackets.
func validCoreList(s string) bool {
	if inner, ok := strings.CutPrefix(s, "["); ok {
		if s, ok = strings.CutSuffix(inner, "]"); !ok {
			return false
		}
	}
	_, ok := model.ParseBitmap(s)
	return ok && s != ""
}

func validLinks(s string) bool {
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < -1 || n > 1<<20 {
			return false
		}
	}
	return true
}

// parseGresCount reads a Count: a number with an optional K, M, G, T or P
// suffix (powers of 1024).
func parseGresCount(v string) (int64, error) {
	shift := 0
	if n := len(v); n > 0 {
		switch v[n-1] {
		case 'k', 'K':
			shift = 10
		case 'm', 'M':
			shift = 20
		case 'g', 'G':
			shift = 30
		case 't', 'T':
			shift = 40
		case 'p', 'P':
			shift = 50
		}
		if shift > 0 {
			v = v[:n-1]
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64>>shift {
		return 0, errors.New("bad count")
	}
	return n << shift, nil
}

// expandPaths expands "/dev/nvidia[0-3]" and comma lists of such into
// absolute device paths, in order.
func expandPaths(v string) ([]string, error) {
	n, err := hostlist.Count(v)
	if err != nil {
		return nil, errors.New("device paths such as /dev/nvidia[0-3] (bad brackets)")
	}
	if n == 0 {
		return nil, errors.New("at least one device path")
	}
	if n > maxGresFiles {
		return nil, fmt.Errorf("at most %d devices per line (it names %d)", maxGresFiles, n)
	}
	out, err := hostlist.Expand(v)
	if err != nil {
		return nil, errors.New("device paths such as /dev/nvidia[0-3] (bad brackets)")
	}
	for _, p := range out {
		if !strings.HasPrefix(p, "/") {
			return nil, fmt.Errorf("absolute device paths (%s is relative)", p)
		}
	}
	return out, nil
}

// ForNode returns the resource lines (Name set) that apply to node, in file
// order, and the AutoDetect in effect there: that of a line applying to the
// node when one sets it (the last such), else the global one.
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
