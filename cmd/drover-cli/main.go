// Command drover-cli is the lean binary of the Slurm commands (sbatch,
// squeue, ...), chosen by the name it is invoked as: it links only option
// parsing, the client and formatting, so it starts as fast as Slurm's
// commands. The daemons and `drover up` are in cmd/drover, which runs the
// same commands too.
package main

import (
	"os"

	"github.com/drover-hpc/drover/internal/app/commands"
)

func main() { os.Exit(commands.Main(os.Args)) }
