package scontrol

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/units"
)

// showNode prints the nodes expr names (a hostlist), or every node.
func (r *runner) showNode(expr string) {
	var want []string
	if expr != "" {
		names, err := hostlist.Expand(expr)
		if err != nil || len(names) == 0 {
			r.complain("unable to parse node list %s", expr)
			return
		}
		want = names
	}
	c := r.client("slurm_load_node error")
	if c == nil {
		return
	}
	nodes, err := c.ListNodes(r.ctx)
	if err != nil {
		r.perror("slurm_load_node error", err)
		return
	}
	parts, err := c.ListPartitions(r.ctx)
	if err != nil {
		r.perror("slurm_load_partitions error", err)
		return
	}
	now := r.env.Now().Unix()
	if want == nil {
		if len(nodes) == 0 && !r.quiet {
			fmt.Fprintln(r.env.Stdout, "No nodes in the system")
		}
		for _, n := range nodes {
			fmt.Fprint(r.env.Stdout, r.nodeRecord(n, parts, now))
		}
		return
	}
	byName := make(map[string]*model.Node, len(nodes))
	for _, n := range nodes {
		byName[n.Name] = n
	}
	for _, name := range want {
		n, ok := byName[name]
		if !ok {
			r.fail()
			if !r.quiet {
				fmt.Fprintf(r.env.Stdout, "Node %s not found\n", name)
			}
			continue
		}
		fmt.Fprint(r.env.Stdout, r.nodeRecord(n, parts, now))
	}
}

// nodeState is the state as scontrol prints it: base state plus flags,
// e.g. "MIXED+DRAIN", "IDLE+NOT_RESPONDING".
func nodeState(n *model.Node) string {
	var s string
	busy := n.AllocCPUs > 0
	switch {
	case n.State == model.NodeFuture:
		s = "FUTURE"
	case n.State == model.NodeDown:
		s = "DOWN"
	case n.State == model.NodeUnknown:
		s = "UNKNOWN"
	case busy && n.AllocCPUs >= n.CPUs:
		s = "ALLOCATED"
	case busy:
		s = "MIXED"
	default:
		s = "IDLE"
	}
	if n.Drain {
		s += "+DRAIN"
	}
	if !n.Responding && n.State != model.NodeFuture {
		s += "+NOT_RESPONDING"
	}
	if n.Planned {
		s += "+PLANNED" // Slurm lists its flags in this order
	}
	return s
}

