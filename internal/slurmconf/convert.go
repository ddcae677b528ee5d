package slurmconf

import "github.com/drover-hpc/drover/internal/model"

// ModelNodes returns the configured nodes as fresh model nodes, as the
// controller first knows them: not responding, and UNKNOWN until their
// agent registers unless the config says FUTURE, DOWN or DRAIN.
func (c *Config) ModelNodes() []*model.Node {
	out := make([]*model.Node, len(c.Nodes))
	for i, n := range c.Nodes {
		m := &model.Node{
			Name:     n.Name,
			Addr:     n.Addr,
			Hostname: n.Hostname,
			CPUs:     n.CPUs,
			Sockets:  n.Sockets,
			Cores:    n.CoresPerSocket,
			Threads:  n.ThreadsPerCore,
			Memory:   n.RealMemory,
			Gres:     n.Gres,
			Features: append([]string(nil), n.Features...),
			Weight:   n.Weight,
			State:    model.NodeUnknown,
			Reason:   n.Reason,

			DetectCPUs:   n.DetectCPUs,
			DetectMemory: n.DetectMemory,
			GPUs:         ConfiguredGPUs(n.Gres),
		}
		switch n.State {
		case "FUTURE":
			m.State = model.NodeFuture
		case "DOWN":
			m.State = model.NodeDown
		case "DRAIN":
			m.Drain = true
		}
		out[i] = m
	}
	return out
}

// ConfiguredGPUs lists the GPUs a Gres= value declares, in order, as
// placeholders without device files: what the controller schedules on
// until the node's agent reports the devices it found.
func ConfiguredGPUs(gres string) []model.GPU {
	items, err := model.ParseGres(gres)
	if err != nil {
		return nil
	}
	var out []model.GPU
	for _, g := range items {
		if g.Name != "gpu" {
			continue
		}
		for k := 0; k < g.Count && len(out) < 1024; k++ {
			out = append(out, model.GPU{Index: len(out), Type: g.Type, Major: -1, Minor: -1})
		}
	}
	return out
}

// ModelPartitions returns the configured partitions as model partitions.
func (c *Config) ModelPartitions() []*model.Partition {
	out := make([]*model.Partition, len(c.Partitions))
	for i, p := range c.Partitions {
		out[i] = &model.Partition{
			Name:              p.Name,
			Nodes:             append([]string(nil), p.Nodes...),
			NodesExpr:         p.NodesExpr,
			Default:           p.Default,
			MaxTime:           p.MaxTime,
			DefaultTime:       p.DefaultTime,
			State:             p.State,
			PriorityTier:      p.PriorityTier,
			PriorityJobFactor: p.PriorityJobFactor,
			MaxNodes:          p.MaxNodes,
			MinNodes:          p.MinNodes,
			AllowAccounts:     append([]string(nil), p.AllowAccounts...),
			AllowGroups:       append([]string(nil), p.AllowGroups...),
			DenyAccounts:      append([]string(nil), p.DenyAccounts...),
			AllowQOS:          append([]string(nil), p.AllowQOS...),
			DenyQOS:           append([]string(nil), p.DenyQOS...),
			QOS:               p.QOS,
			OverSubscribe:     p.OverSubscribe,
			PreemptMode:       p.PreemptMode,
			GraceTime:         p.GraceTime,
		}
	}
	return out
}
