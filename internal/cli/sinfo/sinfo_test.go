package sinfo

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

func node(name string, cpus, alloc int, mem int64) *model.Node {
	return &model.Node{Name: name, CPUs: cpus, Sockets: cpus, Cores: 1, Threads: 1, Memory: mem,
		Weight: 1, State: model.NodeUp, Responding: true, AllocCPUs: alloc}
}

func part(name string, def bool, maxTime int64, nodes ...string) *model.Partition {
	return &model.Partition{Name: name, Nodes: nodes, Default: def, MaxTime: maxTime,
		DefaultTime: model.Unset, MaxNodes: model.Unlimited, MinNodes: 0}
}

// vmClient is the one-node cluster of sinfo.txt and sinfo_N_l.txt.
func vmClient() *fakeClient {
	vm := node("vm", 64, 8, 16000)
	vm.Gres = "gpu:4" // as in sinfo_json.txt: no device files, two GPUs in use
	vm.GPUs = []model.GPU{{Index: 0}, {Index: 1}, {Index: 2}, {Index: 3}}
	vm.AllocGPUs = model.BitmapOf(0, 1)
	return &fakeClient{parts: []*model.Partition{part("debug", true, model.Unlimited, "vm")}, nodes: []*model.Node{vm}}
}

// multiClient is the eight-node cluster of multi_slurmd_test.txt.
func multiClient() *fakeClient {
	c := &fakeClient{}
	var names []string
	for i := 1; i <= 8; i++ {
		n := node(fmt.Sprintf("vn%d", i), 8, 0, 2000)
		c.nodes = append(c.nodes, n)
		names = append(names, n.Name)
	}
	c.parts = []*model.Partition{part("multi", true, model.Unlimited, names...)}
	return c
}

func TestReferenceOutputs(t *testing.T) {
	tests := []struct {
		name   string
		client *fakeClient
		args   []string
		want   string
	}{
		{"default", vmClient(), nil,
			"PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n" +
				"debug*       up   infinite      1    mix vm\n"},
		{"summarize", vmClient(), []string{"-s"},
			"PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST\n" +
				"debug*       up   infinite          1/0/0/1 vm\n"},
		{"noheader format", vmClient(), []string{"-h", "-o", "%P %a %l %D %t %N"}, "debug* up infinite 1 mix vm\n"},
		{"node fields", vmClient(), []string{"-o", "%N %c %m %G %C %O %e"},
			"NODELIST CPUS MEMORY GRES CPUS(A/I/O/T) CPU_LOAD FREE_MEM\n" +
				"vm 64 16000 gpu:4 8/56/0/64 N/A N/A\n"},
		{"reasons none", vmClient(), []string{"-R"}, "REASON               USER      TIMESTAMP           NODELIST\n"},
		{"node long", vmClient(), []string{"-N", "-l"}, "Sun Nov 22 05:10:14 2026\n" +
			"NODELIST   NODES PARTITION       STATE CPUS    S:C:T MEMORY TMP_DISK WEIGHT AVAIL_FE REASON              \n" +
			"vm             1    debug*       mixed 64     64:1:1  16000        0      1   (null) none                \n"},
		{"node", vmClient(), []string{"-N"}, "NODELIST   NODES PARTITION STATE \nvm             1    debug* mix   \n"},
		{"multi", multiClient(), nil, "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n" +
			"multi*       up   infinite      8   idle vn[1-8]\n"},
		{"multi node long", multiClient(), []string{"-Nl"}, "Sun Nov 22 05:10:14 2026\n" +
			"NODELIST   NODES PARTITION       STATE CPUS    S:C:T MEMORY TMP_DISK WEIGHT AVAIL_FE REASON              \n" +
			"vn1            1    multi*        idle 8       8:1:1   2000        0      1   (null) none                \n" +
			"vn2            1    multi*        idle 8       8:1:1   2000        0      1   (null) none                \n" +
			"vn3            1    multi*        idle 8       8:1:1   2000        0      1   (null) none                \n" +
			"vn4            1    multi*        idle 8       8:1:1   2000        0      1   (null) none                \n" +
			"vn5            1    multi*        idle 8       8:1:1   2000        0      1   (null) none                \n" +
			"vn6            1    multi*        idle 8       8:1:1   2000        0      1   (null) none                \n" +
			"vn7            1    multi*        idle 8       8:1:1   2000        0      1   (null) none                \n" +
			"vn8            1    multi*        idle 8       8:1:1   2000        0      1   (null) none                \n"},
		{"ood cluster info", multiClient(), []string{"-aho", "%F/%C"}, "0/8/0/8/0/64/0/64\n"},
		{"snakemake partitions", vmClient(), []string{"-o", "%P"}, "PARTITION\ndebug*\n"},
		{"ood node Format", vmClient(), []string{"-ahNO", "nodehost:6,gres:8,gresused:20,statelong"},
			"vm    gpu:4   gpu:2               mixed               \n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runSinfo(t, tt.client, nil, tt.args...)
			if code != 0 || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if out != tt.want {
				t.Errorf("got\n%s\nwant\n%s", out, tt.want)
			}
		})
	}
}

