package slurmconf

import (
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestCgroupDefaults(t *testing.T) {
	d, err := LoadCgroup(filepath.Join(t.TempDir(), "cgroup.conf"))
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultCgroupConf()
	want.File = d.File
	if !reflect.DeepEqual(d, want) {
		t.Errorf("missing cgroup.conf: %+v", d)
	}
	// Drover's product decision: everything constrained, no swap beyond RAM.
	if !d.ConstrainCores || !d.ConstrainRAMSpace || !d.ConstrainSwapSpace || !d.ConstrainDevices ||
		d.AllowedSwapSpace != 0 || d.AllowedRAMSpace != 100 || d.MaxRAMPercent != 100 || d.MaxSwapPercent != 100 ||
		d.MinRAMSpace != 30 || d.Plugin != "autodetect" || d.Mountpoint != "/sys/fs/cgroup" {
		t.Errorf("defaults %+v", d)
	}
	// An empty file, or one that sets none of them, keeps the defaults.
	e, err := ParseCgroup(strings.NewReader("# nothing\nCgroupPlugin=cgroup/v2\n"), "cgroup.conf")
	if err != nil || !e.ConstrainCores || !e.ConstrainRAMSpace || !e.ConstrainSwapSpace || !e.ConstrainDevices {
		t.Errorf("no Constrain keys: %+v %v", e, err)
	}
	if p := CgroupPathFor("/etc/slurm/slurm.conf"); p != "/etc/slurm/cgroup.conf" {
		t.Errorf("CgroupPathFor = %s", p)
	}
}

func TestParseCgroup(t *testing.T) {
	for _, tc := range []struct {
		text  string
		check func(*CgroupConf) bool
	}{
		{"ConstrainCores=no", func(c *CgroupConf) bool { return !c.ConstrainCores && c.ConstrainRAMSpace }},
		{"constrainramspace=NO", func(c *CgroupConf) bool { return !c.ConstrainRAMSpace }},
		{"ConstrainSwapSpace=no ConstrainDevices=no", func(c *CgroupConf) bool { return !c.ConstrainSwapSpace && !c.ConstrainDevices }},
		{"ConstrainDevices=yes", func(c *CgroupConf) bool { return c.ConstrainDevices }},
		{"CgroupPlugin=Cgroup/V1", func(c *CgroupConf) bool { return c.Plugin == "cgroup/v1" }},
		{"CgroupPlugin=disabled", func(c *CgroupConf) bool { return c.Plugin == "disabled" }},
		{"CgroupMountpoint=/cg", func(c *CgroupConf) bool { return c.Mountpoint == "/cg" }},
		{"AllowedRAMSpace=101.5", func(c *CgroupConf) bool { return c.AllowedRAMSpace == 101.5 }},
		{"AllowedSwapSpace=50%", func(c *CgroupConf) bool { return c.AllowedSwapSpace == 50 }},
		{"MaxRAMPercent=90 MaxSwapPercent=0", func(c *CgroupConf) bool { return c.MaxRAMPercent == 90 && c.MaxSwapPercent == 0 }},
		{"MinRAMSpace=64", func(c *CgroupConf) bool { return c.MinRAMSpace == 64 }},
		{"MinRAMSpace=30M", func(c *CgroupConf) bool { return c.MinRAMSpace == 30 }},
		{"ConstrainCores=no\nConstrainCores=yes", func(c *CgroupConf) bool { return c.ConstrainCores }},
		{"IgnoreSystemd=yes SignalChildrenProcesses=yes EnableControllers=yes", func(c *CgroupConf) bool { return len(c.Warnings) == 0 }},
	} {
		c, err := ParseCgroup(strings.NewReader(tc.text), "cgroup.conf")
		if err != nil || !tc.check(c) {
			t.Errorf("%q: %+v %v", tc.text, c, err)
		}
	}
	c, err := ParseCgroup(strings.NewReader("ConstrainCores=yes\nFancy=1\n"), "cgroup.conf")
	if err != nil || !reflect.DeepEqual(c.Warnings, []string{`cgroup.conf:2: unknown key "Fancy" ignored`}) {
		t.Errorf("unknown key: %q %v", c.Warnings, err)
	}
	for _, bad := range []string{"ConstrainCores=maybe", "AllowedRAMSpace=lots", "AllowedRAMSpace=NaN", "MaxRAMPercent=-1",
		"AllowedSwapSpace=Inf", "CgroupPlugin=v3", "MinRAMSpace=-1", "MinRAMSpace=1G", "ConstrainCores", "CgroupMountpoint=rel",
		`ConstrainCores="yes`, "Include nowhere.conf"} {
		_, err := ParseCgroup(strings.NewReader("# cgroups\n"+bad+"\n"), "/etc/slurm/cgroup.conf", memFS(nil))
		var pe *ParseError
		if !errors.As(err, &pe) || pe.File != "/etc/slurm/cgroup.conf" || pe.Line != 2 {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestCgroupInclude(t *testing.T) {
	files := map[string]string{"/etc/slurm/cg.d/site.conf": "ConstrainDevices=no\nOdd=1\n"}
	c, err := ParseCgroup(strings.NewReader("Include cg.d/site.conf\n"), "/etc/slurm/cgroup.conf", memFS(files))
	if err != nil || c.ConstrainDevices || len(c.Warnings) != 1 || !strings.HasPrefix(c.Warnings[0], "/etc/slurm/cg.d/site.conf:2:") {
		t.Errorf("include: %+v %v", c, err)
	}
}

func TestCgroupExample(t *testing.T) {
	c, err := LoadCgroup(filepath.Join("testdata", "cgroup.conf"))
	if err != nil {
		t.Fatal(err)
	}
	want := &CgroupConf{File: filepath.Join("testdata", "cgroup.conf"), Plugin: "cgroup/v2", Mountpoint: "/sys/fs/cgroup",
		ConstrainCores: true, ConstrainRAMSpace: true, ConstrainSwapSpace: true, ConstrainDevices: true,
		AllowedRAMSpace: 105, AllowedSwapSpace: 10.5, MaxRAMPercent: 95, MaxSwapPercent: 5, MinRAMSpace: 64}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got  %+v\nwant %+v", c, want)
	}
}

func TestMemLimit(t *testing.T) {
	const mib = 1 << 20
	type conf struct {
		ram, swap          bool
		allowRAM, allowSwp float64
		maxRAM, maxSwp     float64
		minRAM             int64
	}
	def := conf{true, true, 100, 0, 100, 100, 30}
	for _, tc := range []struct {
		name             string
		c                conf
		alloc, node      int64
		wantRAM, wantSwp int64 // MiB
	}{
		{"defaults: RAM = alloc, no swap", def, 1000, 4000, 1000, 1000},
		{"swap unconstrained", conf{true, false, 100, 0, 100, 100, 30}, 1000, 4000, 1000, 0},
		{"RAM unconstrained", conf{false, true, 100, 0, 100, 100, 30}, 1000, 4000, 0, 0},
		{"no allocation", def, 0, 4000, 0, 0},
		{"allowed RAM and swap", conf{true, true, 120, 50, 100, 100, 30}, 1000, 4000, 1200, 1700},
		{"MaxRAMPercent caps RAM", conf{true, true, 100, 0, 50, 100, 30}, 3000, 4000, 2000, 2000},
		// RAM+swap is capped at node × (MaxRAMPercent + MaxSwapPercent).
		{"MaxSwapPercent caps RAM+swap", conf{true, true, 100, 100, 50, 10, 30}, 1800, 4000, 1800, 2400},
		{"RAM+swap cap counts the RAM cap", conf{true, true, 120, 50, 50, 10, 30}, 1000, 4000, 1200, 1700},
		{"MinRAMSpace floor", def, 10, 4000, 30, 30},
		{"floor wins over the cap", conf{true, true, 100, 0, 1, 0, 64}, 100, 1000, 64, 64},
		{"unknown node size: no cap", conf{true, true, 100, 100, 50, 10, 30}, 5000, 0, 5000, 10000},
		{"AllowedRAMSpace below 100", conf{true, true, 50, 0, 100, 100, 30}, 1000, 4000, 500, 500},
	} {
		c := DefaultCgroupConf()
		c.ConstrainRAMSpace, c.ConstrainSwapSpace = tc.c.ram, tc.c.swap
		c.AllowedRAMSpace, c.AllowedSwapSpace, c.MaxRAMPercent, c.MaxSwapPercent, c.MinRAMSpace =
			tc.c.allowRAM, tc.c.allowSwp, tc.c.maxRAM, tc.c.maxSwp, tc.c.minRAM
		ram, swp := c.MemLimit(tc.alloc, tc.node)
		if ram != tc.wantRAM*mib || swp != tc.wantSwp*mib {
			t.Errorf("%s: MemLimit(%d, %d) = %d MiB, %d MiB; want %d, %d", tc.name, tc.alloc, tc.node,
				ram/mib, swp/mib, tc.wantRAM, tc.wantSwp)
		}
	}
	// Absurd inputs saturate rather than wrap.
	c := DefaultCgroupConf()
	c.AllowedRAMSpace, c.AllowedSwapSpace = 1e6, 1e6
	if ram, swp := c.MemLimit(math.MaxInt64/2, 0); ram != math.MaxInt64 || swp != math.MaxInt64 {
		t.Errorf("huge: %d %d", ram, swp)
	}
}
