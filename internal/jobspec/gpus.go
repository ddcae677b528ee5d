package jobspec

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/model"
)

// msgGres is Slurm's answer to a GPU request it cannot take: a syntax
// error, a name other than gpu (the only GRES Drover has), or options that
// contradict each other. Slurm's clients check the request before they
// send it and print this after the option checks, exiting with 1.
const msgGres = "Invalid generic resource (gres) specification"

// The GPU count options, by the GPUReq field they fill.
const (
	gpuPerNode = iota + 1 // --gres=gpu[:type]:N, --gpus-per-node
	gpuTotal              // -G/--gpus
	gpuPerTask            // --gpus-per-task
)

// gpuOpt is one GPU count option as last given (value as written; seq
// orders the options so that the latest one wins).
type gpuOpt struct {
	kind int
	list bool // --gres: a GRES list rather than [type:]count
	val  string
	seq  int
}

// gpuOpts collects the GPU options until finish checks them. Slurm keeps
// --gres, --gpus, --gpus-per-node and --gpus-per-task side by side (and
// derives node or task counts from their combination); Drover's request
// holds one of per node, per job and per task, so the option given last
// (command line over environment over #SBATCH line) decides, "none" and
// a count of 0 included. Every one given must still be well formed.
type gpuOpts struct {
	byName     map[string]gpuOpt // by long option name
	seq        int
	cpusPerGPU int
}

// gpuSetter records --gres, -G/--gpus, --gpus-per-node or --gpus-per-task.
func gpuSetter(name string, kind int) setter {
	return func(p *parser, v string, _ bool) error {
		if p.gpu.byName == nil {
			p.gpu.byName = map[string]gpuOpt{}
		}
		p.gpu.seq++
		p.gpu.byName[name] = gpuOpt{kind: kind, list: name == "gres", val: v, seq: p.gpu.seq}
		return nil
	}
}

// setCPUsPerGPU reads --cpus-per-gpu, a positive count as Slurm's
// parse_int wants it.
func setCPUsPerGPU(p *parser, v string, _ bool) error {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err != nil || n <= 0 {
		return &Error{Msg: fmt.Sprintf("Invalid numeric value \"%s\" for --cpus-per-gpu.", v)}
	}
	p.gpu.cpusPerGPU = int(n)
	return nil
}

// parseGPUCount reads one option's value into a type and count (0: no
// GPUs). --gres takes a GRES list ("gpu", "gpu:2", "gpu:a100:2",
// "gres:gpu:2", "none"); the --gpus options take [type:]count, a bare
// type meaning one. Counts of 0 drop their item, as in Slurm; GRES other
// than gpu, and more than one gpu item (Drover's request has one type),
// are refused.
func parseGPUCount(o gpuOpt) (typ string, n int, err error) {
	v := strings.TrimSpace(o.val)
	if o.list && strings.EqualFold(v, "none") {
		return "", 0, nil
	}
	var items []string
	for _, it := range strings.Split(v, ",") {
		if it = strings.TrimSpace(it); it == "" {
			continue // Slurm passes over empty items
		}
		if o.list {
			it = strings.TrimPrefix(it, "gres:")
		} else {
			it = "gpu:" + it
		}
		if slices.Contains(strings.Split(it, ":"), "") { // "gpu:", "gpu::1"
			return "", 0, &Error{Msg: msgGres, Detail: fmt.Sprintf("cannot read %q", o.val)}
		}
		items = append(items, it)
	}
	list, perr := model.ParseGres(strings.Join(items, ","))
	if perr != nil || len(list) == 0 {
		return "", 0, &Error{Msg: msgGres, Detail: fmt.Sprintf("cannot read %q", o.val)}
	}
	found := false
	for _, g := range list {
		if g.Name != "gpu" {
			return "", 0, &Error{Msg: msgGres, Detail: "Drover has no GRES named " + g.Name}
		}
		if g.Count == 0 {
			continue
		}
		if found {
			return "", 0, &Error{Msg: msgGres, Detail: "Drover takes one gpu item per request"}
		}
		found, typ, n = true, g.Type, g.Count
	}
	return typ, n, nil
}

// settleGPUs checks the GPU options and puts the request into the spec.
// For a new job (sbatch, salloc, srun outside an allocation) it also makes
// Slurm's client-side checks: --mem-per-gpu needs GPUs, --cpus-per-gpu
// excludes -c, and --gpus-per-task needs a task count (-n, or -N with one
// node count; or --gpus, from which the task count follows).
func (p *parser) settleGPUs() error {
	var last gpuOpt
	total := 0 // a valid --gpus count, for the task count of --gpus-per-task
	var typ string
	n := 0
	for _, o := range p.gpu.byName {
		t, c, err := parseGPUCount(o)
		if err != nil {
			return err
		}
		if o.kind == gpuTotal {
			total = c
		}
		if o.seq > last.seq {
			last, typ, n = o, t, c
		}
	}
	newJob := p.kind != Srun || p.opts.JobID == ""
	s := p.spec
	if n == 0 {
		if p.memPerGPU > 0 && newJob {
			return &Error{Msg: fmt.Sprintf("Requested mem_per_tres=gres:gpu:%d but did not request any GPU.\n%s", p.memPerGPU, msgGres)}
		}
		return nil // --cpus-per-gpu alone has nothing to size
	}
	r := &model.GPUReq{Type: typ, CPUsPerGPU: p.gpu.cpusPerGPU, MemPerGPU: p.memPerGPU}
	switch last.kind {
	case gpuPerNode:
		r.PerNode = n
	case gpuTotal:
		r.Total = n
	default:
		r.PerTask = n
	}
	if newJob {
		if r.CPUsPerGPU > 0 && s.CPUsPerTask != model.Unset {
			return &Error{Msg: "--cpus-per-gpu is mutually exclusive with --cpus-per-task\n" + msgGres}
		}
		if r.PerTask > 0 && p.kind != Srun && s.NTasks == model.Unset {
			if err := p.tasksForGPUs(r.PerTask, total); err != nil {
				return err
			}
		}
	}
	s.GPUs = r
	delete(p.opts.Extra, "mem-per-gpu")
	return nil
}

// tasksForGPUs gives a --gpus-per-task job without -n its task count the
// way Slurm does: one per node (or --ntasks-per-node per node) when -N
// names one count and -c is not given, else --gpus / --gpus-per-task.
func (p *parser) tasksForGPUs(perTask, total int) error {
	s := p.spec
	if s.MinNodes != model.Unset && s.MinNodes == s.MaxNodes {
		switch {
		case s.TasksPerNode != model.Unset:
			s.NTasks = s.MinNodes * s.TasksPerNode
			return nil
		case s.CPUsPerTask == model.Unset:
			s.NTasks = s.MinNodes
			return nil
		}
	}
	switch {
	case total == 0:
		return &Error{Msg: "Failed to validate job spec. --gpus-per-task used without either --gpus or -n/--ntasks is not allowed.\n" + msgGres}
	case total%perTask != 0:
		return &Error{Msg: "Failed to validate job spec, --gpus not multiple of --gpus-per-task\n" + msgGres}
	}
	s.NTasks = total / perTask
	return nil
}

// ParseGresList reads a --gres value (or scontrol update Gres=) into a GPU
// type and count per node; a count of 0 means no GPUs.
func ParseGresList(v string) (typ string, perNode int, err error) {
	return parseGPUCount(gpuOpt{kind: gpuPerNode, list: true, val: v})
}
