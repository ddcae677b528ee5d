package slurmconf

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseCgroup(t *testing.T) {
	c, err := ParseCgroup(strings.NewReader("CgroupPlugin=cgroup/v1\nConstrainCores=no\nAllowedRAMSpace=110\n"+
		"AllowedSwapSpace=10 # comment\nMaxRAMPercent=50\nMinRAMSpace=64\nIgnoreSystemd=yes\nFancy=1\n"), "cgroup.conf")
	if err != nil {
		t.Fatal(err)
	}
	if c.Plugin != "cgroup/v1" || c.ConstrainCores || !c.ConstrainRAMSpace || !c.ConstrainDevices ||
		c.AllowedRAMSpace != 110 || c.AllowedSwapSpace != 10 || c.MaxRAMPercent != 50 || c.MinRAMSpace != 64 {
		t.Errorf("parsed %+v", c)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "cgroup.conf:8: unknown key Fancy") {
		t.Errorf("warnings %q", c.Warnings)
	}
	for _, bad := range []string{"ConstrainCores=maybe", "AllowedRAMSpace=lots", "CgroupPlugin=v3", "MinRAMSpace=-1", "ConstrainCores"} {
		if _, err := ParseCgroup(strings.NewReader("\n"+bad+"\n"), "c.conf"); err == nil || !strings.HasPrefix(err.Error(), "c.conf:2:") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	// Absent file: Drover's defaults, everything constrained.
	d, err := LoadCgroup(filepath.Join(t.TempDir(), "cgroup.conf"))
	if err != nil || !d.ConstrainCores || !d.ConstrainRAMSpace || !d.ConstrainDevices || !d.ConstrainSwapSpace {
		t.Errorf("defaults %+v %v", d, err)
	}
}

func TestMemLimit(t *testing.T) {
	const mib = 1 << 20
	c := DefaultCgroupConf()
	if r, s := c.MemLimit(1000, 4000); r != 1000*mib || s != 1000*mib {
		t.Errorf("defaults: %d %d", r, s)
	}
	c.AllowedRAMSpace, c.AllowedSwapSpace, c.MaxRAMPercent, c.MaxSwapPercent = 120, 50, 50, 10
	if r, s := c.MemLimit(1000, 4000); r != 1200*mib || s != 1600*mib {
		t.Errorf("allowed: %d %d", r/mib, s/mib)
	}
	if r, _ := c.MemLimit(3000, 4000); r != 2000*mib {
		t.Errorf("MaxRAMPercent cap: %d", r/mib)
	}
	if r, _ := c.MemLimit(10, 4000); r != 30*mib {
		t.Errorf("MinRAMSpace floor: %d", r/mib)
	}
	c.ConstrainRAMSpace = false
	if r, s := c.MemLimit(1000, 4000); r != 0 || s != 0 {
		t.Error("unconstrained limits")
	}
}

func TestParseGresConf(t *testing.T) {
	text := `# GPUs
AutoDetect=off
NodeName=gpu[01-02] Name=gpu Type=a100 File=/dev/nvidia[0-3]
NodeName=gpu03 Name=gpu File=/dev/nvidia0,/dev/nvidia1 AutoDetect=nvml
Name=mps Count=200
`
	g, err := ParseGres(strings.NewReader(text), "gres.conf")
	if err != nil {
		t.Fatal(err)
	}
	lines, ad := g.ForNode("gpu02")
	if ad != "off" || len(lines) != 2 || lines[0].Type != "a100" || !reflect.DeepEqual(lines[0].Files,
		[]string{"/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia2", "/dev/nvidia3"}) || lines[0].Count != 4 || lines[1].Count != 200 {
		t.Errorf("gpu02: %+v %q", lines, ad)
	}
	lines, ad = g.ForNode("gpu03")
	if ad != "nvml" || len(lines) != 2 || lines[0].Count != 2 || lines[0].Pos.Line != 4 {
		t.Errorf("gpu03: %+v %q", lines, ad)
	}
	for _, bad := range []string{"Name=gpu Colour=red", "Type=a100", "Name=gpu File=/dev/nvidia[0-3] Count=2",
		"Name=gpu Count=x", "Name=gpu File=dev/nvidia0", "AutoDetect=magic", "Name=gpu File=/dev/nvidia[0-"} {
		if _, err := ParseGres(strings.NewReader(bad), "gres.conf"); err == nil || !strings.HasPrefix(err.Error(), "gres.conf:1:") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	empty, err := LoadGres(filepath.Join(t.TempDir(), "gres.conf"))
	if err != nil || len(empty.Lines) != 0 {
		t.Errorf("missing gres.conf: %+v %v", empty, err)
	}
}

func TestTypedScriptKeys(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "slurm.conf")
	_ = os.WriteFile(p, []byte("NodeName=n1\nPartitionName=p Nodes=n1\nProlog=/etc/prolog\nEpilog=/etc/epilog\n"+
		"TaskProlog=/etc/tp\nPrologFlags=Alloc,Contain\nPrologEpilogTimeout=30\nHealthCheckProgram=/usr/sbin/nhc\n"+
		"HealthCheckInterval=300\nGresTypes=gpu,mps\nDroverMinFreeSpace=1G\n"), 0o644)
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if c.Prolog != "/etc/prolog" || c.Epilog != "/etc/epilog" || c.TaskProlog != "/etc/tp" ||
		!reflect.DeepEqual(c.PrologFlags, []string{"alloc", "contain"}) || c.PrologEpilogTimeout.Seconds() != 30 ||
		c.HealthCheckProgram != "/usr/sbin/nhc" || c.HealthCheckInterval.Seconds() != 300 ||
		!reflect.DeepEqual(c.GresTypes, []string{"gpu", "mps"}) || strings.Contains(strings.Join(c.Warnings, "\n"), "unknown") {
		t.Errorf("typed keys: %+v", c)
	}
	_ = os.WriteFile(p, []byte("NodeName=n1\nHealthCheckInterval=soon\n"), 0o644)
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "slurm.conf:2:") {
		t.Errorf("bad interval: %v", err)
	}
}

func FuzzParseCgroupGres(f *testing.F) {
	f.Add("ConstrainCores=yes\nAllowedRAMSpace=99.5")
	f.Add("NodeName=a[1-2] Name=gpu Type=x File=/dev/nvidia[0-1] Count=2")
	f.Add("AutoDetect=nvml\nName=mps Count=1K")
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := ParseCgroup(strings.NewReader(s), "c"); err != nil && !strings.HasPrefix(err.Error(), "c:") {
			t.Fatalf("cgroup.conf error without position: %v", err)
		}
		g, err := ParseGres(strings.NewReader(s), "g")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "g:") {
				t.Fatalf("gres.conf error without position: %v", err)
			}
			return
		}
		for _, l := range g.Lines {
			if len(l.Files) > 0 && l.Count != int64(len(l.Files)) {
				t.Fatalf("count %d for %d files", l.Count, len(l.Files))
			}
		}
	})
}
