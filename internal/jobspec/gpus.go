package jobspec

import (
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/model"
)

// msgGres is Slurm's answer to a GRES request it cannot parse or does not
// have (a name other than gpu here).
const msgGres = "Invalid generic resource (gres) specification"

// gpuOpts collects the GPU options; Slurm keeps one of per-node, per-job
// and per-task for gpu, so a later one replaces an earlier one.
type gpuOpts struct {
	req model.GPUReq
	set bool
}

// setGres reads --gres=LIST: gpu, gpu:N, gpu:TYPE:N items ("none" clears).
func setGres(p *parser, v string, _ bool) error {
	if strings.EqualFold(v, "none") {
		p.gpu = gpuOpts{}
		return nil
	}
	items, err := model.ParseGres(v)
	if err != nil || len(items) == 0 {
		return optErr(msgGres)
	}
	for _, it := range items {
		if it.Name != "gpu" || it.Count < 1 {
			return optErr(msgGres)
		}
		p.setGPUCount(it.Type, 0, it.Count, 0)
	}
	return nil
}

// gpuSetter reads -G/--gpus, --gpus-per-node and --gpus-per-task:
// [type:]count.
func gpuSetter(name string, which int) setter {
	return func(p *parser, v string, _ bool) error {
		typ, count := "", v
		if i := strings.LastIndexByte(v, ':'); i >= 0 {
			typ, count = v[:i], v[i+1:]
		}
		n, err := strconv.Atoi(count)
		if err != nil || n < 0 || strings.Contains(typ, ":") || (i0(typ) && typ != "") {
			return optErr("Invalid --" + name + " specification")
		}
		if n == 0 {
			p.gpu = gpuOpts{}
			return nil
		}
		switch which {
		case 0:
			p.setGPUCount(typ, n, 0, 0)
		case 1:
			p.setGPUCount(typ, 0, n, 0)
		default:
			p.setGPUCount(typ, 0, 0, n)
		}
		return nil
	}
}

func i0(s string) bool { return strings.ContainsAny(s, ", ") }

func (p *parser) setGPUCount(typ string, total, perNode, perTask int) {
	r := &p.gpu.req
	r.Type, r.Total, r.PerNode, r.PerTask = typ, total, perNode, perTask
	p.gpu.set = true
}

func setCPUsPerGPU(p *parser, v string, _ bool) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return optErr("Invalid --cpus-per-gpu specification")
	}
	p.gpu.req.CPUsPerGPU = n
	return nil
}

// settleGPUs puts the GPU request into the spec. --cpus-per-gpu and
// --mem-per-gpu without any GPU count mean nothing to schedule; Slurm
// ignores them too.
func (p *parser) settleGPUs() {
	if !p.gpu.set {
		return
	}
	r := p.gpu.req
	r.MemPerGPU = p.memPerGPU
	p.spec.GPUs = &r
	delete(p.opts.Extra, "mem-per-gpu")
}
