package slurmconf

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func parseGres(t *testing.T, text string, files map[string]string) (*GresConf, error) {
	t.Helper()
	return ParseGres(strings.NewReader(text), "/etc/slurm/gres.conf", memFS(files))
}

func mustGres(t *testing.T, text string) *GresConf {
	t.Helper()
	g, err := parseGres(t, text, nil)
	if err != nil {
		t.Fatalf("ParseGres: %v", err)
	}
	return g
}

func TestParseGresLines(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       GresLine // Pos is not compared
		auto       string   // the global AutoDetect
	}{
		{"bracket files", "NodeName=n[1-2] Name=gpu Type=a100 File=/dev/nvidia[0-3]",
			GresLine{Nodes: []string{"n1", "n2"}, Name: "gpu", Type: "a100",
				Files: []string{"/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia2", "/dev/nvidia3"}, Count: 4}, ""},
		{"file list keeps order", "name=gpu file=/dev/nvidia3,/dev/nvidia1 COUNT=2",
			GresLine{Name: "gpu", Files: []string{"/dev/nvidia3", "/dev/nvidia1"}, Count: 2}, ""},
		{"count alone", "Name=gpu Count=2", GresLine{Name: "gpu", Count: 2}, ""},
		{"count defaults to one", "Name=nic", GresLine{Name: "nic", Count: 1}, ""},
		{"count suffixes", "Name=bandwidth Count=20M", GresLine{Name: "bandwidth", Count: 20 << 20}, ""},
		{"count T suffix", "Name=bw Count=2t", GresLine{Name: "bw", Count: 2 << 40}, ""},
		{"mps count per GPU", "Name=mps Count=100 File=/dev/nvidia0",
			GresLine{Name: "mps", Files: []string{"/dev/nvidia0"}, Count: 100}, ""},
		{"shard count", "Name=shard Count=8 File=/dev/nvidia[0-1]",
			GresLine{Name: "shard", Files: []string{"/dev/nvidia0", "/dev/nvidia1"}, Count: 8}, ""},
		{"multiple files are one device", "Name=gpu MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap21",
			GresLine{Name: "gpu", Files: []string{"/dev/nvidia0", "/dev/nvidia-caps/nvidia-cap21"}, MultipleFiles: true, Count: 1}, ""},
		{"cores links flags", "Name=gpu File=/dev/nvidia0 Cores=0-7,16-23 Links=-1,2 Flags=nvidia_gpu_env,env_uuid",
			GresLine{Name: "gpu", Files: []string{"/dev/nvidia0"}, Count: 1, Cores: "0-7,16-23", Links: "-1,2",
				Flags: []string{"nvidia_gpu_env", "env_uuid"}}, ""},
		{"line autodetect", "NodeName=n1 AutoDetect=NVML Name=gpu Type=h100",
			GresLine{Nodes: []string{"n1"}, Name: "gpu", Type: "h100", Count: 1, AutoDetect: "nvml"}, ""},
		{"node autodetect alone", "NodeName=n1 AutoDetect=off",
			GresLine{Nodes: []string{"n1"}, AutoDetect: "off"}, ""},
		{"blanks around =", "Name = gpu  File = \"/dev/nvidia0\"", GresLine{Name: "gpu", Files: []string{"/dev/nvidia0"}, Count: 1}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := mustGres(t, tc.text)
			if len(g.Lines) != 1 {
				t.Fatalf("lines %+v", g.Lines)
			}
			got := g.Lines[0]
			if got.Pos != (Pos{"/etc/slurm/gres.conf", 1}) {
				t.Errorf("Pos = %v", got.Pos)
			}
			got.Pos = Pos{}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("\n got %+v\nwant %+v", got, tc.want)
			}
			if g.AutoDetect != tc.auto {
				t.Errorf("AutoDetect = %q", g.AutoDetect)
			}
		})
	}
}

func TestParseGresErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"Name=gpu Colour=red", `unknown key "Colour"`},
		{"Type=a100 File=/dev/nvidia0", "missing Name="},
		{"NodeName=n1 Count=2", "missing Name="},
		{"NodeName=n1", "missing Name="},
		{"Name=gpu Count=x", `invalid Count "x"`},
		{"Name=gpu Count=-1", `invalid Count "-1"`},
		{"Name=gpu Count=99999999999P", `invalid Count`},
		{"Name=gpu File=/dev/nvidia[0-3] Count=2", "Count=2 disagrees with the 4 devices of File= (Slurm rejects this"},
		{"Name=gpu File=/dev/nvidia[0-", "bad brackets"},
		{"Name=gpu File=/dev/nvidia[3-1]", "bad brackets"},
		{"Name=gpu File=dev/nvidia0", "dev/nvidia0 is relative"},
		{"Name=gpu File=/dev/nvidia[0-2000]", "at most 1024 devices"},
		{"Name=gpu File=/dev/nvidia0 MultipleFiles=/dev/nvidia1", "File and MultipleFiles cannot be combined"},
		{"Name=gpu MultipleFiles=/dev/nvidia0,/dev/c1 Count=2", "Count must be 1"},
		{"Name=gpu File=/dev/nvidia[0-1] Links=-1,0", "Links= applies to one device"},
		{"Name=gpu Links=x", `invalid Links "x"`},
		{"Name=gpu Cores=a-b", `invalid Cores "a-b"`},
		{"AutoDetect=magic", `invalid AutoDetect "magic"`},
		{"Name=gpu:a100", `invalid Name "gpu:a100"`},
		{"Name=g,pu", `invalid Name "g,pu"`},
		{"Name=gpu Type=a:b", `invalid Type "a:b"`},
		{"NodeName=n[1- Name=gpu", `invalid NodeName`},
		{"Name=gpu File", "expected key=value"},
		{`Name="gpu`, "unterminated quote"},
		{"Include", "Include without a file name"},
		{"Include missing.conf", "Include: open /etc/slurm/missing.conf"},
	} {
		_, err := parseGres(t, "# first line\n"+tc.text+"\n", nil)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.File != "/etc/slurm/gres.conf" || pe.Line != 2 || !strings.Contains(pe.Msg, tc.want) {
			t.Errorf("%q: got %v, want gres.conf:2: ...%s...", tc.text, err, tc.want)
		}
	}
}

func TestGresAutoDetect(t *testing.T) {
	g := mustGres(t, `AutoDetect=nvml
NodeName=a[1-4] Name=gpu File=/dev/nvidia0
NodeName=a[3-4] AutoDetect=off
NodeName=a4 Name=gpu Type=x Count=1 AutoDetect=off
`)
	for node, want := range map[string]string{"a1": "nvml", "a3": "off", "a4": "off", "zz": "nvml"} {
		if _, got := g.ForNode(node); got != want {
			t.Errorf("ForNode(%s) autodetect %q, want %q", node, got, want)
		}
	}
	lines, _ := g.ForNode("a4")
	if len(lines) != 2 || lines[0].Pos.Line != 2 || lines[1].Pos.Line != 4 {
		t.Errorf("a4 lines %+v", lines)
	}
	if lines, _ := g.ForNode("zz"); len(lines) != 0 {
		t.Errorf("zz lines %+v", lines)
	}
	// One node, two AutoDetect values: Slurm wants one.
	_, err := parseGres(t, "NodeName=a[1-2] AutoDetect=nvml\nNodeName=a2 Name=gpu Count=1 AutoDetect=off\n", nil)
	if err == nil || !strings.HasPrefix(err.Error(), "/etc/slurm/gres.conf:2: AutoDetect=off for node a2 conflicts with AutoDetect=nvml at /etc/slurm/gres.conf:1") {
		t.Errorf("conflicting AutoDetect: %v", err)
	}
	// Without NodeName, AutoDetect ahead of Name is global, after it ignored.
	g = mustGres(t, "AutoDetect=nvml Name=gpu File=/dev/nvidia0\n")
	if g.AutoDetect != "nvml" || len(g.Lines) != 1 || g.Lines[0].AutoDetect != "" || len(g.Warnings) != 0 {
		t.Errorf("AutoDetect before Name: %+v", g)
	}
	g = mustGres(t, "Name=gpu File=/dev/nvidia0 AutoDetect=nvml\n")
	if _, auto := g.ForNode("x"); auto != "" || g.AutoDetect != "" || len(g.Warnings) != 1 ||
		g.Warnings[0] != "/etc/slurm/gres.conf:1: AutoDetect=nvml ignored: on a Name= line it needs NodeName= (or a line of its own)" {
		t.Errorf("AutoDetect after Name: %+v", g)
	}
	// A second global AutoDetect wins, with a warning.
	g = mustGres(t, "AutoDetect=nvml\nAutoDetect=off\n")
	if g.AutoDetect != "off" || len(g.Warnings) != 1 || !strings.Contains(g.Warnings[0], "gres.conf:2: AutoDetect=off replaces AutoDetect=nvml") {
		t.Errorf("second global: %q %q", g.AutoDetect, g.Warnings)
	}
}