// mixedClient has nodes in every state over three partitions, one empty.
func mixedClient() *fakeClient {
	n := []*model.Node{
		node("n1", 8, 0, 4000), node("n2", 16, 0, 8000), node("n3", 8, 4, 4000),
		node("n4", 8, 8, 4000), node("n5", 8, 0, 4000), node("n6", 8, 0, 4000),
		node("n10", 8, 0, 4000),
	}
	n[4].Drain, n[4].Reason, n[4].ReasonTime = true, "bad disk", refNow.Unix()-3600-14
	n[5].State, n[5].Responding = model.NodeDown, false
	n[5].Reason, n[5].ReasonUID, n[5].ReasonTime = "Not responding", 64030, refNow.Unix()-600-14
	batch := part("batch", true, 86400, "n1", "n2", "n3", "n4", "n5", "n6")
	gpu := part("gpu-highmem", false, 3600, "n3", "n10")
	gpu.State, gpu.AllowGroups, gpu.MinNodes, gpu.MaxNodes = model.PartDrain, []string{"gpu", "staff"}, 1, 4
	empty := part("empty", false, model.Unlimited)
	empty.State = model.PartInactive
	return &fakeClient{parts: []*model.Partition{batch, gpu, empty}, nodes: n}
}

func TestGrouping(t *testing.T) {
	header := "PARTITION   AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
	tests := []struct {
		args []string
		want string
	}{
		{nil, header +
			"batch*         up 1-00:00:00      1  down* n6\n" +
			"batch*         up 1-00:00:00      1  drain n5\n" +
			"batch*         up 1-00:00:00      1    mix n3\n" +
			"batch*         up 1-00:00:00      1  alloc n4\n" +
			"batch*         up 1-00:00:00      2   idle n[1-2]\n" +
			"gpu-highmem drain    1:00:00      1    mix n3\n" +
			"gpu-highmem drain    1:00:00      1   idle n10\n" +
			"empty       inact   infinite      0    n/a \n"},
		{[]string{"-t", "IDLE"}, header +
			"batch*         up 1-00:00:00      1  drain n5\n" +
			"batch*         up 1-00:00:00      2   idle n[1-2]\n" +
			"gpu-highmem drain    1:00:00      1   idle n10\n" +
			"empty       inact   infinite      0    n/a \n"},
		{[]string{"-h", "-t", "alloc", "-p", "batch,gpu-highmem", "-o", "%R %t %N"}, "batch mix n3\nbatch alloc n4\ngpu-highmem mix n3\n"},
		{[]string{"-h", "-t", "drain&idle", "-o", "%N"}, "n5\n"},
		{[]string{"-h", "-d", "-o", "%N %T"}, "n6 down*\n"},
		{[]string{"-h", "-r", "-n", "n[5-6],n10", "-o", "%N %T"}, "n5 drained\nn10 idle\n"},
		{[]string{"-h", "-p", "batch", "-t", "idle", "-o", "%P %c %m %D %N"}, "batch* 8+ 4000+ 3 n[1-2,5]\n"},
		{[]string{"-h", "-e", "-p", "batch", "-t", "idle", "-o", "%P %c %m %D %N"}, "batch* 8 4000 2 n[1,5]\nbatch* 16 8000 1 n2\n"},
		{[]string{"-h", "-o", "%D %t %N"}, "1 down* n6\n1 drain n5\n1 mix n3\n1 alloc n4\n3 idle n[1-2,10]\n"},
		{[]string{"-h", "-s", "-S", "-P"}, "gpu-highmem drain    1:00:00          1/1/0/2 n[3,10]\n" +
			"empty       inact   infinite          0/0/0/0 \n" +
			"batch*         up 1-00:00:00          2/2/2/6 n[1-6]\n"},
		// No partition field: nodes of all partitions make one line.
		{[]string{"-h", "-o", "%C %A"}, "12/36/16/64 2/3\n"},
		{[]string{"-h", "-o", "%R %C %A"}, "batch 12/28/16/56 2/2\ngpu-highmem 4/12/0/16 1/1\nempty 0/0/0/0 0/0\n"},
		{[]string{"-R"}, "REASON               USER      TIMESTAMP           NODELIST\n" +
			"Not responding       slurm     2026-11-22T05:00:00 n6\n" +
			"bad disk             root      2026-11-22T04:10:00 n5\n"},
		{[]string{"-R", "-l", "-h"}, "Not responding       slurm(64030) 2026-11-22T05:00:00 down*  n6\n" +
			"bad disk             root(0)      2026-11-22T04:10:00 drain  n5\n"},
		{[]string{"-N", "-h", "-n", "n3,n10"}, "n3             1      batch* mix   \nn3             1 gpu-highmem mix   \nn10            1 gpu-highmem idle  \n"},
		{[]string{"-h", "-O", "partitionname:12,available:.6,size:.8,groups:.10,time:.9 ,defaulttime,prioritytier:3", "-p", "gpu-highmem"},
			"gpu-highmem  drain     1-4 gpu,staff  1:00:00 n/a                 0  \n"},
		{[]string{"-l", "-h", "-p", "empty"}, "empty     inact   infinite 1-infinite   no       NO        all      0         n/a \n"},
		{[]string{"-h", "-o", "%n|%o|%z|%X|%w|%v|%V|%f|%E|%H|%u", "-n", "n1"}, "n1|n1|8:1:1|8|1|N/A|N/A|(null)|none|Unknown|Unknown\n"},
	}
	for _, tt := range tests {
		out, errOut, code := runSinfo(t, mixedClient(), nil, tt.args...)
		if code != 0 || errOut != "" || out != tt.want {
			t.Errorf("sinfo %q: exit %d stderr %q, got\n%s\nwant\n%s", tt.args, code, errOut, out, tt.want)
		}
	}
}

