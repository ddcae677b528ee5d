// Package hostlist converts between Slurm hostlist expressions such as
// "gpu[01-04,07],login1" and the plain host names they stand for.
//
// It owns the syntax only: expansion (Expand, Count), Slurm's sorted and
// de-duplicated compressed form (Compress, as in SLURM_JOB_NODELIST and
// squeue %N) and the order-preserving form of `scontrol show hostlist`
// (CompressUnsorted). It knows nothing about which nodes exist, does no I/O
// and imports only the standard library, so clients, the controller and the
// config parser can all share it. Expansion is bounded by MaxHosts so that a
// hostile or mistyped expression cannot exhaust memory.
package hostlist