func TestGresWarnings(t *testing.T) {
	g := mustGres(t, "Name=gpu Flags=fancy,no_gpu_env,amd_gpu_env Count=1 Count=2\n")
	want := []string{
		`/etc/slurm/gres.conf:1: Flags: unknown flag "fancy"`,
		`/etc/slurm/gres.conf:1: Flags: no_gpu_env cannot be combined with other *_env flags`,
		`/etc/slurm/gres.conf:1: Count given more than once on the line; the last value counts`,
	}
	if !reflect.DeepEqual(g.Warnings, want) || g.Lines[0].Count != 2 {
		t.Errorf("warnings %q, count %d", g.Warnings, g.Lines[0].Count)
	}
}

func TestGresInclude(t *testing.T) {
	files := map[string]string{
		"/etc/slurm/gres.d/a.conf": "NodeName=a Name=gpu File=/dev/nvidia0\nInclude b.conf\n",
		"/etc/slurm/gres.d/b.conf": "NodeName=b Name=gpu Count=2\n",
		"/etc/slurm/loop.conf":     "Include gres.conf\n",
	}
	g, err := parseGres(t, "AutoDetect=off\nInclude gres.d/a.conf\nName=nic\n", files)
	if err != nil {
		t.Fatal(err)
	}
	var at []string
	for _, l := range g.Lines {
		at = append(at, l.Pos.String())
	}
	if want := []string{"/etc/slurm/gres.d/a.conf:1", "/etc/slurm/gres.d/b.conf:1", "/etc/slurm/gres.conf:3"}; !reflect.DeepEqual(at, want) {
		t.Errorf("line positions %q", at)
	}
	_, err = parseGres(t, "Include loop.conf\n", files)
	if err == nil || !strings.Contains(err.Error(), "/etc/slurm/loop.conf:1: include loop") {
		t.Errorf("loop: %v", err)
	}
	files["/etc/slurm/gres.d/b.conf"] = "Name=gpu Bogus=1\n"
	if _, err = parseGres(t, "Include gres.d/a.conf\n", files); err == nil || !strings.HasPrefix(err.Error(), "/etc/slurm/gres.d/b.conf:1: ") {
		t.Errorf("error in an included file: %v", err)
	}
}

func TestLoadGres(t *testing.T) {
	dir := t.TempDir()
	if g, err := LoadGres(filepath.Join(dir, "gres.conf")); err != nil || g == nil || len(g.Lines) != 0 || g.AutoDetect != "" {
		t.Errorf("missing gres.conf: %+v %v", g, err)
	}
	if p := GresPathFor("/etc/slurm/slurm.conf"); p != "/etc/slurm/gres.conf" {
		t.Errorf("GresPathFor = %s", p)
	}
	// A gres.conf that exists but cannot be read is an error.
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadGres(filepath.Join(dir, "sub")); err == nil {
		t.Error("a directory as gres.conf loaded")
	}
}

// TestGresExample loads testdata/gres.conf (with an Include) and compares a
// dump with testdata/gres.golden; run with -update to rewrite it.
func TestGresExample(t *testing.T) {
	g, err := LoadGres(filepath.Join("testdata", "gres.conf"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "AutoDetect=%q\n", g.AutoDetect)
	for _, l := range g.Lines {
		fmt.Fprintf(&b, "%s nodes=%v name=%q type=%q files=%v multiple=%v count=%d cores=%q links=%q flags=%v autodetect=%q\n",
			l.Pos, l.Nodes, l.Name, l.Type, l.Files, l.MultipleFiles, l.Count, l.Cores, l.Links, l.Flags, l.AutoDetect)
	}
	for _, node := range []string{"gpu01", "gpu03", "mig01", "cpu01"} {
		lines, auto := g.ForNode(node)
		fmt.Fprintf(&b, "ForNode(%s): %d lines, AutoDetect=%q\n", node, len(lines), auto)
	}
	for _, w := range g.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	golden := filepath.Join("testdata", "gres.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Fatalf("dump differs from %s (run go test -update):\n%s", golden, b.String())
	}
}
