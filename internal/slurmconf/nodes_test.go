package slurmconf

import (
	"reflect"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

func TestNodeDerivedValues(t *testing.T) {
	cases := []struct {
		line                  string
		cpus, sockets, c, thr int
	}{
		{"NodeName=a", 1, 1, 1, 1},
		{"NodeName=a CPUs=8", 8, 8, 1, 1},
		{"NodeName=a Procs=8 CoresPerSocket=4", 8, 2, 4, 1},
		{"NodeName=a Sockets=2 CoresPerSocket=8 ThreadsPerCore=2", 32, 2, 8, 2},
		{"NodeName=a Boards=2 SocketsPerBoard=2 CoresPerSocket=4", 16, 4, 4, 1},
		{"NodeName=a CPUs=6 Sockets=2 CoresPerSocket=4", 6, 2, 4, 1},
		{"NodeName=a CPUs=2 CoresPerSocket=4", 2, 1, 4, 1},
	}
	for _, c := range cases {
		cfg := mustParse(t, "ClusterName=x\nSlurmctldHost=h\n"+c.line, nil)
		n := cfg.Nodes[0]
		if n.CPUs != c.cpus || n.Sockets != c.sockets || n.CoresPerSocket != c.c || n.ThreadsPerCore != c.thr {
			t.Errorf("%s: got CPUs=%d S:C:T=%d:%d:%d; want %d %d:%d:%d", c.line, n.CPUs, n.Sockets, n.CoresPerSocket, n.ThreadsPerCore, c.cpus, c.sockets, c.c, c.thr)
		}
		if n.RealMemory != 1 || n.Weight != 1 || n.State != "UNKNOWN" || n.Addr != "a" || n.Hostname != "a" {
			t.Errorf("%s: defaults wrong: %+v", c.line, n)
		}
	}
}

func TestNodeDefaultsAndLists(t *testing.T) {
	c := mustParse(t, `ClusterName=x
SlurmctldHost=h
NodeName=DEFAULT CPUs=4 RealMemory=1000 State=DRAIN Reason=new
NodeName=n[1-3] NodeHostname=h[1-3] Port=[17001-17003] Weight=5
NodeName=DEFAULT RealMemory=2000
NodeName=m[01-02] NodeAddr=10.0.0.9 State=idle features=x,y
Nodename=solo whatever=1
`, nil)
	got := map[string]NodeConf{}
	for _, n := range c.Nodes {
		got[n.Name] = n
	}
	if len(c.Nodes) != 6 {
		t.Fatalf("got %d nodes", len(c.Nodes))
	}
	n2 := got["n2"]
	if n2.Hostname != "h2" || n2.Addr != "h2" || n2.Port != 17002 || n2.Weight != 5 || n2.CPUs != 4 || n2.RealMemory != 1000 || n2.State != "DRAIN" || n2.Reason != "new" {
		t.Errorf("n2 = %+v", n2)
	}
	m2 := got["m02"]
	if m2.Addr != "10.0.0.9" || m2.Hostname != "m02" || m2.RealMemory != 2000 || m2.State != "IDLE" || !reflect.DeepEqual(m2.Features, []string{"x", "y"}) || m2.Weight != 1 {
		t.Errorf("m02 = %+v", m2)
	}
	if got["solo"].State != "DRAIN" || got["solo"].Pos.Line != 7 {
		t.Errorf("solo = %+v", got["solo"])
	}
	if want := []string{`/etc/slurm/slurm.conf:7: unknown key "whatever"`}; !reflect.DeepEqual(c.Warnings, want) {
		t.Errorf("Warnings = %q", c.Warnings)
	}
	if n, ok := c.Node("n3"); !ok || n.Port != 17003 {
		t.Errorf("Node(n3) = %+v, %v", n, ok)
	}
	if _, ok := c.Node("zz"); ok {
		t.Error("Node(zz) found")
	}
}

func TestPartitions(t *testing.T) {
	c := mustParse(t, `ClusterName=x
SlurmctldHost=h
PartitionName=early Nodes=b[1-2],a1
NodeName=a[1-4] Feature=fast
NodeName=b[1-2]
NodeSet=fastset Feature=fast
PartitionName=DEFAULT MaxTime=2:00:00 PriorityTier=5
PartitionName=all Nodes=ALL Default=YES PriorityJobFactor=7 AllowGroups=wheel,,staff
PartitionName=sets Nodes=fastset,b1,a2 MaxNodes=3 State=inactive Shared=EXCLUSIVE DefaultTime=UNLIMITED
PartitionName=empty Priority=3 AllowAccounts=ALL Hidden=YES Frobnicate=1
`, nil)
	if len(c.Partitions) != 4 {
		t.Fatalf("partitions: %+v", c.Partitions)
	}
	early, all, sets, empty := c.Partitions[0], c.Partitions[1], c.Partitions[2], c.Partitions[3]
	if !reflect.DeepEqual(early.Nodes, []string{"b1", "b2", "a1"}) || early.MaxTime != model.Unlimited || early.PriorityTier != 1 || early.Default {
		t.Errorf("early = %+v", early)
	}
	if !reflect.DeepEqual(all.Nodes, []string{"a1", "a2", "a3", "a4", "b1", "b2"}) || !all.Default || all.MaxTime != 7200 ||
		all.PriorityTier != 5 || all.PriorityJobFactor != 7 || !reflect.DeepEqual(all.AllowGroups, []string{"wheel", "staff"}) || all.AllowAccounts != nil {
		t.Errorf("all = %+v", all)
	}
	if !reflect.DeepEqual(sets.Nodes, []string{"a1", "a2", "a3", "a4", "b1"}) || sets.MaxNodes != 3 || sets.State != model.PartInactive ||
		sets.OverSubscribe != "EXCLUSIVE" || sets.DefaultTime != model.Unlimited {
		t.Errorf("sets = %+v", sets)
	}
	if empty.Nodes != nil || empty.PriorityTier != 3 || empty.PriorityJobFactor != 3 || empty.DefaultTime != model.Unset || empty.MaxNodes != model.Unlimited {
		t.Errorf("empty = %+v", empty)
	}
	if d, ok := c.DefaultPartition(); !ok || d.Name != "all" {
		t.Errorf("DefaultPartition = %v, %v", d, ok)
	}
	if p, ok := c.Partition("sets"); !ok || p.Pos.Line != 9 {
		t.Errorf("Partition(sets) = %v, %v", p, ok)
	}
	if want := []string{`/etc/slurm/slurm.conf:10: unknown key "Frobnicate"`}; !reflect.DeepEqual(c.Warnings, want) {
		t.Errorf("Warnings = %q", c.Warnings)
	}
}

func TestOverSubscribe(t *testing.T) {
	for in, want := range map[string]string{"no": "NO", "Yes": "YES", "yes:4": "YES:4", "FORCE:04": "FORCE:4", "exclusive": "EXCLUSIVE"} {
		if got, ok := parseOverSubscribe(in); !ok || got != want {
			t.Errorf("parseOverSubscribe(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "maybe", "NO:2", "YES:", "FORCE:x", "FORCE:-1"} {
		if _, ok := parseOverSubscribe(in); ok {
			t.Errorf("parseOverSubscribe(%q) accepted", in)
		}
	}
}

func TestModelConversion(t *testing.T) {
	c := mustParse(t, `ClusterName=x
SlurmctldHost=h
NodeName=f State=FUTURE
NodeName=d State=DOWN Reason=dead
NodeName=r State=DRAIN
NodeName=i State=IDLE CPUs=4 RealMemory=8G Gres=gpu:2 Features=a,b Weight=3 NodeAddr=10.0.0.1
NodeName=c State=CLOUD
PartitionName=p Nodes=f,d MaxTime=1-0 AllowAccounts=x State=DOWN
`, nil)
	nodes := c.ModelNodes()
	want := map[string]struct {
		state model.NodeState
		drain bool
	}{"f": {model.NodeFuture, false}, "d": {model.NodeDown, false}, "r": {model.NodeUnknown, true}, "i": {model.NodeUnknown, false}, "c": {model.NodeUnknown, false}}
	for _, n := range nodes {
		w := want[n.Name]
		if n.State != w.state || n.Drain != w.drain || n.Responding {
			t.Errorf("%s: state %v drain %v responding %v", n.Name, n.State, n.Drain, n.Responding)
		}
	}
	i := nodes[3]
	wantI := &model.Node{Name: "i", Addr: "10.0.0.1", Hostname: "i", CPUs: 4, Sockets: 4, Cores: 1, Threads: 1, Memory: 8192,
		Gres: "gpu:2", Features: []string{"a", "b"}, Weight: 3,
		GPUs: []model.GPU{{Index: 0, Major: -1, Minor: -1}, {Index: 1, Major: -1, Minor: -1}}}
	if !reflect.DeepEqual(i, wantI) {
		t.Errorf("node i = %+v\nwant %+v", i, wantI)
	}
	if nodes[1].Reason != "dead" {
		t.Errorf("reason lost: %+v", nodes[1])
	}
	i.Features[0] = "changed"
	if c.Nodes[3].Features[0] != "a" {
		t.Error("ModelNodes shares Features with the config")
	}
	parts := c.ModelPartitions()
	wantP := &model.Partition{Name: "p", Nodes: []string{"f", "d"}, NodesExpr: "f,d", MaxTime: 86400, DefaultTime: model.Unset,
		State: model.PartDown, PriorityTier: 1, PriorityJobFactor: 1, MaxNodes: model.Unlimited, AllowAccounts: []string{"x"}, OverSubscribe: "NO"}
	if !reflect.DeepEqual(parts[0], wantP) {
		t.Errorf("partition = %+v\nwant %+v", parts[0], wantP)
	}
}
