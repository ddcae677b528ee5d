// Command drover-sbatch is sbatch alone: drover-cli (every Slurm
// command) linked for one. Scripts and pipelines submit jobs one sbatch
// process at a time, so its start is on every submission's path, and a Go
// binary's start grows with what it links: package initialisation, the
// runtime's walk of the function table and of the pointer masks, page
// faults. This one is about 45% smaller than drover-cli and starts ~0.1 ms
// sooner (bench/README.md, "A binary for sbatch"). It behaves as
// drover-cli's sbatch in every way, handing a command for a controller on
// another machine to drover-cli-remote beside it.
package main

import (
	"os"

	"github.com/drover-hpc/drover/internal/app/commands"
	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/cli/sbatch"
)

func main() {
	os.Exit(commands.Main(os.Args, map[string]cli.Command{"sbatch": sbatch.Run}))
}
