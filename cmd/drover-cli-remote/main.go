// Command drover-cli-remote runs the Slurm commands over gRPC: the lean
// drover-cli hands it the commands for a controller on another machine
// (a login node's), which the local protocol cannot reach. It links the
// commands and the gRPC client, none of the daemons, so the hand-over
// costs less than starting drover.
package main

import (
	"os"

	"github.com/drover-hpc/drover/internal/app/commands"
	"github.com/drover-hpc/drover/internal/app/commands/table"
	"github.com/drover-hpc/drover/internal/app/remote"
)

func main() {
	commands.DialRemote = remote.Dial
	os.Exit(commands.Main(os.Args, table.Commands))
}
