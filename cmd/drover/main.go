// Command drover is the single Drover binary: the controller, the node
// agent, the all-in-one local cluster, and every Slurm command, chosen by
// the name it is invoked as (sbatch, squeue, ...) or by its first argument.
package main

import (
	"os"

	"github.com/drover-hpc/drover/internal/app"
)

func main() { os.Exit(app.Main(os.Args)) }
