package gres

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/slurmconf"
)

type fakeNVML struct {
	devs []NVMLDevice
	err  error
}

func (f fakeNVML) Init() error                      { return f.err }
func (fakeNVML) Shutdown() error                    { return nil }
func (f fakeNVML) DeviceCount() (int, error)        { return len(f.devs), nil }
func (f fakeNVML) Device(i int) (NVMLDevice, error) { return f.devs[i], nil }

func devices(t *testing.T, n int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mknod needs root")
	}
	dir := t.TempDir()
	for i := range n {
		if err := syscall.Mknod(filepath.Join(dir, "nvidia"+string(rune('0'+i))), syscall.S_IFCHR|0o666, 195<<8|(i+4)); err != nil {
			t.Skipf("mknod: %v", err)
		}
	}
	return dir
}

func conf(t *testing.T, text string) *slurmconf.GresConf {
	t.Helper()
	g, err := slurmconf.ParseGres(strings.NewReader(text), "gres.conf")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestDiscoverFiles(t *testing.T) {
	dir := devices(t, 3)
	c := conf(t, "NodeName=n1 Name=gpu Type=a100 File="+dir+"/nvidia[0-1]\nNodeName=n1 Name=gpu File="+dir+"/nvidia2\n"+
		"NodeName=n2 Name=gpu File="+dir+"/nvidia0\nName=mps Count=100\n")
	gpus, warns, err := Discover("n1", c, nil)
	if err != nil || len(warns) != 0 {
		t.Fatal(err, warns)
	}
	want := []model.GPU{
		{Index: 0, Type: "a100", File: dir + "/nvidia0", Major: 195, Minor: 4},
		{Index: 1, Type: "a100", File: dir + "/nvidia1", Major: 195, Minor: 5},
		{Index: 2, File: dir + "/nvidia2", Major: 195, Minor: 6},
	}
	if !reflect.DeepEqual(gpus, want) {
		t.Errorf("n1 GPUs:\n got %+v\nwant %+v", gpus, want)
	}
	if g, _, _ := Discover("n3", c, nil); len(g) != 0 {
		t.Errorf("n3 has %v", g)
	}
	// A File that is not a device is an error naming it and the line.
	bad := conf(t, "Name=gpu File="+dir+"\n")
	if _, _, err := Discover("n1", bad, nil); err == nil || !strings.Contains(err.Error(), "gres.conf:1") || !strings.Contains(err.Error(), "not a character device") {
		t.Errorf("directory as device: %v", err)
	}
	missing := conf(t, "Name=gpu File=/nonexistent/nvidia9\n")
	if _, _, err := Discover("n1", missing, nil); err == nil || !strings.Contains(err.Error(), "/nonexistent/nvidia9") {
		t.Errorf("missing device: %v", err)
	}
}

func TestDiscoverNVML(t *testing.T) {
	nv := fakeNVML{devs: []NVMLDevice{{Name: "NVIDIA H100 80GB HBM3", Minor: 1}, {Name: "NVIDIA H100 80GB HBM3", Minor: 0}}}
	gpus, warns, err := Discover("n1", conf(t, "AutoDetect=nvml\n"), nv)
	if err != nil || len(warns) != 0 {
		t.Fatal(err, warns)
	}
	if len(gpus) != 2 || gpus[0].File != "/dev/nvidia0" || gpus[1].Minor != 1 || gpus[0].Index != 0 ||
		gpus[0].Type != "nvidia_h100_80gb_hbm3" || gpus[0].Major != nvidiaMajor {
		t.Errorf("NVML GPUs %+v", gpus)
	}
	// No library: the File= lines, with a warning.
	dir := devices(t, 1)
	gpus, warns, err = Discover("n1", conf(t, "AutoDetect=nvml\nName=gpu File="+dir+"/nvidia0\n"), fakeNVML{err: ErrNoNVML})
	if err != nil || len(gpus) != 1 || len(warns) != 1 || !strings.Contains(warns[0], "NVML library not found") {
		t.Errorf("fallback: %+v %q %v", gpus, warns, err)
	}
	if _, _, err := Discover("n1", conf(t, "AutoDetect=nvml\n"), RealNVML()); err != nil {
		t.Errorf("RealNVML without a driver must fall back cleanly: %v", err)
	}
	if !errors.Is(noNVMLErr(), ErrNoNVML) {
		t.Skip()
	}
}

func noNVMLErr() error { return ErrNoNVML }

func TestEnvAndDenyList(t *testing.T) {
	gpus := []model.GPU{{Index: 0, Major: 195, Minor: 0}, {Index: 1, Major: 195, Minor: 1}, {Index: 2, Major: 195, Minor: 2}}
	alloc := model.BitmapOf(1, 2)
	got := Env(gpus, alloc, false, true)
	want := []string{"CUDA_VISIBLE_DEVICES=0,1", "GPU_DEVICE_ORDINAL=0,1", "ROCR_VISIBLE_DEVICES=0,1", "SLURM_GPUS_ON_NODE=2", "SLURM_JOB_GPUS=1,2"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("constrained job env %q", got)
	}
	got = Env(gpus, model.BitmapOf(2), true, false)
	want = []string{"CUDA_VISIBLE_DEVICES=2", "GPU_DEVICE_ORDINAL=2", "ROCR_VISIBLE_DEVICES=2", "SLURM_GPUS_ON_NODE=1", "SLURM_STEP_GPUS=2"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("unconstrained step env %q", got)
	}
	if d := DenyList(gpus, alloc); len(d) != 1 || d[0].Index != 0 {
		t.Errorf("DenyList %+v", d)
	}
	if TypeName(" NVIDIA A100-SXM4-40GB ") != "nvidia_a100-sxm4-40gb" {
		t.Error("TypeName")
	}
}

func TestEnvIn(t *testing.T) {
	gpus := make([]model.GPU, 4)
	// A task bound to GPU 3 of a step that sees 1 and 3: ordinal 1.
	got := EnvIn(gpus, model.BitmapOf(1, 3), model.BitmapOf(3), true, true)
	if !reflect.DeepEqual(got, []string{"CUDA_VISIBLE_DEVICES=1", "GPU_DEVICE_ORDINAL=1", "ROCR_VISIBLE_DEVICES=1", "SLURM_GPUS_ON_NODE=1", "SLURM_STEP_GPUS=3"}) {
		t.Errorf("EnvIn = %q", got)
	}
}
