package slurmconf

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files")

// memFS serves Include lines from a map, keyed by cleaned path.
func memFS(files map[string]string) Option {
	return WithOpener(func(path string) (io.ReadCloser, error) {
		s, ok := files[path]
		if !ok {
			return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
		}
		return io.NopCloser(strings.NewReader(s)), nil
	})
}

func parse(t *testing.T, text string, files map[string]string) (*Config, error) {
	t.Helper()
	return Parse(strings.NewReader(text), "/etc/slurm/slurm.conf", memFS(files))
}

func mustParse(t *testing.T, text string, files map[string]string) *Config {
	t.Helper()
	c, err := parse(t, text, files)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

func TestDefaults(t *testing.T) {
	c := mustParse(t, "", nil)
	want := newConfig("/etc/slurm/slurm.conf")
	want.ClusterName = "cluster"
	want.Warnings = c.Warnings
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got %+v\nwant %+v", c, want)
	}
	if c.SlurmctldPort != 6817 || c.SlurmdPort != 6818 || c.SlurmdTimeout != 300*time.Second ||
		c.KillWait != 30*time.Second || c.MinJobAge != 300*time.Second || c.MaxArraySize != 1001 ||
		c.MaxJobCount != 10000 || c.FirstJobID != 1 || c.SlurmUser != "root" || c.ReturnToService != 0 {
		t.Fatalf("defaults differ from Slurm's: %+v", c)
	}
	wantWarn := []string{
		`/etc/slurm/slurm.conf: ClusterName is not set; using "cluster"`,
		`/etc/slurm/slurm.conf: no SlurmctldHost given`,
	}
	if !reflect.DeepEqual(c.Warnings, wantWarn) {
		t.Fatalf("warnings %q", c.Warnings)
	}
	if got := c.SocketPath(); got != "/var/spool/drover.sock" {
		t.Fatalf("SocketPath = %q", got)
	}
}

func TestGlobalKeys(t *testing.T) {
	c := mustParse(t, `
clustername=Alpha
SLURMCTLDHOST=a(10.1.1.1) SlurmctldHost=b
SlurmctldPort = 7000-7003
SlurmdPort=7100
SlurmdTimeout=600 KillWait=5 MinJobAge=60 InactiveLimit=120
MaxArraySize=0 MaxJobCount=50000 FirstJobId=1000 ReturnToService=2
DefMemPerCPU=1G DefMemPerNode=4096 MaxMemPerCPU=UNLIMITED MaxMemPerNode=8G
SlurmUser=slurm StateSaveLocation=/state SlurmdSpoolDir=/spool
DroverSocket=/run/drover.sock
Epilog="/usr/local/bin/epilog --quiet"
`, nil)
	checks := []struct {
		name      string
		got, want any
	}{
		{"ClusterName", c.ClusterName, "alpha"},
		{"ControllerHosts", c.ControllerHosts, []ControllerHost{{"a", "10.1.1.1"}, {"b", ""}}},
		{"SlurmctldPort", c.SlurmctldPort, 7000},
		{"SlurmdPort", c.SlurmdPort, 7100},
		{"SlurmdTimeout", c.SlurmdTimeout, 600 * time.Second},
		{"KillWait", c.KillWait, 5 * time.Second},
		{"MinJobAge", c.MinJobAge, time.Minute},
		{"InactiveLimit", c.InactiveLimit, 2 * time.Minute},
		{"MaxArraySize", c.MaxArraySize, 0},
		{"MaxJobCount", c.MaxJobCount, 50000},
		{"FirstJobID", c.FirstJobID, uint32(1000)},
		{"ReturnToService", c.ReturnToService, 2},
		{"DefMemPerCPU", c.DefMemPerCPU, int64(1024)},
		{"DefMemPerNode", c.DefMemPerNode, int64(4096)},
		{"MaxMemPerCPU", c.MaxMemPerCPU, int64(0)},
		{"MaxMemPerNode", c.MaxMemPerNode, int64(8192)},
		{"SlurmUser", c.SlurmUser, "slurm"},
		{"StateSaveLocation", c.StateSaveLocation, "/state"},
		{"SlurmdSpoolDir", c.SlurmdSpoolDir, "/spool"},
		{"SocketPath", c.SocketPath(), "/run/drover.sock"},
		{"Warnings", c.Warnings, []string(nil)},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %#v; want %#v", ch.name, ch.got, ch.want)
		}
	}
	for key, want := range map[string]string{"epilog": "/usr/local/bin/epilog --quiet", "CLUSTERNAME": "Alpha", "slurmctldhost": "a(10.1.1.1)"} {
		if got, ok := c.Get(key); !ok || got != want {
			t.Errorf("Get(%q) = %q, %v; want %q", key, got, ok, want)
		}
	}
	if _, ok := c.Get("NoSuchKey"); ok {
		t.Error("Get found a key never written")
	}
}