func TestErrorsAndEnv(t *testing.T) {
	tests := []struct {
		name    string
		client  *fakeClient
		environ []string
		args    []string
		wantErr string
	}{
		{"no controller", nil, nil, nil, "slurm_load_partitions: Unable to contact slurm controller (connect failure)\n"},
		{"node error", &fakeClient{nodeErr: fmt.Errorf("Socket timed out on send/recv operation")}, nil, nil,
			"slurm_load_node: Socket timed out on send/recv operation\n"},
		{"bad state", vmClient(), nil, []string{"-t", "bogus"}, "sinfo: error: Bad state string: \"bogus\"\n"},
		{"bad format", vmClient(), nil, []string{"-o", "%P %!"}, "sinfo: error: Invalid node format specification: !\n"},
		{"bad Format", vmClient(), nil, []string{"-O", "partition,bogus"}, "sinfo: error: Invalid node format specification: bogus\n"},
		{"long and format", vmClient(), nil, []string{"-l", "-o", "%P"}, "sinfo: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please remove one and retry.\n"},
		{"all and partition", vmClient(), nil, []string{"-a", "-p", "debug"}, "sinfo: error: Conflicting options, -a and -p, specified. Please choose one or the other.\n"},
		{"env conflict", vmClient(), []string{"SINFO_ALL=1", "SINFO_PARTITION=debug"}, nil,
			"sinfo: error: Conflicting options, SINFO_ALL and SINFO_PARTITION, specified. Please choose one or the other.\n"},
	}
	for _, tt := range tests {
		var client *fakeClient
		if tt.client != nil {
			client = tt.client
		}
		var out, errOut string
		var code int
		if client == nil {
			out, errOut, code = runSinfo(t, nil, tt.environ, tt.args...)
		} else {
			out, errOut, code = runSinfo(t, client, tt.environ, tt.args...)
		}
		if code != 1 || !strings.HasPrefix(errOut, tt.wantErr) || out != "" {
			t.Errorf("%s: exit %d stdout %q stderr %q, want stderr %q", tt.name, code, out, errOut, tt.wantErr)
		}
	}

	out, _, _ := runSinfo(t, mixedClient(), []string{"SINFO_FORMAT=%R:%D", "SINFO_PARTITION=gpu-highmem", "SINFO_SORT=N"}, "-h")
	if want := "gpu-highmem:2\n"; out != want {
		t.Errorf("env: got %q want %q", out, want)
	}
	out, _, _ = runSinfo(t, mixedClient(), []string{"SINFO_FORMAT=%R:%D"}, "-h", "-s", "-p", "batch")
	if want := "batch*       up 1-00:00:00          2/2/2/6 n[1-6]\n"; out != want {
		t.Errorf("-s beats SINFO_FORMAT: got %q want %q", out, want)
	}
	out, _, code := runSinfo(t, nil, nil, "-V")
	if out != "slurm 22.05.8\n" || code != 0 {
		t.Errorf("-V: %q exit %d", out, code)
	}
	out, _, code = runSinfo(t, &fakeClient{}, nil, "-T")
	if out != "No reservations in the system\n" || code != 0 {
		t.Errorf("-T: %q exit %d", out, code)
	}
	out, _, code = runSinfo(t, nil, nil, "--help")
	if !strings.Contains(out, "--Format") || code != 0 {
		t.Errorf("--help: exit %d", code)
	}
}

