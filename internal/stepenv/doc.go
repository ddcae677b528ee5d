// Package stepenv computes what a job step sees of Slurm before it runs: the
// names of its stdio files (Slurm's filename patterns, slurm-%j.out) and the
// environment of a batch script (SLURM_JOB_ID, SLURM_JOB_NODELIST, ...).
//
// It owns the formats of those values — the pattern syntax, the run-length
// "2(x3),1" lists, which variable is set when — and nothing else. It is pure:
// no I/O, no clock, no user database, so every rule is tested with tables.
// The agent supplies what only the node knows (its name and CPUs, the time,
// the user's home and shell) and adds what only it can set (SLURM_CONF,
// SLURM_TASK_PID through executor.Spec.PidEnv, GPU variables).
//
// It imports the standard library, model and hostlist only.
package stepenv
