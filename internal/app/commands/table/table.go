// Package table is the list of the Slurm commands Drover implements, for
// the binaries that run them all (drover, drover-cli, drover-cli-remote).
// It is apart from package commands so that a binary for one command
// (cmd/drover-sbatch) links that command alone: a map of them all links
// every command's packages, and each start of a Go binary pays for its
// size (package initialisation, the runtime's walk of its function
// table and pointer masks, page faults).
package table

import (
	"github.com/drover-hpc/drover/internal/app/commands"
	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/cli/sacct"
	"github.com/drover-hpc/drover/internal/cli/sacctmgr"
	"github.com/drover-hpc/drover/internal/cli/salloc"
	"github.com/drover-hpc/drover/internal/cli/sbatch"
	"github.com/drover-hpc/drover/internal/cli/sbcast"
	"github.com/drover-hpc/drover/internal/cli/scancel"
	"github.com/drover-hpc/drover/internal/cli/scontrol"
	"github.com/drover-hpc/drover/internal/cli/sdiag"
	"github.com/drover-hpc/drover/internal/cli/sinfo"
	"github.com/drover-hpc/drover/internal/cli/sprio"
	"github.com/drover-hpc/drover/internal/cli/squeue"
	"github.com/drover-hpc/drover/internal/cli/sreport"
	"github.com/drover-hpc/drover/internal/cli/srun"
	"github.com/drover-hpc/drover/internal/cli/sshare"
	"github.com/drover-hpc/drover/internal/cli/sstat"
)

// Commands are the Slurm commands Drover implements: the one list. `make
// build` links each name to bin/drover-cli (drover-cli --list-commands
// prints them; sbatch goes to bin/drover-sbatch), and the e2e harness
// links them the same way.
var Commands = map[string]cli.Command{
	"sbatch":   sbatch.Run,
	"srun":     commands.WithLaunchHost(srun.Run),
	"salloc":   salloc.Run,
	"sattach":  commands.WithLaunchHost(srun.Sattach),
	"sbcast":   commands.WithLaunchHost(sbcast.Run),
	"squeue":   squeue.Run,
	"sinfo":    sinfo.Run,
	"scancel":  scancel.Run,
	"scontrol": scontrol.Run,
	"sstat":    sstat.Run,
	"sdiag":    sdiag.Run,
	"sacctmgr": sacctmgr.Run,
	"sacct":    sacct.Run,
	"sreport":  sreport.Run,
	"sprio":    sprio.Run,
	"sshare":   sshare.Run,
}

// Own names the commands that have a lean binary of their own beside
// drover-cli (the name it is installed under), for the installs that link
// the command names to drover-cli: sbatch's start is on every
// submission's path.
var Own = map[string]string{"sbatch": "drover-sbatch"}
