package slurmconf

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, name := range []string{"example.conf", "nodes.conf"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	for _, s := range []string{
		"NodeName=n[1-4] CPUs=2\nPartitionName=p Nodes=ALL Default=YES",
		"Include self.conf\n",
		"Include inc.conf\nPartitionName=q Nodes=i[1-2]",
		"NodeName=DEFAULT Sockets=2\nNodeName=a SocketsPerBoard=2 \\\n",
		"NodeSet=s Feature=f\nNodeName=x Feature=f\nPartitionName=p Nodes=s,x\nDownNodes=x State=DRAIN",
		"SlurmctldHost=a(b)\nControlMachine=c\nProlog=\"x # y\" # z",
	} {
		f.Add(s)
	}
	defer func(old int) { maxTotalNodes = old }(maxTotalNodes)
	maxTotalNodes = 4096 // keeps each run fast; the limit path is still reached
	f.Fuzz(func(t *testing.T, text string) {
		open := WithOpener(func(path string) (io.ReadCloser, error) {
			switch filepath.Base(path) {
			case "self.conf":
				return io.NopCloser(strings.NewReader(text)), nil
			case "inc.conf":
				return io.NopCloser(strings.NewReader("NodeName=i[1-2]\n")), nil
			}
			return nil, fs.ErrNotExist
		})
		c, err := Parse(strings.NewReader(text), "/etc/slurm/slurm.conf", open)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.File == "" || pe.Line < 0 || pe.Msg == "" {
				t.Fatalf("error %v (%T) is not a complete *ParseError", err, err)
			}
			return
		}
		seen := map[string]bool{}
		for _, n := range c.Nodes {
			if seen[n.Name] || n.Name == "" || n.CPUs < 1 {
				t.Fatalf("bad node %+v", n)
			}
			seen[n.Name] = true
		}
		defaults := 0
		for _, p := range c.Partitions {
			if p.Default {
				defaults++
			}
			for _, n := range p.Nodes {
				if !seen[n] {
					t.Fatalf("partition %s names unknown node %s", p.Name, n)
				}
			}
		}
		if defaults > 1 {
			t.Fatalf("%d default partitions", defaults)
		}
		for _, w := range c.Warnings {
			if !strings.HasPrefix(w, "/etc/slurm/") {
				t.Fatalf("warning without file: %q", w)
			}
		}
		c.ModelNodes()
		c.ModelPartitions()
	})
}

// fuzzOpener serves "inc.conf" from text and "self.conf" as text itself,
// so includes and include loops are reached.
func fuzzOpener(text, inc string) Option {
	return WithOpener(func(path string) (io.ReadCloser, error) {
		switch filepath.Base(path) {
		case "self.conf":
			return io.NopCloser(strings.NewReader(text)), nil
		case "inc.conf":
			return io.NopCloser(strings.NewReader(inc)), nil
		}
		return nil, fs.ErrNotExist
	})
}

// checkParseError fails unless err is a *ParseError with a file, a line
// and a message.
func checkParseError(t *testing.T, err error) {
	t.Helper()
	var pe *ParseError
	if !errors.As(err, &pe) || pe.File == "" || pe.Line < 1 || pe.Msg == "" {
		t.Fatalf("error %v (%T) does not name file:line", err, err)
	}
}