// nodeRecord formats n as scontrol show node does.
func (r *runner) nodeRecord(n *model.Node, parts []*model.Partition, now int64) string {
	le := r.lineEnd()
	var b strings.Builder
	fmt.Fprintf(&b, "NodeName=%s CoresPerSocket=%d %s", n.Name, n.Cores, le)
	fmt.Fprintf(&b, "CPUAlloc=%d CPUEfctv=%d CPUTot=%d CPULoad=N/A%s", n.AllocCPUs, n.CPUs, n.CPUs, le)
	features := orNull(strings.Join(n.Features, ","))
	fmt.Fprintf(&b, "AvailableFeatures=%s%sActiveFeatures=%s%s", features, le, features, le)
	fmt.Fprintf(&b, "Gres=%s%s", orNull(n.Gres), le)
	if r.details > 0 { // Slurm gathers GRES usage only when asked for details
		fmt.Fprintf(&b, "GresDrain=N/A%s", le)
		if used := cli.GresUsed(n); used != "" {
			fmt.Fprintf(&b, "GresUsed=%s%s", used, le)
		}
	}
	fmt.Fprintf(&b, "NodeAddr=%s NodeHostName=%s ", firstNonEmpty(n.Addr, n.Name), firstNonEmpty(n.Hostname, n.Name))
	if n.Version != "" {
		fmt.Fprintf(&b, "Version=%s", n.Version)
	}
	b.WriteString(le)
	fmt.Fprintf(&b, "RealMemory=%d AllocMem=%d FreeMem=N/A Sockets=%d Boards=1%s", n.Memory, n.AllocMem, n.Sockets, le)
	fmt.Fprintf(&b, "State=%s ThreadsPerCore=%d TmpDisk=0 Weight=%d Owner=N/A MCS_label=N/A%s",
		nodeState(n), n.Threads, n.Weight, le)
	var in []string
	for _, p := range parts {
		if p.HasNode(n.Name) {
			in = append(in, p.Name)
		}
	}
	if len(in) > 0 {
		fmt.Fprintf(&b, "Partitions=%s %s", strings.Join(in, ","), le)
	}
	fmt.Fprintf(&b, "BootTime=%s SlurmdStartTime=%s%s", stampOr(n.BootTime, "None"), stampOr(n.RegTime, "None"), le)
	var busy int64
	if n.AllocCPUs > 0 {
		busy = now
	}
	fmt.Fprintf(&b, "LastBusyTime=%s%s", stamp(busy), le)
	cfg := fmt.Sprintf("cpu=%d,mem=%s,billing=%d", n.CPUs, memExact(n.Memory), n.CPUs)
	for _, g := range gresTRES(n.Gres) {
		cfg += "," + g.String()
	}
	fmt.Fprintf(&b, "CfgTRES=%s%s", cfg, le)
	var alloc []string
	if n.AllocCPUs > 0 {
		alloc = append(alloc, "cpu="+strconv.Itoa(n.AllocCPUs))
	}
	if n.AllocMem > 0 {
		alloc = append(alloc, "mem="+memExact(n.AllocMem))
	}
	if g := n.AllocGPUs.Count(); g > 0 {
		alloc = append(alloc, "gres/gpu="+strconv.Itoa(g))
	}
	fmt.Fprintf(&b, "AllocTRES=%s%s", strings.Join(alloc, ","), le)
	fmt.Fprintf(&b, "CapWatts=n/a%sCurrentWatts=0 AveWatts=0%s", le, le)
	b.WriteString("ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s")
	if n.Reason != "" {
		for i, line := range strings.Split(n.Reason, "\n") {
			b.WriteString(le)
			if i == 0 {
				b.WriteString("Reason=" + line)
				if n.ReasonTime > 0 {
					fmt.Fprintf(&b, " [%s@%s]", r.userName(n.ReasonUID), stamp(n.ReasonTime))
				}
			} else {
				b.WriteString("       " + line)
			}
		}
	}
	b.WriteString(r.recordEnd())
	return b.String()
}

func stampOr(unix int64, unset string) string { return units.FormatTimestamp(unix, unset) }

// gresCount is one generic resource kind and how many of it.
type gresCount struct {
	name  string
	count int
}

func (g gresCount) String() string { return "gres/" + g.name + "=" + strconv.Itoa(g.count) }

// gresTRES turns a node's Gres string ("gpu:4", "gpu:a100:2,mps:100") into
// TRES counts per kind, in order of first appearance.
func gresTRES(gres string) []gresCount {
	var out []gresCount
	for _, item := range strings.Split(gres, ",") {
		if i := strings.IndexByte(item, '('); i >= 0 {
			item = item[:i]
		}
		fields := strings.Split(strings.TrimSpace(item), ":")
		if fields[0] == "" || strings.EqualFold(fields[0], "(null)") {
			continue
		}
		count := 1
		if len(fields) > 1 {
			n, err := units.ParseCount(fields[len(fields)-1])
			if err != nil {
				continue
			}
			count = n
		}
		found := false
		for k := range out {
			if out[k].name == fields[0] {
				out[k].count += count
				found = true
			}
		}
		if !found {
			out = append(out, gresCount{fields[0], count})
		}
	}
	return out
}

// showPartition prints one partition or all of them.
func (r *runner) showPartition(name string) {
	c := r.client("slurm_load_partitions error")
	if c == nil {
		return
	}
	parts, err := c.ListPartitions(r.ctx)
	if err != nil {
		r.perror("slurm_load_partitions error", err)
		return
	}
	nodes, err := c.ListNodes(r.ctx)
	if err != nil {
		r.perror("slurm_load_node error", err)
		return
	}
	byName := make(map[string]*model.Node, len(nodes))
	for _, n := range nodes {
		byName[n.Name] = n
	}
	printed := 0
	for _, p := range parts {
		if name != "" && p.Name != name {
			continue
		}
		fmt.Fprint(r.env.Stdout, r.partitionRecord(p, byName))
		printed++
	}
	switch {
	case printed > 0:
	case name == "":
		if !r.quiet {
			fmt.Fprintln(r.env.Stdout, "No partitions in the system")
		}
	default:
		r.fail()
		if !r.quiet {
			fmt.Fprintf(r.env.Stdout, "Partition %s not found\n", name)
		}
	}
}

