package sim

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
)

// Scenario is a synthetic cluster and workload in YAML (or JSON, which
// YAML reads too), for policy scenario tests: nodes with CPUs, memory and
// GPUs, partitions, jobs, and the start times a test expects.
//
//	scheduler: {type: backfill, bf_max_job_test: 500, bf_resolution: 1}
//	nodes:
//	  - {names: "g[1-2]", cpus: 16, memory: 64000, gpus: 4, gpu_type: a100}
//	partitions:
//	  - {name: gpu, nodes: "g[1-2]", default_time: 3600, max_time: 86400}
//	jobs:
//	  - {name: big, submit: 0, partition: gpu, gpus_per_node: 4, time: 600, run: 600}
//	expect:
//	  big: {start: 0}
type Scenario struct {
	Scheduler struct {
		Type         string `yaml:"type"` // backfill (default) or builtin
		BfMaxJobTest int    `yaml:"bf_max_job_test"`
		BfResolution int64  `yaml:"bf_resolution"`
		BfWindow     int64  `yaml:"bf_window"` // seconds
	} `yaml:"scheduler"`
	Nodes []struct {
		Names   string `yaml:"names"`
		CPUs    int    `yaml:"cpus"`
		Memory  int64  `yaml:"memory"` // MiB
		GPUs    int    `yaml:"gpus"`
		GPUType string `yaml:"gpu_type"`
		line    int
	} `yaml:"nodes"`
	Partitions []struct {
		Name        string `yaml:"name"`
		Nodes       string `yaml:"nodes"` // hostlist, or ALL
		DefaultTime int64  `yaml:"default_time"`
		MaxTime     int64  `yaml:"max_time"`
		Tier        int    `yaml:"tier"`
		line        int
	} `yaml:"partitions"`
	Jobs []struct {
		Name        string `yaml:"name"`
		User        uint32 `yaml:"user"`
		Submit      int64  `yaml:"submit"`
		Partition   string `yaml:"partition"`
		Nodes       int    `yaml:"nodes"`
		NTasks      int    `yaml:"ntasks"`
		CPUsPerTask int    `yaml:"cpus_per_task"`
		Mem         int64  `yaml:"mem"` // MiB per node
		GPUsPerNode int    `yaml:"gpus_per_node"`
		Time        int64  `yaml:"time"` // limit, seconds; 0 = partition default
		Run         int64  `yaml:"run"`  // seconds it runs
		Priority    uint32 `yaml:"priority"`
		Count       int    `yaml:"count"` // copies (default 1), named name.1, name.2...
		line        int
	} `yaml:"jobs"`
	Expect map[string]struct {
		Start *int64 `yaml:"start"`
	} `yaml:"expect"`

	file string
}

// Scenario bounds: a scenario is a test, not a cluster dump.
const (
	maxScenarioBytes = 4 << 20
	maxScenarioNodes = 10_000
	maxScenarioJobs  = 100_000
)

// ReadScenario reads and checks a scenario file.
func ReadScenario(path string) (*Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxScenarioBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxScenarioBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxScenarioBytes)
	}
	return ParseScenario(data, path)
}

var yamlLine = regexp.MustCompile(`line (\d+): `)

// ParseScenario decodes YAML or JSON; every error names file:line.
func ParseScenario(data []byte, file string) (*Scenario, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil && !errors.Is(err, io.EOF) {
		return nil, yamlErr(file, err)
	}
	sc := &Scenario{file: file}
	if root.Kind == 0 {
		return nil, fmt.Errorf("%s:1: empty scenario", file)
	}
	strict := yaml.NewDecoder(bytes.NewReader(data))
	strict.KnownFields(true)
	if err := strict.Decode(sc); err != nil {
		return nil, yamlErr(file, err)
	}
	// Lines of list entries, for errors found after decoding.
	for _, sec := range []string{"nodes", "partitions", "jobs"} {
		for k, line := range entryLines(&root, sec) {
			switch sec {
			case "nodes":
				if k < len(sc.Nodes) {
					sc.Nodes[k].line = line
				}
			case "partitions":
				if k < len(sc.Partitions) {
					sc.Partitions[k].line = line
				}
			case "jobs":
				if k < len(sc.Jobs) {
					sc.Jobs[k].line = line
				}
			}
		}
	}
	return sc, nil
}

