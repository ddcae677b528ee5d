// Package jobspec turns what a user typed into a *model.JobSpec: command-line
// options, #SBATCH directives in a batch script and the SBATCH_* / SALLOC_* /
// SLURM_* input environment variables. It is shared by sbatch, srun and
// salloc, and also owns the Slurm formats those commands accept: --array
// index lists, --dependency lists, --begin dates, --nodes ranges and the
// directive syntax of batch scripts.
//
// Precedence follows Slurm: command line over input environment variables
// over #SBATCH directives. All three go through a getopt_long-compatible
// normalisation step (abbreviated long options, clustered short options,
// optional arguments, glibc wording for usage errors) and are then applied
// option by option from one table (optTable).
//
// GPUs (--gres, -G/--gpus, --gpus-per-node, --gpus-per-task, --cpus-per-gpu,
// --mem-per-gpu) become Spec.GPUs. Slurm keeps the three count options side
// by side; Drover's request holds one, so the count option set last wins
// (see gpuOpts). Slurm's client-side GRES checks are made, with its words.
//
// The package is client-side and pure: it reads files and stdin only through
// Context, never dials the controller and never decides policy the server
// owns (partition limits, MaxArraySize, whether a uid may use --uid, hostlist
// expansion of -w/-x). Errors are *Error values worded as Slurm words them;
// Error.Lines gives the exact stderr lines.
package jobspec
