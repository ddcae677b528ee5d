package gres

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/slurmconf"
)

// NVML is the part of NVIDIA's management library Drover uses, behind an
// interface so that discovery is tested without a GPU.
type NVML interface {
	Init() error
	Shutdown() error
	DeviceCount() (int, error)
	Device(i int) (NVMLDevice, error)
}

// NVMLDevice is what discovery needs of one GPU.
type NVMLDevice struct {
	Name        string // product name, "NVIDIA H100 80GB HBM3"
	UUID        string
	Minor       int // /dev/nvidia<Minor>
	MemoryBytes uint64
}

// ErrNoNVML: NVIDIA's library cannot be used on this machine: it is not
// installed, its driver is not loaded, or this binary was built without
// cgo. Errors that say so match it with errors.Is.
var ErrNoNVML = errors.New("NVML library not available")

// nvidiaMajor is the character major of /dev/nvidia<N>.
const nvidiaMajor = 195

// Discover lists node's GPUs in GRES index order, with warnings (the
// gres.conf warnings first) about what it could not do.
//
// Without auto-detection, the gres.conf Name=gpu lines for node give the
// GPUs, device file by device file in file order, each stat'ed for its
// character device numbers: a File that is missing or not a character
// device is an error naming it and its line.
//
// AutoDetect=nvml (or full), globally or for the node, asks NVML:
// its GPUs come ordered by minor number, File /dev/nvidia<minor>, typed
// after the product name as Slurm does (TypeName). AutoDetect=nvidia reads
// the driver's /proc/driver/nvidia/gpus instead (no library needed, as in
// Slurm 24.11), falling back to NVML. Detected GPUs win over File= lines,
// which then only name types: a line whose File is a detected GPU's gives
// it its Type, and a typed line without File gives its Type to up to Count
// detected GPUs whose product type contains it (Slurm wants a configured
// Type to be a substring of the detected one). File lines naming no
// detected GPU are ignored with a warning. When detection is impossible
// (no library: "AutoDetect=nvml: NVML library not found") or fails,
// Discover warns and uses the File= lines. AutoDetect=rsmi, oneapi and nrt
// are not supported: File= lines, with a warning.
//
// A MultipleFiles= line (a MIG slice) is one GPU, File its first file,
// with Major and Minor -1: Drover does not confine MIG slices, and says so.
func Discover(node string, conf *slurmconf.GresConf, nv NVML) ([]model.GPU, []string, error) {
	warns := append([]string(nil), conf.Warnings...)
	lines, auto := conf.ForNode(node)
	var gpuLines []slurmconf.GresLine
	for _, l := range lines {
		if strings.EqualFold(l.Name, "gpu") {
			gpuLines = append(gpuLines, l)
		}
	}
	var found []model.GPU
	var err error
	switch auto {
	case "nvml", "full":
		found, err = fromNVML(nv)
	case "nvidia":
		if found, err = fromProc(procNvidiaGPUs); errors.Is(err, errNoProc) {
			found, err = fromNVML(nv)
		}
	case "rsmi", "oneapi", "nrt":
		warns = append(warns, "AutoDetect="+auto+" is not supported by Drover; using gres.conf File= lines")
	}
	switch {
	case auto != "nvml" && auto != "full" && auto != "nvidia":
	case auto == "full" && (errors.Is(err, ErrNoNVML) || err == nil && len(found) == 0):
		// "full" tries what it can; nothing found is no surprise.
	case errors.Is(err, ErrNoNVML):
		why := ""
		if err != ErrNoNVML {
			why = " (" + err.Error() + ")"
		}
		warns = append(warns, "AutoDetect="+auto+": NVML library not found"+why+"; using gres.conf File= lines")
	case err != nil:
		warns = append(warns, "AutoDetect="+auto+": "+err.Error()+"; using gres.conf File= lines")
	default:
		return index(typeDetected(found, gpuLines, &warns)), warns, nil
	}
	gpus, err := fromFiles(gpuLines, &warns)
	if err != nil {
		return nil, warns, err
	}
	return index(gpus), warns, nil
}