func TestRawOrderAndDuplicates(t *testing.T) {
	c := mustParse(t, "ClusterName=a\nSlurmctldHost=x\nKillWait=10\nSlurmctldHost=y\nkillwait=20\nFooBar=1\n", nil)
	want := []KV{{"ClusterName", "a"}, {"SlurmctldHost", "x"}, {"killwait", "20"}, {"SlurmctldHost", "y"}, {"FooBar", "1"}}
	if !reflect.DeepEqual(c.Raw, want) {
		t.Fatalf("Raw = %q; want %q", c.Raw, want)
	}
	if c.KillWait != 20*time.Second {
		t.Fatalf("last value should win: %v", c.KillWait)
	}
	if want := []string{`/etc/slurm/slurm.conf:6: unknown key "FooBar"`}; !reflect.DeepEqual(c.Warnings, want) {
		t.Fatalf("Warnings = %q", c.Warnings)
	}
}

func TestLegacyController(t *testing.T) {
	c := mustParse(t, "ClusterName=c\nControlMachine=m1\nControlAddr=10.0.0.1\nBackupController=m2\n", nil)
	want := []ControllerHost{{"m1", "10.0.0.1"}, {"m2", ""}}
	if !reflect.DeepEqual(c.ControllerHosts, want) {
		t.Fatalf("ControllerHosts = %+v", c.ControllerHosts)
	}
}

func TestSyntax(t *testing.T) {
	c := mustParse(t, "ClusterName=c # trailing comment\n"+
		"   # indented comment\n"+
		"SlurmctldHost=h\r\n"+
		"SchedulerParameters=\"bf_window=60,defer\"  \n"+
		"MpiParams=ports=\\#1-\\#2\n"+
		"Prolog=\"/bin/a # not a comment\"\n"+
		"NodeName=n[1-2] \\\n"+
		"   CPUs=4 \\\n"+
		"   RealMemory=100\n"+
		"PartitionName=p Nodes=n[1-2]\n", nil)
	for key, want := range map[string]string{
		"SlurmctldHost":       "h",
		"SchedulerParameters": "bf_window=60,defer",
		"MpiParams":           "ports=#1-#2",
		"Prolog":              "/bin/a # not a comment",
	} {
		if got, _ := c.Get(key); got != want {
			t.Errorf("%s = %q; want %q", key, got, want)
		}
	}
	if len(c.Nodes) != 2 || c.Nodes[1].CPUs != 4 || c.Nodes[1].RealMemory != 100 || c.Nodes[1].Pos.Line != 7 {
		t.Fatalf("continued NodeName line: %+v", c.Nodes)
	}
}

func TestInclude(t *testing.T) {
	files := map[string]string{
		"/etc/slurm/nodes.conf":     "NodeName=n[1-3] CPUs=8\nInclude sub/parts.conf\n",
		"/etc/slurm/sub/parts.conf": "PartitionName=p Nodes=ALL\nInclude \"../%c.conf\"\n",
		"/etc/slurm/demo.conf":      "Bogus=1\n",
		"/abs/extra.conf":           "KillWait=7\n",
	}
	c := mustParse(t, "ClusterName=Demo\nSlurmctldHost=h\nInclude nodes.conf\nINCLUDE /abs/extra.conf\n", files)
	if len(c.Nodes) != 3 || len(c.Partitions) != 1 || len(c.Partitions[0].Nodes) != 3 {
		t.Fatalf("nodes %v partitions %v", c.Nodes, c.Partitions)
	}
	if c.Nodes[0].Pos != (Pos{"/etc/slurm/nodes.conf", 1}) {
		t.Fatalf("node position %v", c.Nodes[0].Pos)
	}
	if c.KillWait != 7*time.Second {
		t.Fatalf("absolute include not read")
	}
	if want := []string{`/etc/slurm/demo.conf:1: unknown key "Bogus"`}; !reflect.DeepEqual(c.Warnings, want) {
		t.Fatalf("Warnings = %q", c.Warnings)
	}
}

