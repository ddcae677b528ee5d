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
	Name        string // "NVIDIA H100 80GB HBM3"
	UUID        string
	Minor       int // /dev/nvidia<Minor>
	MemoryBytes uint64
}

// ErrNoNVML: the library is not on this machine (or this binary was built
// without cgo).
var ErrNoNVML = errors.New("NVML library not available")

// nvidiaMajor is the character major of /dev/nvidia<N>.
const nvidiaMajor = 195

// Discover lists node's GPUs in GRES index order. With AutoDetect=nvml
// (globally or for the node) NVML finds them, ordered by minor number,
// typed after their product name ("nvidia_h100_80gb_hbm3", as Slurm
// does); a gres.conf Type= for the same file overrides that. Otherwise
// the gres.conf Name=gpu lines give them, file by file. Without NVML,
// AutoDetect falls back to the File= lines with a warning. A File that is
// not a character device is an error.
func Discover(node string, conf *slurmconf.GresConf, nv NVML) ([]model.GPU, []string, error) {
	var warns []string
	lines, auto := conf.ForNode(node)
	var files []model.GPU
	for _, l := range lines {
		if l.Name != "gpu" {
			continue
		}
		for _, f := range l.Files {
			major, minor, err := charDevice(f)
			if err != nil {
				return nil, warns, fmt.Errorf("%s: %w", l.Pos, err)
			}
			files = append(files, model.GPU{Type: l.Type, File: f, Major: major, Minor: minor})
		}
	}
	if auto == "nvml" || auto == "nvidia" {
		found, err := fromNVML(nv)
		switch {
		case errors.Is(err, ErrNoNVML):
			warns = append(warns, "AutoDetect="+auto+": NVML library not found; using gres.conf File= lines")
		case err != nil:
			warns = append(warns, "AutoDetect="+auto+": "+err.Error()+"; using gres.conf File= lines")
		default:
			for i := range found {
				for _, f := range files {
					if f.File == found[i].File && f.Type != "" {
						found[i].Type = f.Type
					}
				}
			}
			return index(found), warns, nil
		}
	}
	return index(files), warns, nil
}

func index(gs []model.GPU) []model.GPU {
	for i := range gs {
		gs[i].Index = i
	}
	return gs
}

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
		file := "/dev/nvidia" + strconv.Itoa(d.Minor)
		g := model.GPU{Type: TypeName(d.Name), File: file, Major: nvidiaMajor, Minor: int64(d.Minor)}
		if major, minor, err := charDevice(file); err == nil {
			g.Major, g.Minor = major, minor
		}
		out = append(out, g)
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Minor < out[b].Minor })
	return out, nil
}

// TypeName turns a product name into a GRES type: lower case, spaces
// replaced by underscores ("NVIDIA A100-SXM4-40GB" → "nvidia_a100-sxm4-40gb").
func TypeName(product string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(product)), " ", "_")
}

// Env is what a job (or, with step, a step) sees of its GPUs on this
// node. SLURM_JOB_GPUS / SLURM_STEP_GPUS name the GRES indices; the
// CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES and GPU_DEVICE_ORDINAL
// ordinals are local (0..n-1) when devices are constrained, because the
// runtime then sees only the job's devices and numbers them from 0, and
// the GRES indices otherwise. A job with no GPU here gets the ordinals
// empty, so no inherited value points at another job's device.
func Env(gpus []model.GPU, alloc model.Bitmap, step, constrained bool) []string {
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
// alloc must not open.
func DenyList(gpus []model.GPU, alloc model.Bitmap) []model.GPU {
	var out []model.GPU
	for _, g := range gpus {
		if !alloc.Has(g.Index) {
			out = append(out, g)
		}
	}
	return out
}