// fromFiles turns Name=gpu lines into GPUs, one per device file.
func fromFiles(lines []slurmconf.GresLine, warns *[]string) ([]model.GPU, error) {
	var out []model.GPU
	for _, l := range lines {
		for _, f := range l.Files {
			major, minor, err := charDevice(f)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", l.Pos, err)
			}
			if !l.MultipleFiles {
				out = append(out, model.GPU{Type: l.Type, File: f, Major: major, Minor: minor})
			}
		}
		switch {
		case l.MultipleFiles:
			out = append(out, model.GPU{Type: l.Type, File: l.Files[0], Major: -1, Minor: -1})
			*warns = append(*warns, fmt.Sprintf("%s: MultipleFiles=%s is one GPU (a MIG slice) that Drover does not confine: its files stay open to every job",
				l.Pos, strings.Join(l.Files, ",")))
		case len(l.Files) == 0 && l.Count > 0:
			*warns = append(*warns, fmt.Sprintf("%s: Name=gpu without File= (Count=%d): Drover cannot hand these GPUs to jobs; name their device files or use AutoDetect",
				l.Pos, l.Count))
		}
	}
	return out, nil
}

// typeDetected applies the gres.conf types to detected GPUs (see Discover).
func typeDetected(found []model.GPU, lines []slurmconf.GresLine, warns *[]string) []model.GPU {
	byFile := map[string]int{}
	for i, g := range found {
		byFile[g.File] = i
	}
	configured := make([]bool, len(found))
	for _, l := range lines {
		if len(l.Files) == 0 {
			continue
		}
		for _, f := range l.Files {
			i, ok := byFile[f]
			if !ok {
				if !l.MultipleFiles {
					*warns = append(*warns, fmt.Sprintf("%s: File=%s is not among the GPUs auto-detection found; line ignored", l.Pos, f))
				}
				continue
			}
			if l.Type != "" && !configured[i] {
				if !strings.Contains(found[i].Type, strings.ToLower(l.Type)) {
					*warns = append(*warns, fmt.Sprintf("%s: Type=%s for %s, which was detected as %s", l.Pos, l.Type, f, found[i].Type))
				}
				found[i].Type, configured[i] = l.Type, true
			}
		}
	}
	for _, l := range lines {
		if len(l.Files) > 0 || l.Type == "" {
			continue
		}
		left := l.Count
		for i := range found {
			if left > 0 && !configured[i] && strings.Contains(found[i].Type, strings.ToLower(l.Type)) {
				found[i].Type, configured[i] = l.Type, true
				left--
			}
		}
	}
	return found
}

func index(gs []model.GPU) []model.GPU {
	for i := range gs {
		gs[i].Index = i
	}
	return gs
}

// charDevice returns the device numbers of the character device at path.
func charDevice(path string) (major, minor int64, err error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, 0, fmt.Errorf("GPU device %s: %w", path, err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFCHR {
		return 0, 0, fmt.Errorf("GPU device %s is not a character device", path)
	}
	rdev := uint64(st.Rdev)
	major = int64((rdev >> 8 & 0xfff) | (rdev >> 32 & ^uint64(0xfff)))
	minor = int64((rdev & 0xff) | (rdev >> 12 & ^uint64(0xff)))
	return major, minor, nil
}

// fromNVML lists the GPUs NVML sees, by minor number.
func fromNVML(nv NVML) ([]model.GPU, error) {
	if nv == nil {
		return nil, ErrNoNVML
	}
	if err := nv.Init(); err != nil {
		return nil, err
	}
	defer nv.Shutdown()
	n, err := nv.DeviceCount()
	if err != nil {
		return nil, err
	}
	var out []model.GPU
	for i := range n {
		d, err := nv.Device(i)
		if err != nil {
			return nil, err
		}
		out = append(out, nvidiaGPU(d.Name, d.Minor))
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Minor < out[b].Minor })
	return out, nil
}

