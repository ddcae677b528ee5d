// Package units parses and prints Slurm's duration, timestamp and size
// formats ("1-02:03:04", "UNLIMITED", "4G", "2026-11-22T10:00:00"). Pure and
// stdlib-only, shared by the config parser, the job-spec parser and the
// output formatters.
package units
