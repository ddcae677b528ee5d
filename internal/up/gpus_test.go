package up

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/drover-hpc/drover/internal/gres"
	"github.com/drover-hpc/drover/internal/slurmconf"
)

// fakeNVML is a machine's GPUs as NVIDIA's library would list them.
type fakeNVML struct {
	names []string
	err   error
}

func (f fakeNVML) Init() error               { return f.err }
func (f fakeNVML) Shutdown() error           { return nil }
func (f fakeNVML) DeviceCount() (int, error) { return len(f.names), nil }
func (f fakeNVML) Device(i int) (gres.NVMLDevice, error) {
	return gres.NVMLDevice{Name: f.names[i], Minor: i}, nil
}

func TestNoLibraryNoGPUs(t *testing.T) {
	if g := detectGPUs(fakeNVML{err: gres.ErrNoNVML}); g != nil {
		t.Fatalf("no NVML found GPUs: %v", g)
	}
	if g := detectGPUs(fakeNVML{err: errors.New("driver not loaded")}); g != nil {
		t.Fatalf("a failing NVML found GPUs: %v", g)
	}
	if g := detectGPUs(nil); g != nil {
		t.Fatalf("a build without cgo found GPUs: %v", g)
	}
}

// A GPU machine comes up with its GPUs in slurm.conf and gres.conf, split
// among virtual nodes, and both files read back as the agents will.
func TestWriteConfGivesNodesTheirGPUs(t *testing.T) {
	gpus := detectGPUs(fakeNVML{names: []string{"NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"}})
	if len(gpus) != 3 {
		t.Fatalf("detected %d GPUs, want 3", len(gpus))
	}
	for _, tc := range []struct {
		nodes  int
		prefix string
		want   map[string]string // node → Gres=
		files  map[string][]string
	}{
		{1, "gpu", map[string]string{"gpu1": "gpu:nvidia_h100_80gb_hbm3:3"},
			map[string][]string{"gpu1": {"/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia2"}}},
		{2, "v", map[string]string{"v1": "gpu:nvidia_h100_80gb_hbm3:2", "v2": "gpu:nvidia_h100_80gb_hbm3:1"},
			map[string][]string{"v1": {"/dev/nvidia0", "/dev/nvidia1"}, "v2": {"/dev/nvidia2"}}},
		{4, "w", map[string]string{"w1": "gpu:nvidia_h100_80gb_hbm3:1", "w2": "gpu:nvidia_h100_80gb_hbm3:1", "w3": "gpu:nvidia_h100_80gb_hbm3:1", "w4": ""},
			map[string][]string{"w1": {"/dev/nvidia0"}, "w2": {"/dev/nvidia1"}, "w3": {"/dev/nvidia2"}}},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "slurm.conf")
		if err := writeConf(path, dir, tc.prefix, tc.nodes, 2, 4096, nil, gpus); err != nil {
			t.Fatal(err)
		}
		cfg, err := slurmconf.Load(path)
		if err != nil {
			t.Fatalf("%d nodes: written slurm.conf does not load: %v", tc.nodes, err)
		}
		if len(cfg.Nodes) != tc.nodes {
			t.Fatalf("%d nodes: slurm.conf has %d", tc.nodes, len(cfg.Nodes))
		}
		for _, n := range cfg.Nodes {
			if got := n.Gres; got != tc.want[n.Name] {
				t.Errorf("%d nodes: %s Gres=%q, want %q", tc.nodes, n.Name, got, tc.want[n.Name])
			}
		}
		gc, err := slurmconf.LoadGres(slurmconf.GresPathFor(path))
		if err != nil || len(gc.Warnings) > 0 {
			t.Fatalf("%d nodes: written gres.conf: %v %v", tc.nodes, err, gc.Warnings)
		}
		for _, n := range cfg.Nodes {
			lines, auto := gc.ForNode(n.Name)
			var files []string
			for _, l := range lines {
				if l.Type != "nvidia_h100_80gb_hbm3" {
					t.Errorf("%s: gres.conf type %q", n.Name, l.Type)
				}
				files = append(files, l.Files...)
			}
			if auto != "" || len(files) != len(tc.files[n.Name]) {
				t.Fatalf("%d nodes: %s has files %v (AutoDetect %q), want %v", tc.nodes, n.Name, files, auto, tc.files[n.Name])
			}
			for i := range files {
				if files[i] != tc.files[n.Name][i] {
					t.Errorf("%d nodes: %s files %v, want %v", tc.nodes, n.Name, files, tc.files[n.Name])
				}
			}
		}
	}
}