func FuzzParseGres(f *testing.F) {
	for _, name := range []string{"gres.conf", "gres.d/mig.conf"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	for _, s := range []string{
		"NodeName=a[1-2] Name=gpu Type=x File=/dev/nvidia[0-1] Count=2",
		"AutoDetect=nvml\nName=mps Count=1K File=/dev/nvidia0",
		"NodeName=a AutoDetect=off\nNodeName=a AutoDetect=nvml",
		"Name=gpu MultipleFiles=/dev/a,/dev/b Links=-1",
		"Include inc.conf\nInclude self.conf",
		"Name=gpu Flags=no_gpu_env,nvidia_gpu_env Cores=[0-3] \\\n Count=1",
		"AutoDetect=nvml Name=gpu File=/dev/nvidia0\nName=gpu AutoDetect=off",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		g, err := ParseGres(strings.NewReader(text), "/etc/slurm/gres.conf",
			fuzzOpener(text, "NodeName=i[1-2] Name=gpu File=/dev/nvidia[0-1]\n"))
		if err != nil {
			checkParseError(t, err)
			return
		}
		if g.AutoDetect != "" && !gresAutoDetect.has(g.AutoDetect) {
			t.Fatalf("global AutoDetect %q", g.AutoDetect)
		}
		for _, l := range g.Lines {
			switch {
			case l.Name == "" && (l.AutoDetect == "" || l.Nodes == nil):
				t.Fatalf("line without Name that sets no node's AutoDetect: %+v", l)
			case l.AutoDetect != "" && (l.Nodes == nil || !gresAutoDetect.has(l.AutoDetect)):
				t.Fatalf("line AutoDetect %q for nodes %v", l.AutoDetect, l.Nodes)
			case l.Name == "":
			case l.Count < 0:
				t.Fatalf("count %d without files: %+v", l.Count, l)
			case len(l.Files) > maxGresFiles:
				t.Fatalf("%d files", len(l.Files))
			case l.MultipleFiles && l.Count != 1:
				t.Fatalf("MultipleFiles with count %d", l.Count)
			case len(l.Files) > 0 && !l.MultipleFiles && !isSharingGres(l.Name) && l.Count != int64(len(l.Files)):
				t.Fatalf("count %d for %d files", l.Count, len(l.Files))
			}
			for _, p := range l.Files {
				if !strings.HasPrefix(p, "/") {
					t.Fatalf("relative file %q", p)
				}
			}
			if l.Pos.File == "" || l.Pos.Line < 1 {
				t.Fatalf("line without position: %+v", l)
			}
		}
		for _, w := range g.Warnings {
			if !strings.HasPrefix(w, "/etc/slurm/") {
				t.Fatalf("warning without file: %q", w)
			}
		}
		g.ForNode("i1")
	})
}

func FuzzParseCgroup(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "cgroup.conf"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(b), int64(1000), int64(4000))
	f.Add("ConstrainCores=yes\nAllowedRAMSpace=99.5", int64(1), int64(0))
	f.Add("ConstrainRAMSpace=no\nInclude inc.conf\nInclude self.conf", int64(-1), int64(10))
	f.Add("MaxRAMPercent=1e6 AllowedSwapSpace=1e6 MinRAMSpace=1099511627776", int64(1)<<50, int64(1)<<50)
	f.Fuzz(func(t *testing.T, text string, alloc, node int64) {
		c, err := ParseCgroup(strings.NewReader(text), "/etc/slurm/cgroup.conf", fuzzOpener(text, "ConstrainDevices=no\n"))
		if err != nil {
			checkParseError(t, err)
			return
		}
		for _, w := range c.Warnings {
			if !strings.HasPrefix(w, "/etc/slurm/") {
				t.Fatalf("warning without file: %q", w)
			}
		}
		ram, swap := c.MemLimit(alloc, node)
		switch {
		case ram < 0 || swap < 0:
			t.Fatalf("negative limits %d %d", ram, swap)
		case !c.ConstrainRAMSpace || alloc <= 0:
			if ram != 0 || swap != 0 {
				t.Fatalf("limits %d %d without a RAM constraint", ram, swap)
			}
		case ram == 0 && c.MinRAMSpace > 0:
			t.Fatalf("RAM limit 0 under MinRAMSpace %d", c.MinRAMSpace)
		case c.ConstrainSwapSpace && swap < ram:
			t.Fatalf("RAM+swap %d below RAM %d", swap, ram)
		}
	})
}

func FuzzParseDbd(f *testing.F) {
	f.Add("DbdHost=a DbdPort=6819\nStorageType=accounting_storage/mysql StorageLoc=db\n")
	f.Add("StorageType=accounting_storage/pgsql\nStoragePort=5432\nDroverStateDir=/x\n")
	f.Add("DbdPort=70000\n")
	f.Fuzz(func(t *testing.T, text string) {
		c, err := ParseDbd(strings.NewReader(text), "/etc/slurm/slurmdbd.conf")
		if err != nil {
			checkParseError(t, err)
			return
		}
		if c.DbdPort < 1 || c.DbdPort > 65535 || c.Storage.Type == "" || c.Storage.Type == "none" {
			t.Fatalf("accepted %+v", c)
		}
	})
}
