// Command drover-cli is the lean binary of the Slurm commands (sbatch,
// squeue, ...), chosen by the name it is invoked as: it links only option
// parsing, the local client (client/local) and formatting — no gRPC or
// protobuf — so it starts as fast as Slurm's commands. The daemons and
// `drover up` are in cmd/drover, which runs the same commands too, over
// gRPC where the controller is not on this machine (drover-cli hands
// those to it). sbatch has a binary of its own (cmd/drover-sbatch).
package main

import (
	"os"

	"github.com/drover-hpc/drover/internal/app/commands"
	"github.com/drover-hpc/drover/internal/app/commands/table"
)

func main() { os.Exit(commands.Main(os.Args, table.Commands)) }