// nvidiaGPU is the NVIDIA GPU with the given product name and minor
// number: /dev/nvidia<minor>, with the numbers stat finds there (the
// usual 195:minor when the file is missing, as in a container).
func nvidiaGPU(product string, minor int) model.GPU {
	file := "/dev/nvidia" + strconv.Itoa(minor)
	g := model.GPU{Type: TypeName(product), File: file, Major: nvidiaMajor, Minor: int64(minor)}
	if major, min, err := charDevice(file); err == nil {
		g.Major, g.Minor = major, min
	}
	return g
}

// TypeName turns a product name into a GRES type as Slurm's AutoDetect
// does: lower case, blanks replaced by underscores ("NVIDIA A100-SXM4-40GB"
// → "nvidia_a100-sxm4-40gb").
func TypeName(product string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(product)), " ", "_")
}

// Env is what a job (or, with step, a step) sees of its GPUs on this
// node, as "K=V" strings in sorted order:
//
//   - SLURM_JOB_GPUS (a job) or SLURM_STEP_GPUS (a step): the allocated
//     GRES indices, "0,2";
//   - SLURM_GPUS_ON_NODE: how many;
//   - CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES and GPU_DEVICE_ORDINAL:
//     the device ordinals the GPU runtimes should use.
//
// The ordinals follow Slurm: with devices constrained (task/cgroup and
// ConstrainDevices=yes) the process can open only its own GPUs, which the
// runtime numbers from 0, so they are local, "0,1" for GRES indices 1 and
// 2, in the batch step as in other steps; unconstrained, they are the
// GRES indices. (A prolog or epilog runs outside the job's cgroup: it
// takes constrained=false.) Slurm unsets the variables of a job or step
// without GPUs here; Env sets them empty instead, so that no inherited
// CUDA_VISIBLE_DEVICES points at another job's GPU.
func Env(gpus []model.GPU, alloc model.Bitmap, step bool, constrained bool) []string {
	return EnvIn(gpus, alloc, alloc, step, constrained)
}

// EnvIn is Env for a task that uses alloc out of the visible GPUs its
// cgroup lets it open (--gpus-per-task binds each task to its own): the
// local ordinals count within visible.
func EnvIn(gpus []model.GPU, visible, alloc model.Bitmap, step, constrained bool) []string {
	var global, local []string
	n := 0
	for _, id := range alloc.IDs() {
		if id < len(gpus) {
			global = append(global, strconv.Itoa(id))
			pos := 0
			for _, v := range visible.IDs() {
				if v < id {
					pos++
				}
			}
			local = append(local, strconv.Itoa(pos))
			n++
		}
	}
	ordinals := strings.Join(global, ",")
	if constrained {
		ordinals = strings.Join(local, ",")
	}
	idsVar := "SLURM_JOB_GPUS"
	if step {
		idsVar = "SLURM_STEP_GPUS"
	}
	env := []string{
		"CUDA_VISIBLE_DEVICES=" + ordinals,
		"GPU_DEVICE_ORDINAL=" + ordinals,
		"ROCR_VISIBLE_DEVICES=" + ordinals,
		idsVar + "=" + strings.Join(global, ","),
		"SLURM_GPUS_ON_NODE=" + strconv.Itoa(n),
	}
	sort.Strings(env)
	return env
}

// DenyList is the node's GPUs not in alloc: the devices a job holding
// alloc must not open. GPUs whose device numbers are unknown (Major < 0)
// are in it too; the caller cannot deny them.
func DenyList(gpus []model.GPU, alloc model.Bitmap) []model.GPU {
	var out []model.GPU
	for _, g := range gpus {
		if !alloc.Has(g.Index) {
			out = append(out, g)
		}
	}
	return out
}
