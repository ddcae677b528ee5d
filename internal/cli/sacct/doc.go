// Package sacct is the sacct command: job and step records from the
// accounting database, printed in Slurm 22.05's formats (aligned columns
// with '+' truncation, -p/-P parsable, --json), with Slurm's selection
// options and default time window.
//
// The database holds a record per array task; the tasks of an array that
// never started print as the one row Slurm keeps for them, "123_[1-3,5]"
// (arrays.go), cut to SLURM_BITSTR_LEN; --array prints a row per task.
package sacct