func yamlErr(file string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n  ")
	if m := yamlLine.FindStringSubmatchIndex(msg); m != nil && m[0] == 0 {
		return fmt.Errorf("%s:%s: %s", file, msg[m[2]:m[3]], msg[m[1]:])
	}
	return fmt.Errorf("%s:1: %s", file, msg)
}

func entryLines(root *yaml.Node, key string) []int {
	doc := root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		doc = doc.Content[0]
	}
	if doc.Kind != yaml.MappingNode {
		return nil
	}
	for k := 0; k+1 < len(doc.Content); k += 2 {
		if doc.Content[k].Value == key && doc.Content[k+1].Kind == yaml.SequenceNode {
			var out []int
			for _, e := range doc.Content[k+1].Content {
				out = append(out, e.Line)
			}
			return out
		}
	}
	return nil
}

// Workload builds the cluster and jobs; errors name file:line.
func (sc *Scenario) Workload() (*Workload, sched.Config, error) {
	bad := func(line int, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", sc.file, max(line, 1), fmt.Sprintf(format, args...))
	}
	var cfg sched.Config
	switch sc.Scheduler.Type {
	case "", "backfill", "sched/backfill":
		cfg.Backfill = true
	case "builtin", "sched/builtin", "fifo":
	default:
		return nil, cfg, bad(1, "scheduler type %q: want backfill or builtin", sc.Scheduler.Type)
	}
	cfg.BfMaxJobTest, cfg.BfResolution, cfg.BfWindow = sc.Scheduler.BfMaxJobTest, sc.Scheduler.BfResolution, sc.Scheduler.BfWindow
	if cfg.BfResolution == 0 {
		cfg.BfResolution = 1
	}
	if cfg.BfMaxJobTest < 0 || cfg.BfResolution < 0 || cfg.BfWindow < 0 {
		return nil, cfg, bad(1, "scheduler bounds must not be negative")
	}
	w := &Workload{Partitions: map[string]*model.Partition{}}
	seen := map[string]bool{}
	for _, n := range sc.Nodes {
		names, err := hostlist.Expand(n.Names)
		if err != nil || len(names) == 0 {
			return nil, cfg, bad(n.line, "node names %q: %v", n.Names, err)
		}
		if n.CPUs < 1 || n.CPUs > 1<<16 || n.Memory < 0 || n.GPUs < 0 || n.GPUs > 64 {
			return nil, cfg, bad(n.line, "nodes %s: cpus 1-65536, memory >= 0, gpus 0-64", n.Names)
		}
		for _, name := range names {
			if seen[name] {
				return nil, cfg, bad(n.line, "node %s defined twice", name)
			}
			seen[name] = true
			node := &model.Node{Name: name, CPUs: n.CPUs, Sockets: 1, Cores: n.CPUs, Threads: 1,
				Memory: max(n.Memory, 1), State: model.NodeUp, Responding: true, Weight: 1}
			for g := range n.GPUs {
				node.GPUs = append(node.GPUs, model.GPU{Index: g, Type: n.GPUType})
			}
			w.Nodes = append(w.Nodes, node)
			if len(w.Nodes) > maxScenarioNodes {
				return nil, cfg, bad(n.line, "more than %d nodes", maxScenarioNodes)
			}
		}
	}
	if len(w.Nodes) == 0 {
		return nil, cfg, bad(1, "no nodes")
	}
	for k, p := range sc.Partitions {
		if p.Name == "" || w.Partitions[p.Name] != nil {
			return nil, cfg, bad(p.line, "partition name %q missing or repeated", p.Name)
		}
		var names []string
		if p.Nodes == "" || strings.EqualFold(p.Nodes, "ALL") {
			for _, n := range w.Nodes {
				names = append(names, n.Name)
			}
		} else {
			var err error
			if names, err = hostlist.Expand(p.Nodes); err != nil {
				return nil, cfg, bad(p.line, "partition %s nodes %q: %v", p.Name, p.Nodes, err)
			}
			for _, n := range names {
				if !seen[n] {
					return nil, cfg, bad(p.line, "partition %s: unknown node %s", p.Name, n)
				}
			}
		}
		w.Partitions[p.Name] = &model.Partition{Name: p.Name, Nodes: names, Default: k == 0,
			MaxTime: orUnset(p.MaxTime, model.Unlimited), DefaultTime: orUnset(p.DefaultTime, model.Unset),
			State: model.PartUp, PriorityTier: p.Tier, MaxNodes: model.Unlimited}
	}
	if len(w.Partitions) == 0 {
		return nil, cfg, bad(1, "no partitions")
	}
	type entry struct {
		j   *model.Job
		run int64
	}
	var all []entry
	names := map[string]bool{}
	for _, js := range sc.Jobs {
		count := max(js.Count, 1)
		if js.Name == "" || js.Submit < 0 || js.Run < 0 || js.Time < 0 || js.Nodes < 0 || js.NTasks < 0 ||
			js.CPUsPerTask < 0 || js.Mem < 0 || js.GPUsPerNode < 0 || js.Count < 0 {
			return nil, cfg, bad(js.line, "job %q: a name, and no negative numbers", js.Name)
		}
		if len(all)+count > maxScenarioJobs {
			return nil, cfg, bad(js.line, "more than %d jobs", maxScenarioJobs)
		}
		part := js.Partition
		if part == "" {
			part = sc.Partitions[0].Name
		}
		p := w.Partitions[part]
		if p == nil {
			return nil, cfg, bad(js.line, "job %s: unknown partition %q", js.Name, part)
		}
		for c := 1; c <= count; c++ {
			name := js.Name
			if count > 1 {
				name += "." + strconv.Itoa(c)
			}
			if names[name] {
				return nil, cfg, bad(js.line, "job name %s repeated", name)
			}
			names[name] = true
			spec := &model.JobSpec{Name: name, Partition: part, TimeLimit: orUnset(js.Time, model.Unset),
				TimeMin: model.Unset, MinNodes: orUnset64(js.Nodes), MaxNodes: model.Unset,
				NTasks: orUnset64(js.NTasks), CPUsPerTask: orUnset64(js.CPUsPerTask), TasksPerNode: model.Unset,
				MemPerNode: orUnset(js.Mem, model.Unset), MemPerCPU: model.Unset}
			if js.GPUsPerNode > 0 {
				spec.GPUs = &model.GPUReq{PerNode: js.GPUsPerNode}
			}
			if c == 1 { // copies share the shape
				if err := sched.Feasible(spec, p, w.Nodes, cfg); err != nil {
					return nil, cfg, bad(js.line, "job %s: %v", name, err)
				}
			}
			limit := spec.TimeLimit
			if limit == model.Unset {
				limit = p.DefaultTime
				if limit == model.Unset {
					limit = p.MaxTime
				}
			}
			all = append(all, entry{&model.Job{ArrayTaskID: model.NoArrayTask, Spec: spec, UserID: js.User,
				Name: name, Partition: part, State: model.JobPending, Priority: max(js.Priority, 1),
				TimeLimit: limit, SubmitTime: js.Submit}, js.Run})
		}
	}
	slices.SortStableFunc(all, func(a, b entry) int { return int(a.j.SubmitTime - b.j.SubmitTime) })
	for k, e := range all {
		e.j.ID, e.j.SpecID = model.JobID(k+1), model.JobID(k+1)
		w.Jobs = append(w.Jobs, e.j)
		w.Run = append(w.Run, e.run)
	}
	for name := range sc.Expect {
		if !names[name] {
			return nil, cfg, bad(1, "expect: no job named %s", name)
		}
	}
	return w, cfg, nil
}

func orUnset(v, unset int64) int64 {
	if v == 0 {
		return unset
	}
	return v
}

func orUnset64(v int) int {
	if v == 0 {
		return model.Unset
	}
	return v
}

// Check compares simulated starts with the scenario's expectations.
func (sc *Scenario) Check(w *Workload) []string {
	var out []string
	for _, j := range w.Jobs {
		e, ok := sc.Expect[j.Name]
		if ok && e.Start != nil && j.StartTime != *e.Start {
			out = append(out, fmt.Sprintf("job %s started at %d, want %d", j.Name, j.StartTime, *e.Start))
		}
	}
	slices.Sort(out)
	return out
}
