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