func TestLoadFromDisk(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "slurm.conf"), []byte("ClusterName=x\nSlurmctldHost=h\nInclude part.conf\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "part.conf"), []byte("NodeName=a\nPartitionName=p Nodes=a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(filepath.Join(dir, "slurm.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Partitions) != 1 || c.Partitions[0].Nodes[0] != "a" {
		t.Fatalf("partitions %+v", c.Partitions)
	}
	if _, err := Load(filepath.Join(dir, "missing.conf")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Load(missing) = %v", err)
	}
}

func TestErrors(t *testing.T) {
	files := map[string]string{
		"/etc/slurm/loop1.conf": "ClusterName=x\nInclude loop2.conf\n",
		"/etc/slurm/loop2.conf": "\nInclude /etc/slurm/loop1.conf\n",
		"/etc/slurm/self.conf":  "Include self.conf\n",
		"/etc/slurm/bad.conf":   "KillWait=soon\n",
	}
	const main = "/etc/slurm/slurm.conf"
	cases := []struct {
		name, text string
		file       string // defaults to main
		line       int
		msg        string
	}{
		{"no equals", "ClusterName", "", 1, "expected key=value"},
		{"bad key", "\n=x", "", 2, "expected a key"},
		{"open quote", "Prolog=\"abc", "", 1, "unterminated quote"},
		{"junk after quote", "Prolog=\"a\"b", "", 1, "after quoted value"},
		{"bad int", "\n\nKillWait=ten", "", 3, `invalid KillWait "ten"`},
		{"negative", "MinJobAge=-1", "", 1, "invalid MinJobAge"},
		{"bad port", "SlurmdPort=70000", "", 1, "invalid SlurmdPort"},
		{"bad port range", "SlurmctldPort=x-1", "", 1, "invalid SlurmctldPort"},
		{"bad return", "ReturnToService=3", "", 1, "invalid ReturnToService"},
		{"bad mem", "DefMemPerCPU=lots", "", 1, "invalid DefMemPerCPU"},
		{"bad ctl host", "SlurmctldHost=a(b", "", 1, "invalid SlurmctldHost"},
		{"mixed controllers", "SlurmctldHost=a\nControlMachine=b", "", 2, "cannot be combined"},
		{"addr alone", "ControlAddr=1.2.3.4", "", 1, "without its ControlMachine"},
		{"node key on global line", "ClusterName=x NodeName=a", "", 1, "must start its own line"},
		{"include missing", "\nInclude nope.conf", "", 2, "does not exist"},
		{"include empty", "Include   ", "", 1, "Include without a file name"},
		{"include loop", "Include loop1.conf", "/etc/slurm/loop2.conf", 2, "include loop"},
		{"include self", "Include self.conf", "/etc/slurm/self.conf", 1, "include loop"},
		{"error in include", "ClusterName=x\nInclude bad.conf", "/etc/slurm/bad.conf", 1, "invalid KillWait"},
		{"bad NodeName", "NodeName=n[1-", "", 1, "NodeName: invalid hostlist"},
		{"empty NodeName", "NodeName=", "", 1, "without a name"},
		{"dup node", "NodeName=a,b\nNodeName=c\nNodeName=b", "", 3, `duplicate node name "b" (first defined at /etc/slurm/slurm.conf:1)`},
		{"dup node one line", "NodeName=a,a", "", 1, `duplicate node name "a"`},
		{"bad state", "NodeName=a State=BROKEN", "", 1, `invalid State "BROKEN"`},
		{"bad cpus", "NodeName=a CPUs=0", "", 1, "invalid CPUs"},
		{"bad default", "NodeName=DEFAULT RealMemory=x\nNodeName=a", "", 1, "invalid RealMemory"},
		{"sockets both", "NodeName=a Sockets=2 SocketsPerBoard=1", "", 1, "mutually exclusive"},
		{"addr count", "NodeName=n[1-3] NodeAddr=a[1-2]", "", 1, "NodeAddr lists 2 values for 3 nodes"},
		{"bad port list", "NodeName=n[1-2] Port=x,y", "", 1, "invalid Port"},
		{"twice", "NodeName=a NodeName=b", "", 1, "given twice"},
		{"down unknown", "NodeName=a\nDownNodes=b", "", 2, `DownNodes: unknown node "b"`},
		{"down state", "DownNodes=a State=IDLE", "", 1, "invalid DownNodes State"},
		{"nodeset empty", "NodeSet=s", "", 1, "needs Nodes= or Feature="},
		{"nodeset dup", "NodeSet=s Feature=a\nNodeSet=s Feature=b", "", 2, "duplicate NodeSet"},
		{"nodeset unknown node", "NodeSet=s Nodes=zz", "", 1, `unknown node "zz"`},
		{"part no name", "PartitionName=", "", 1, "without a name"},
		{"part undefined node", "NodeName=n[1-2]\n\nPartitionName=p Nodes=n[1-3]", "", 3, `partition "p": Nodes: unknown node "n3"`},
		{"part before node", "PartitionName=p Nodes=x\nNodeName=y", "", 1, `unknown node "x"`},
		{"part bad hostlist", "PartitionName=p Nodes=n[2-1]", "", 1, "reversed range"},
		{"two defaults", "PartitionName=a Default=YES\nPartitionName=b Default=yes", "", 2, "so is the one at /etc/slurm/slurm.conf:1"},
		{"dup partition", "PartitionName=a\nPartitionName=a", "", 2, `duplicate partition "a"`},
		{"bad maxtime", "PartitionName=a MaxTime=forever", "", 1, "invalid MaxTime"},
		{"bad defaulttime", "PartitionName=a DefaultTime=x", "", 1, "invalid DefaultTime"},
		{"bad part state", "PartitionName=a State=OPEN", "", 1, "invalid State"},
		{"bad priority", "PartitionName=a Priority=70000", "", 1, "invalid Priority"},
		{"bad maxnodes", "PartitionName=a MaxNodes=0", "", 1, "invalid MaxNodes"},
		{"min over max", "PartitionName=a MinNodes=5 MaxNodes=4", "", 1, "MinNodes 5 exceeds MaxNodes 4"},
		{"bad oversubscribe", "PartitionName=a OverSubscribe=YES:0", "", 1, "invalid OverSubscribe"},
		{"bad bool", "PartitionName=a Default=maybe", "", 1, "invalid Default"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse(t, c.text, files)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v; want *ParseError", err)
			}
			file := c.file
			if file == "" {
				file = main
			}
			if pe.File != file || pe.Line != c.line || !strings.Contains(pe.Msg, c.msg) {
				t.Fatalf("got %q; want %s:%d: ...%s...", err, file, c.line, c.msg)
			}
			if !strings.HasPrefix(err.Error(), fmt.Sprintf("%s:%d: ", file, c.line)) {
				t.Fatalf("Error() = %q lacks file:line prefix", err)
			}
		})
	}
}

