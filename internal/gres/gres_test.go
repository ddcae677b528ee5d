package gres

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/slurmconf"
)

type fakeNVML struct {
	devs     []NVMLDevice
	err      error // from Init
	countErr error
	inits    *int
}

func (f fakeNVML) Init() error {
	if f.inits != nil {
		*f.inits++
	}
	return f.err
}
func (fakeNVML) Shutdown() error                    { return nil }
func (f fakeNVML) DeviceCount() (int, error)        { return len(f.devs), f.countErr }
func (f fakeNVML) Device(i int) (NVMLDevice, error) { return f.devs[i], nil }

// devices makes n character devices nvidia0..nvidia<n-1> (major 195,
// minors 0..n-1) in a temporary directory; it skips the test where mknod
// is not allowed.
func devices(t *testing.T, n int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mknod needs root")
	}
	dir := t.TempDir()
	for i := range n {
		if err := syscall.Mknod(filepath.Join(dir, "nvidia"+strconv.Itoa(i)), syscall.S_IFCHR|0o666, 195<<8|i); err != nil {
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
	dir := devices(t, 4)
	c := conf(t, fmt.Sprintf(`NodeName=n1 Name=gpu Type=a100 File=%[1]s/nvidia[2-3]
NodeName=n1 Name=GPU File=%[1]s/nvidia0
NodeName=n2 Name=gpu File=%[1]s/nvidia1
Name=mps Count=100 File=%[1]s/nvidia1
Name=nic File=/nonexistent/nic0
`, dir))
	gpus, warns, err := Discover("n1", c, nil)
	if err != nil || len(warns) != 0 {
		t.Fatal(err, warns)
	}
	want := []model.GPU{
		{Index: 0, Type: "a100", File: dir + "/nvidia2", Major: 195, Minor: 2},
		{Index: 1, Type: "a100", File: dir + "/nvidia3", Major: 195, Minor: 3},
		{Index: 2, File: dir + "/nvidia0", Major: 195, Minor: 0},
	}
	if !reflect.DeepEqual(gpus, want) {
		t.Errorf("n1 GPUs:\n got %+v\nwant %+v", gpus, want)
	}
	if g, _, _ := Discover("n2", c, nil); len(g) != 1 || g[0].Minor != 1 || g[0].Index != 0 {
		t.Errorf("n2 GPUs %+v", g)
	}
	if g, w, err := Discover("n3", c, nil); len(g) != 0 || len(w) != 0 || err != nil {
		t.Errorf("n3: %v %q %v", g, w, err)
	}
	// An absent gres.conf: no GPUs, nothing to say.
	empty, err := slurmconf.LoadGres(filepath.Join(t.TempDir(), "gres.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if g, w, err := Discover("n1", empty, RealNVML()); len(g) != 0 || len(w) != 0 || err != nil {
		t.Errorf("no gres.conf: %v %q %v", g, w, err)
	}
}

func TestDiscoverBadFiles(t *testing.T) {
	dir := devices(t, 1)
	regular := filepath.Join(dir, "regular")
	if err := os.WriteFile(regular, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, want string }{
		{dir, "is not a character device"},
		{regular, "is not a character device"},
		{"/nonexistent/nvidia9", "/nonexistent/nvidia9: no such file or directory"},
	} {
		c := conf(t, "Name=gpu File="+dir+"/nvidia0\nName=gpu File="+tc.file+"\n")
		_, _, err := Discover("n1", c, nil)
		if err == nil || !strings.HasPrefix(err.Error(), "gres.conf:2: GPU device "+tc.file) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("File=%s: %v", tc.file, err)
		}
	}
}

var h100s = []NVMLDevice{
	{Name: "NVIDIA H100 80GB HBM3", Minor: 1, UUID: "GPU-b"},
	{Name: "NVIDIA H100 80GB HBM3", Minor: 0, UUID: "GPU-a"},
}

func TestDiscoverNVML(t *testing.T) {
	gpus, warns, err := Discover("n1", conf(t, "AutoDetect=nvml\n"), fakeNVML{devs: h100s})
	if err != nil || len(warns) != 0 {
		t.Fatal(err, warns)
	}
	// Ordered by minor number, typed after the product, /dev/nvidia<minor>.
	if len(gpus) != 2 {
		t.Fatalf("NVML GPUs %+v", gpus)
	}
	for i, g := range gpus {
		if g.Index != i || g.Minor != int64(i) || g.File != "/dev/nvidia"+strconv.Itoa(i) ||
			g.Type != "nvidia_h100_80gb_hbm3" || g.Major != nvidiaMajor {
			t.Errorf("GPU %d: %+v", i, g)
		}
	}

	// gres.conf lines name types: by file, or by a Type contained in the
	// product type; a File NVML did not find is ignored with a warning.
	gpus, warns, err = Discover("n1", conf(t, `NodeName=n1 AutoDetect=nvml
Name=gpu Type=fast File=/dev/nvidia1
Name=gpu File=/dev/nvidia7
`), fakeNVML{devs: h100s})
	if err != nil || len(gpus) != 2 || gpus[0].Type != "nvidia_h100_80gb_hbm3" || gpus[1].Type != "fast" {
		t.Fatalf("typed by file: %+v %v", gpus, err)
	}
	if len(warns) != 2 || warns[0] != "gres.conf:2: Type=fast for /dev/nvidia1, which was detected as nvidia_h100_80gb_hbm3" ||
		warns[1] != "gres.conf:3: File=/dev/nvidia7 is not among the GPUs auto-detection found; line ignored" {
		t.Errorf("warnings %q", warns)
	}
	gpus, warns, err = Discover("n1", conf(t, "AutoDetect=nvml\nName=gpu Type=H100 Count=1\nName=gpu Type=a100 Count=1\n"), fakeNVML{devs: h100s})
	if err != nil || len(warns) != 0 || gpus[0].Type != "H100" || gpus[1].Type != "nvidia_h100_80gb_hbm3" {
		t.Errorf("typed by substring: %+v %q %v", gpus, warns, err)
	}

	// A node-level AutoDetect=off wins over the global nvml: NVML is not asked.
	dir := devices(t, 1)
	inits := 0
	gpus, _, err = Discover("n1", conf(t, "AutoDetect=nvml\nNodeName=n1 AutoDetect=off Name=gpu File="+dir+"/nvidia0\n"),
		fakeNVML{devs: h100s, inits: &inits})
	if err != nil || len(gpus) != 1 || gpus[0].File != dir+"/nvidia0" || inits != 0 {
		t.Errorf("AutoDetect=off for the node: %+v %v (NVML initialised %d times)", gpus, err, inits)
	}
	// With NVML, a File line's device need not exist: NVML wins.
	if _, _, err := Discover("n1", conf(t, "AutoDetect=nvml\nName=gpu File=/nonexistent/nvidia0\n"), fakeNVML{devs: h100s}); err != nil {
		t.Errorf("NVML with a missing File: %v", err)
	}
}

func TestDiscoverNVMLFallback(t *testing.T) {
	dir := devices(t, 2)
	text := "AutoDetect=nvml\nName=gpu File=" + dir + "/nvidia[0-1]\n"
	for _, tc := range []struct {
		name string
		nv   NVML
		warn string
	}{
		{"no library", fakeNVML{err: ErrNoNVML}, "AutoDetect=nvml: NVML library not found; using gres.conf File= lines"},
		{"nil NVML", nil, "AutoDetect=nvml: NVML library not found; using gres.conf File= lines"},
		{"no driver", fakeNVML{err: fmt.Errorf("%w: Driver Not Loaded", ErrNoNVML)},
			"AutoDetect=nvml: NVML library not found (NVML library not available: Driver Not Loaded); using gres.conf File= lines"},
		{"init fails", fakeNVML{err: errors.New("nvml init: Unknown Error")}, "AutoDetect=nvml: nvml init: Unknown Error; using gres.conf File= lines"},
		{"count fails", fakeNVML{devs: h100s, countErr: errors.New("nvml device count: GPU is lost")},
			"AutoDetect=nvml: nvml device count: GPU is lost; using gres.conf File= lines"},
	} {
		gpus, warns, err := Discover("n1", conf(t, text), tc.nv)
		if err != nil || len(gpus) != 2 || gpus[1].File != dir+"/nvidia1" || gpus[1].Minor != 1 || !reflect.DeepEqual(warns, []string{tc.warn}) {
			t.Errorf("%s: %+v %q %v", tc.name, gpus, warns, err)
		}
	}
	// The real library on a machine without one falls back the same way.
	gpus, _, err := Discover("n1", conf(t, text), RealNVML())
	if err != nil || len(gpus) == 0 {
		t.Errorf("RealNVML: %+v %v", gpus, err)
	}
	// AutoDetect=full tries NVML and quietly uses the File= lines.
	gpus, warns, err := Discover("n1", conf(t, "AutoDetect=full\nName=gpu File="+dir+"/nvidia0\n"), fakeNVML{err: ErrNoNVML})
	if err != nil || len(gpus) != 1 || len(warns) != 0 {
		t.Errorf("full: %+v %q %v", gpus, warns, err)
	}
	// Detection Drover lacks: the File= lines, with a warning.
	gpus, warns, err = Discover("n1", conf(t, "AutoDetect=rsmi\nName=gpu File="+dir+"/nvidia0\n"), fakeNVML{devs: h100s})
	if err != nil || len(gpus) != 1 || len(warns) != 1 || !strings.Contains(warns[0], "AutoDetect=rsmi is not supported") {
		t.Errorf("rsmi: %+v %q %v", gpus, warns, err)
	}
}

func TestRealNVML(t *testing.T) {
	nv := RealNVML()
	err := nv.Init()
	if err != nil {
		if !errors.Is(err, ErrNoNVML) {
			t.Skipf("NVML present but unusable: %v", err)
		}
		return
	}
	defer nv.Shutdown()
	n, err := nv.DeviceCount()
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		d, err := nv.Device(i)
		if err != nil || d.Name == "" || d.Minor < 0 {
			t.Errorf("device %d: %+v %v", i, d, err)
		}
		t.Logf("NVML device %d: %+v (type %s)", i, d, TypeName(d.Name))
	}
}

