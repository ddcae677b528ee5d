// Package agent is the node daemon. It connects to the controller (the node
// initiates the stream, so nodes behind NAT work), registers the node's
// resources, heartbeats, and runs the jobs the controller launches on it:
// as the submitting user, with Slurm's environment, output files, time
// limit and kill sequence. Job ends are resent until the controller confirms
// them, so a controller restart loses no outcome.
package agent
