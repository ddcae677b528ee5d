// Package app maps an invocation of the drover binary onto a command: a
// Slurm command chosen by argv[0] (sbatch, squeue, ...) or by the first
// argument (drover sbatch ...), or a daemon (controller, agent, up). It also
// builds the real command environment: slurm.conf lookup and the client.
package app