func TestLongLine(t *testing.T) {
	_, err := parse(t, "ClusterName=x\nProlog="+strings.Repeat("a", maxLineLen+10)+"\n", nil)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 2 {
		t.Fatalf("got %v", err)
	}
}

// TestGolden parses testdata/example.conf and compares a readable dump with
// testdata/example.golden; run with -update to rewrite it.
func TestGolden(t *testing.T) {
	c, err := Load(filepath.Join("testdata", "example.conf"))
	if err != nil {
		t.Fatal(err)
	}
	got := dump(c)
	golden := filepath.Join("testdata", "example.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("dump differs from %s (run go test -update):\n%s", golden, got)
	}
}

func dump(c *Config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ClusterName=%s SocketPath=%s\n", c.ClusterName, c.SocketPath())
	fmt.Fprintf(&b, "Controllers=%v SlurmctldPort=%d SlurmdPort=%d\n", c.ControllerHosts, c.SlurmctldPort, c.SlurmdPort)
	fmt.Fprintf(&b, "SlurmdTimeout=%v KillWait=%v MinJobAge=%v InactiveLimit=%v\n", c.SlurmdTimeout, c.KillWait, c.MinJobAge, c.InactiveLimit)
	fmt.Fprintf(&b, "MaxArraySize=%d MaxJobCount=%d FirstJobID=%d SlurmUser=%s ReturnToService=%d\n", c.MaxArraySize, c.MaxJobCount, c.FirstJobID, c.SlurmUser, c.ReturnToService)
	fmt.Fprintf(&b, "DefMemPerCPU=%d DefMemPerNode=%d MaxMemPerCPU=%d MaxMemPerNode=%d\n", c.DefMemPerCPU, c.DefMemPerNode, c.MaxMemPerCPU, c.MaxMemPerNode)
	b.WriteString("-- raw\n")
	for _, kv := range c.Raw {
		fmt.Fprintf(&b, "%s=%s\n", kv.Key, kv.Value)
	}
	b.WriteString("-- nodes\n")
	for _, n := range c.Nodes {
		fmt.Fprintf(&b, "%s addr=%s host=%s port=%d cpus=%d %d:%d:%d boards=%d mem=%d tmp=%d gres=%q features=%v weight=%d state=%s reason=%q at %s\n",
			n.Name, n.Addr, n.Hostname, n.Port, n.CPUs, n.Sockets, n.CoresPerSocket, n.ThreadsPerCore, n.Boards,
			n.RealMemory, n.TmpDisk, n.Gres, n.Features, n.Weight, n.State, n.Reason, n.Pos)
	}
	b.WriteString("-- partitions\n")
	for _, p := range c.Partitions {
		fmt.Fprintf(&b, "%s nodes=%q %v default=%v maxtime=%d defaulttime=%d state=%s tier=%d factor=%d maxnodes=%d minnodes=%d accounts=%q groups=%q oversubscribe=%s at %s\n",
			p.Name, p.NodesExpr, p.Nodes, p.Default, p.MaxTime, p.DefaultTime, p.State, p.PriorityTier, p.PriorityJobFactor,
			p.MaxNodes, p.MinNodes, p.AllowAccounts, p.AllowGroups, p.OverSubscribe, p.Pos)
	}
	b.WriteString("-- warnings\n")
	for _, w := range c.Warnings {
		b.WriteString(w + "\n")
	}
	return b.String()
}

