// Package sacct is the sacct command: job and step records from the
// accounting database, printed in Slurm 22.05's formats (aligned columns
// with '+' truncation, -p/-P parsable, --json), with Slurm's selection
// options and default time window.
package sacct