func TestHelpers(t *testing.T) {
	for _, c := range []struct{ a, b string }{{"n2", "n10"}, {"a9", "b1"}, {"vm", "vn1"}, {"n9", "n009x"}} {
		if compareNodeNames(c.a, c.b) >= 0 || compareNodeNames(c.b, c.a) <= 0 {
			t.Errorf("compareNodeNames(%q, %q) not ordered", c.a, c.b)
		}
	}
	n := &model.Node{Gres: "gpu:a100:4,nic:1"}
	if got := gresUsed(n); got != "gpu:a100:0,nic:0" {
		t.Errorf("gresUsed = %q", got)
	}
	gpus := []model.GPU{{Index: 0, Type: "v100"}, {Index: 1, Type: "a100"}, {Index: 2, Type: "a100"}, {Index: 3, Type: "a100"}}
	n = &model.Node{Gres: "gpu:v100:1,gpu:a100:3", GPUs: gpus, AllocGPUs: model.BitmapOf(1, 3)}
	if got := gresUsed(n); got != "gpu:v100:0,gpu:a100:2" {
		t.Errorf("gresUsed with GPUs in use = %q", got)
	}
	for i := range gpus {
		gpus[i].File = "/dev/nvidia" + strconv.Itoa(i)
	}
	if got := gresUsed(n); got != "gpu:v100:0(IDX:N/A),gpu:a100:2(IDX:1,3)" {
		t.Errorf("gresUsed with devices = %q", got)
	}
	if got := gresUsed(&model.Node{}); got != "(null)" {
		t.Errorf("gresUsed without GRES = %q", got)
	}
	keys := parseSort("#P,-t")
	if len(keys) != 2 || !keys[0].partOrder || keys[0].letter != 'P' || !keys[1].desc || keys[1].letter != 't' {
		t.Errorf("parseSort = %+v", keys)
	}
	for _, w := range []string{"drng", "DRAINED", "mix", "alloc", "no_resp", "futr", "unk", "d", "all"} {
		if f, bad := parseStateFilter(w); bad != "" || len(f.preds) != 1 {
			t.Errorf("parseStateFilter(%q) bad %q", w, bad)
		}
	}
}