func TestSocketPathFitsUnixLimit(t *testing.T) {
	short := &Config{StateSaveLocation: "/var/spool/drover"}
	if got := short.SocketPath(); got != "/var/spool/drover/drover.sock" {
		t.Errorf("short: %q", got)
	}
	long := &Config{StateSaveLocation: "/" + strings.Repeat("d", 120)}
	got := long.SocketPath()
	if len(got) >= 100 || !strings.HasPrefix(got, LongSocketDir+"/ctld-") || got != long.SocketPath() {
		t.Errorf("long: %q", got)
	}
	other := &Config{StateSaveLocation: "/" + strings.Repeat("e", 120)}
	if other.SocketPath() == got {
		t.Error("two state directories share a socket")
	}
	if (&Config{DroverSocket: "/x.sock", StateSaveLocation: long.StateSaveLocation}).SocketPath() != "/x.sock" {
		t.Error("DroverSocket ignored")
	}
}

// TestControllerOnlyReadsWhereTheControllerIs: the commands' reading
// finds the controller as a full reading does, without nodes or
// partitions.
func TestControllerOnlyReadsWhereTheControllerIs(t *testing.T) {
	full, err := Load("testdata/example.conf")
	if err != nil {
		t.Fatal(err)
	}
	lean, err := Load("testdata/example.conf", ControllerOnly())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(full.ControllerHosts, lean.ControllerHosts) || full.SlurmctldPort != lean.SlurmctldPort ||
		full.SocketPath() != lean.SocketPath() || full.CAPath() != lean.CAPath() || full.ClusterName != lean.ClusterName {
		t.Errorf("controller-only reading differs: %+v vs %+v", lean, full)
	}
	if len(lean.Nodes) != 0 || len(lean.Partitions) != 0 || len(full.Nodes) == 0 {
		t.Errorf("controller-only reading has %d nodes, %d partitions (full: %d nodes)", len(lean.Nodes), len(lean.Partitions), len(full.Nodes))
	}
}

// TestControllerOnlySkipsUnknownKeys: the daemons' reading warns of an
// unknown key; the commands' reading (which shows no warnings) does not
// look for them, and reads the rest the same.
func TestControllerOnlySkipsUnknownKeys(t *testing.T) {
	const conf = "ClusterName=c\nSlurmctldHost=h\nNoSuchKey=1\nSlurmctldPort=7000\n"
	full, err := Parse(strings.NewReader(conf), "slurm.conf")
	if err != nil {
		t.Fatal(err)
	}
	lean, err := Parse(strings.NewReader(conf), "slurm.conf", ControllerOnly())
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Warnings) != 1 || !strings.Contains(full.Warnings[0], `unknown key "NoSuchKey"`) {
		t.Errorf("full reading warnings: %q", full.Warnings)
	}
	if len(lean.Warnings) != 0 {
		t.Errorf("controller-only reading warnings: %q", lean.Warnings)
	}
	if lean.SlurmctldPort != 7000 || lean.ClusterName != "c" {
		t.Errorf("controller-only reading: port %d, cluster %q", lean.SlurmctldPort, lean.ClusterName)
	}
}
