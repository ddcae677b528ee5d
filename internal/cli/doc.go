// Package cli holds what every user command shares: the Env a command runs
// in (stdio, environment, clock, a lazily dialled controller client), the
// Client interface commands talk through, and the Slurm-style error output.
// Each Slurm command lives in its own subpackage (cli/sbatch, cli/squeue,
// ...) and exposes Run(ctx, *cli.Env, args) int. Commands never import
// server packages; they see only model types through Client.
package cli
