package sinfo

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/cli/openapi"
	"github.com/drover-hpc/drover/internal/model"
)

// jsonNode is one node of sinfo --json: the fields of Slurm 22.05's
// v0.0.38 node object that Drover knows, under the same names.
type jsonNode struct {
	Name         string   `json:"name"`
	Address      string   `json:"address"`
	Hostname     string   `json:"hostname"`
	State        string   `json:"state"`
	StateFlags   []string `json:"state_flags"`
	CPUs         int      `json:"cpus"`
	Sockets      int      `json:"sockets"`
	Cores        int      `json:"cores"`
	Threads      int      `json:"threads"`
	RealMemory   int64    `json:"real_memory"`
	AllocMemory  int64    `json:"alloc_memory"`
	AllocCPUs    int      `json:"alloc_cpus"`
	IdleCPUs     int      `json:"idle_cpus"`
	Features     string   `json:"features"`
	ActiveFeats  string   `json:"active_features"`
	Gres         string   `json:"gres"`
	Partitions   []string `json:"partitions"`
	Reason       string   `json:"reason"`
	Weight       int      `json:"weight"`
	Tres         string   `json:"tres"`
	TresUsed     string   `json:"tres_used"`
	NextStateRbt string   `json:"next_state_after_reboot"`
}

// runJSON prints every node as Slurm 22.05's sinfo --json does.
func runJSON(ctx context.Context, env *cli.Env) error {
	client, err := env.Client()
	if err != nil {
		fmt.Fprintf(env.Stderr, "slurm_load_node: %v\n", err)
		return err
	}
	parts, err := client.ListPartitions(ctx)
	if err != nil {
		fmt.Fprintf(env.Stderr, "slurm_load_partitions: %v\n", err)
		return err
	}
	nodes, err := client.ListNodes(ctx)
	if err != nil {
		fmt.Fprintf(env.Stderr, "slurm_load_node: %v\n", err)
		return err
	}
	inParts := map[string][]string{}
	for _, p := range parts {
		for _, n := range p.Nodes {
			inParts[n] = append(inParts[n], p.Name)
		}
	}
	out := struct {
		Meta   openapi.Meta `json:"meta"`
		Errors []string     `json:"errors"`
		Nodes  []jsonNode   `json:"nodes"`
	}{Meta: openapi.NewMeta(), Errors: []string{}, Nodes: []jsonNode{}}
	for _, n := range nodes {
		out.Nodes = append(out.Nodes, nodeJSON(n, inParts[n.Name]))
	}
	return openapi.Write(env.Stdout, out)
}

func nodeJSON(n *model.Node, parts []string) jsonNode {
	long, _ := n.DisplayState()
	long = strings.TrimSuffix(long, "*")
	o := jsonNode{
		Name: n.Name, Address: cmp.Or(n.Addr, n.Name), Hostname: cmp.Or(n.Hostname, n.Name),
		State: strings.ToLower(long), StateFlags: []string{}, CPUs: n.CPUs, Sockets: n.Sockets, Cores: n.Cores,
		Threads: n.Threads, RealMemory: n.Memory, AllocMemory: n.AllocMem, AllocCPUs: n.AllocCPUs,
		IdleCPUs: n.CPUs - n.AllocCPUs, Features: strings.Join(n.Features, ","), Gres: n.Gres,
		Partitions: parts, Reason: n.Reason, Weight: 1, NextStateRbt: "invalid",
		Tres:     fmt.Sprintf("cpu=%d,mem=%dM,billing=%d", n.CPUs, n.Memory, n.CPUs),
		TresUsed: fmt.Sprintf("cpu=%d,mem=%dM", n.AllocCPUs, n.AllocMem),
	}
	o.ActiveFeats = o.Features
	if o.Partitions == nil {
		o.Partitions = []string{}
	}
	if n.Drain {
		o.StateFlags = append(o.StateFlags, "DRAIN")
	}
	if !n.Responding {
		o.StateFlags = append(o.StateFlags, "NOT_RESPONDING")
	}
	return o
}