func TestDiscoverProc(t *testing.T) {
	dir := t.TempDir()
	for bus, minor := range map[string]int{"0000:41:00.0": 3, "0000:01:00.0": 2} {
		if err := os.MkdirAll(filepath.Join(dir, bus), 0o755); err != nil {
			t.Fatal(err)
		}
		info := fmt.Sprintf("Model: \t\t NVIDIA A100-SXM4-40GB\nIRQ:   \t\t 185\nGPU UUID: \t GPU-%d\nBus Location: \t %s\nDevice Minor: \t %d\nGPU Excluded:\t No\n", minor, bus, minor)
		if err := os.WriteFile(filepath.Join(dir, bus, "information"), []byte(info), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	defer func(old string) { procNvidiaGPUs = old }(procNvidiaGPUs)
	procNvidiaGPUs = dir
	gpus, warns, err := Discover("n1", conf(t, "AutoDetect=nvidia\nName=gpu Type=a100 Count=2\n"), nil)
	if err != nil || len(warns) != 0 || len(gpus) != 2 || gpus[0].File != "/dev/nvidia2" || gpus[1].Minor != 3 ||
		gpus[0].Type != "a100" || gpus[1].Index != 1 {
		t.Errorf("from /proc: %+v %q %v", gpus, warns, err)
	}
	// No driver files: NVML, then nothing.
	procNvidiaGPUs = filepath.Join(dir, "absent")
	if gpus, _, err := Discover("n1", conf(t, "AutoDetect=nvidia\n"), fakeNVML{devs: h100s}); err != nil || len(gpus) != 2 {
		t.Errorf("nvidia via NVML: %+v %v", gpus, err)
	}
	if gpus, warns, err := Discover("n1", conf(t, "AutoDetect=nvidia\n"), nil); err != nil || len(gpus) != 0 ||
		len(warns) != 1 || !strings.HasPrefix(warns[0], "AutoDetect=nvidia: NVML library not found") {
		t.Errorf("nvidia with nothing: %+v %q %v", gpus, warns, err)
	}
	// A malformed information file is a detection failure, not a crash.
	if err := os.WriteFile(filepath.Join(dir, "0000:01:00.0", "information"), []byte("Model: x\nDevice Minor: many\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	procNvidiaGPUs = dir
	if _, warns, err := Discover("n1", conf(t, "AutoDetect=nvidia\n"), nil); err != nil || len(warns) != 1 || !strings.Contains(warns[0], "bad Device Minor") {
		t.Errorf("bad information: %q %v", warns, err)
	}
}

func TestDiscoverWarnings(t *testing.T) {
	dir := devices(t, 1)
	if err := syscall.Mknod(filepath.Join(dir, "cap21"), syscall.S_IFCHR|0o666, 511<<8|21); err != nil {
		t.Skipf("mknod: %v", err)
	}
	c := conf(t, "Name=gpu Flags=odd Count=2\nName=gpu Type=1g.10gb MultipleFiles="+dir+"/nvidia0,"+dir+"/cap21\n")
	gpus, warns, err := Discover("n1", c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(gpus) != 1 || gpus[0].Major != -1 || gpus[0].Minor != -1 || gpus[0].File != dir+"/nvidia0" || gpus[0].Type != "1g.10gb" {
		t.Errorf("MIG slice %+v", gpus)
	}
	want := []string{
		`gres.conf:1: Flags: unknown flag "odd"`,
		"gres.conf:1: Name=gpu without File= (Count=2): Drover cannot hand these GPUs to jobs; name their device files or use AutoDetect",
		"gres.conf:2: MultipleFiles=" + dir + "/nvidia0," + dir + "/cap21 is one GPU (a MIG slice) that Drover does not confine: its files stay open to every job",
	}
	if !reflect.DeepEqual(warns, want) {
		t.Errorf("warnings\n got %q\nwant %q", warns, want)
	}
}

func TestEnv(t *testing.T) {
	gpus := make([]model.GPU, 4)
	for i := range gpus {
		gpus[i] = model.GPU{Index: i, Major: 195, Minor: int64(i)}
	}
	for _, tc := range []struct {
		name              string
		alloc             model.Bitmap
		step, constrained bool
		want              string
	}{
		{"job, constrained: local ordinals", model.BitmapOf(1, 3), false, true,
			"CUDA_VISIBLE_DEVICES=0,1 GPU_DEVICE_ORDINAL=0,1 ROCR_VISIBLE_DEVICES=0,1 SLURM_GPUS_ON_NODE=2 SLURM_JOB_GPUS=1,3"},
		{"job, unconstrained: GRES indices", model.BitmapOf(1, 3), false, false,
			"CUDA_VISIBLE_DEVICES=1,3 GPU_DEVICE_ORDINAL=1,3 ROCR_VISIBLE_DEVICES=1,3 SLURM_GPUS_ON_NODE=2 SLURM_JOB_GPUS=1,3"},
		{"step, constrained", model.BitmapOf(2), true, true,
			"CUDA_VISIBLE_DEVICES=0 GPU_DEVICE_ORDINAL=0 ROCR_VISIBLE_DEVICES=0 SLURM_GPUS_ON_NODE=1 SLURM_STEP_GPUS=2"},
		{"step, unconstrained", model.BitmapOf(2), true, false,
			"CUDA_VISIBLE_DEVICES=2 GPU_DEVICE_ORDINAL=2 ROCR_VISIBLE_DEVICES=2 SLURM_GPUS_ON_NODE=1 SLURM_STEP_GPUS=2"},
		{"all four", model.BitmapOf(0, 1, 2, 3), false, true,
			"CUDA_VISIBLE_DEVICES=0,1,2,3 GPU_DEVICE_ORDINAL=0,1,2,3 ROCR_VISIBLE_DEVICES=0,1,2,3 SLURM_GPUS_ON_NODE=4 SLURM_JOB_GPUS=0,1,2,3"},
		{"none: empty, not inherited", nil, true, true,
			"CUDA_VISIBLE_DEVICES= GPU_DEVICE_ORDINAL= ROCR_VISIBLE_DEVICES= SLURM_GPUS_ON_NODE=0 SLURM_STEP_GPUS="},
		{"an index the node lacks is dropped", model.BitmapOf(1, 9), false, false,
			"CUDA_VISIBLE_DEVICES=1 GPU_DEVICE_ORDINAL=1 ROCR_VISIBLE_DEVICES=1 SLURM_GPUS_ON_NODE=1 SLURM_JOB_GPUS=1"},
	} {
		if got := strings.Join(Env(gpus, tc.alloc, tc.step, tc.constrained), " "); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

func TestEnvIn(t *testing.T) {
	gpus := make([]model.GPU, 4)
	// A task bound to GPU 3 of a step that sees 1 and 3: ordinal 1.
	got := EnvIn(gpus, model.BitmapOf(1, 3), model.BitmapOf(3), true, true)
	if !reflect.DeepEqual(got, []string{"CUDA_VISIBLE_DEVICES=1", "GPU_DEVICE_ORDINAL=1", "ROCR_VISIBLE_DEVICES=1", "SLURM_GPUS_ON_NODE=1", "SLURM_STEP_GPUS=3"}) {
		t.Errorf("EnvIn = %q", got)
	}
	got = EnvIn(gpus, model.BitmapOf(1, 3), model.BitmapOf(3), true, false)
	if got[0] != "CUDA_VISIBLE_DEVICES=3" {
		t.Errorf("unconstrained EnvIn = %q", got)
	}
}

func TestDenyList(t *testing.T) {
	gpus := []model.GPU{{Index: 0, Major: 195, Minor: 0}, {Index: 1, Major: 195, Minor: 1},
		{Index: 2, Major: 195, Minor: 2}, {Index: 3, Major: -1, Minor: -1}}
	for _, tc := range []struct {
		alloc model.Bitmap
		want  []int
	}{
		{nil, []int{0, 1, 2, 3}},
		{model.BitmapOf(1, 2), []int{0, 3}},
		{model.BitmapOf(0, 1, 2, 3), nil},
		{model.BitmapOf(0, 7), []int{1, 2, 3}},
	} {
		var got []int
		for _, g := range DenyList(gpus, tc.alloc) {
			got = append(got, g.Index)
			if g != gpus[g.Index] {
				t.Errorf("DenyList changed %+v", g)
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("DenyList(%v) = %v, want %v", tc.alloc, got, tc.want)
		}
	}
}

func TestTypeName(t *testing.T) {
	for in, want := range map[string]string{
		" NVIDIA A100-SXM4-40GB ": "nvidia_a100-sxm4-40gb",
		"NVIDIA H100 80GB HBM3":   "nvidia_h100_80gb_hbm3",
		"Tesla T4":                "tesla_t4",
	} {
		if got := TypeName(in); got != want {
			t.Errorf("TypeName(%q) = %q", in, got)
		}
	}
}
