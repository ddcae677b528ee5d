package app

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/drover-hpc/drover/internal/gres"
	"github.com/drover-hpc/drover/internal/slurmconf"
)

// gresCmd is `drover gres [-f slurm.conf] [--name NODE] [--autodetect]`:
// the GPUs the agent of this node would find, one gres.conf line each,
// so an admin can check (or write) gres.conf before starting the agent.
// With --autodetect it asks NVML whatever gres.conf says.
func gresCmd(args []string) int {
	fs := pflag.NewFlagSet("gres", pflag.ContinueOnError)
	conf := fs.StringP("conf", "f", confPath(), "slurm.conf beside which gres.conf is read")
	name := fs.String("name", "", "node name (default: short hostname)")
	auto := fs.Bool("autodetect", false, "ask NVML even if gres.conf does not say AutoDetect=nvml")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	node := *name
	if node == "" {
		h, _ := os.Hostname()
		node, _, _ = strings.Cut(h, ".")
	}
	gc, err := slurmconf.LoadGres(slurmconf.GresPathFor(*conf))
	if err != nil {
		fmt.Fprintf(os.Stderr, "drover gres: %v\n", err)
		return 1
	}
	if *auto {
		gc.AutoDetect = "nvml"
	}
	gpus, warns, err := gres.Discover(node, gc, gres.RealNVML())
	for _, w := range warns {
		fmt.Fprintf(os.Stderr, "drover gres: %s\n", w)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "drover gres: %v\n", err)
		return 1
	}
	for _, g := range gpus {
		typ := ""
		if g.Type != "" {
			typ = " Type=" + g.Type
		}
		fmt.Printf("NodeName=%s Name=gpu%s File=%s # index %d, device %d:%d\n", node, typ, g.File, g.Index, g.Major, g.Minor)
	}
	if len(gpus) == 0 {
		fmt.Fprintf(os.Stderr, "drover gres: no GPU found for node %s\n", node)
	}
	return 0
}
