package cli

import (
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

func TestGresUsed(t *testing.T) {
	gpus := func(file bool, types ...string) []model.GPU {
		var out []model.GPU
		for i, ty := range types {
			g := model.GPU{Index: i, Type: ty}
			if file {
				g.File = "/dev/nvidia" + string(rune('0'+i))
			}
			out = append(out, g)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		node model.Node
		want string
	}{
		{"no gres", model.Node{}, ""},
		{"counts, untyped", model.Node{Gres: "gpu:4", GPUs: gpus(false, "", "", "", ""), AllocGPUs: model.BitmapOf(0, 1)}, "gpu:2"},
		{"counts, idle", model.Node{Gres: "gpu:4", GPUs: gpus(false, "", "", "", "")}, "gpu:0"},
		{"counts, typed", model.Node{Gres: "gpu:a100:2,gpu:v100:1", GPUs: gpus(false, "a100", "a100", "v100"), AllocGPUs: model.BitmapOf(2)}, "gpu:a100:0,gpu:v100:1"},
		{"devices, typed", model.Node{Gres: "gpu:a100:2,gpu:v100:2", GPUs: gpus(true, "a100", "a100", "v100", "v100"), AllocGPUs: model.BitmapOf(0, 2, 3)}, "gpu:a100:1(IDX:0),gpu:v100:2(IDX:2-3)"},
		{"devices, none used", model.Node{Gres: "gpu:a100:1", GPUs: gpus(true, "a100")}, "gpu:a100:0(IDX:N/A)"},
		{"devices, untyped", model.Node{Gres: "gpu:2", GPUs: gpus(true, "", ""), AllocGPUs: model.BitmapOf(1)}, "gpu:(null):1(IDX:1)"},
		{"other gres", model.Node{Gres: "gpu:1,mps:100", GPUs: gpus(false, "")}, "gpu:0,mps:0"},
	} {
		if got := GresUsed(&tc.node); got != tc.want {
			t.Errorf("%s: GresUsed = %q, want %q", tc.name, got, tc.want)
		}
	}
}