// partitionRecord formats p as scontrol show partition does.
func (r *runner) partitionRecord(p *model.Partition, nodes map[string]*model.Node) string {
	le := r.lineEnd()
	var b strings.Builder
	all := func(list []string) string {
		if len(list) == 0 {
			return "ALL"
		}
		return strings.Join(list, ",")
	}
	fmt.Fprintf(&b, "PartitionName=%s%s", p.Name, le)
	// Slurm prints DenyAccounts/DenyQos in place of the Allow lists
	// when those are not set.
	accts := "AllowAccounts=" + all(p.AllowAccounts)
	if len(p.AllowAccounts) == 0 && len(p.DenyAccounts) > 0 {
		accts = "DenyAccounts=" + strings.Join(p.DenyAccounts, ",")
	}
	qos := "AllowQos=" + all(p.AllowQOS)
	if len(p.AllowQOS) == 0 && len(p.DenyQOS) > 0 {
		qos = "DenyQos=" + strings.Join(p.DenyQOS, ",")
	}
	partQOS := p.QOS
	if partQOS == "" {
		partQOS = "N/A"
	}
	fmt.Fprintf(&b, "AllowGroups=%s %s %s%s", all(p.AllowGroups), accts, qos, le)
	fmt.Fprintf(&b, "AllocNodes=ALL Default=%s QoS=%s%s", yesNo(p.Default), partQOS, le)
	def := "NONE"
	switch {
	case p.DefaultTime == model.Unlimited:
		def = "UNLIMITED"
	case p.DefaultTime > 0:
		def = units.FormatElapsed(p.DefaultTime)
	}
	fmt.Fprintf(&b, "DefaultTime=%s DisableRootJobs=NO ExclusiveUser=NO GraceTime=%d Hidden=NO%s", def, p.GraceTime, le)
	maxNodes := "UNLIMITED"
	if p.MaxNodes > 0 {
		maxNodes = strconv.Itoa(p.MaxNodes)
	}
	maxTime := "UNLIMITED"
	if p.MaxTime > 0 {
		maxTime = units.FormatElapsed(p.MaxTime)
	}
	fmt.Fprintf(&b, "MaxNodes=%s MaxTime=%s MinNodes=%d LLN=NO MaxCPUsPerNode=UNLIMITED%s", maxNodes, maxTime, max(0, p.MinNodes), le)
	expr := p.NodesExpr
	if expr == "" {
		expr = hostlist.Compress(p.Nodes)
	}
	fmt.Fprintf(&b, "Nodes=%s%s", orNull(expr), le)
	over := "NO"
	if p.OverSubscribe != "" {
		over = strings.ToUpper(p.OverSubscribe)
	}
	fmt.Fprintf(&b, "PriorityJobFactor=%d PriorityTier=%d RootOnly=NO ReqResv=NO OverSubscribe=%s%s",
		p.PriorityJobFactor, p.PriorityTier, over, le)
	fmt.Fprintf(&b, "OverTimeLimit=NONE PreemptMode=%s%s", cmp.Or(strings.ToUpper(p.PreemptMode), "OFF"), le)
	var cpus int
	var mem int64
	var gres []gresCount
	for _, name := range p.Nodes {
		n, ok := nodes[name]
		if !ok {
			continue
		}
		cpus += n.CPUs
		mem += n.Memory
		gres = addGres(gres, gresTRES(n.Gres))
	}
	fmt.Fprintf(&b, "State=%s TotalCPUs=%d TotalNodes=%d SelectTypeParameters=NONE%s", p.State, cpus, len(p.Nodes), le)
	fmt.Fprintf(&b, "JobDefaults=(null)%s", le)
	fmt.Fprintf(&b, "DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED%s", le)
	tres := fmt.Sprintf("cpu=%d,mem=%s,node=%d,billing=%d", cpus, memExact(mem), len(p.Nodes), cpus)
	for _, g := range gres {
		tres += "," + g.String()
	}
	fmt.Fprintf(&b, "TRES=%s", tres)
	b.WriteString(r.recordEnd())
	return b.String()
}

func addGres(sum, more []gresCount) []gresCount {
	for _, g := range more {
		found := false
		for k := range sum {
			if sum[k].name == g.name {
				sum[k].count += g.count
				found = true
			}
		}
		if !found {
			sum = append(sum, g)
		}
	}
	return sum
}

func yesNo(b bool) string {
	if b {
		return "YES"
	}
	return "NO"
}
