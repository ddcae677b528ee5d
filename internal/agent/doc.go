// Package agent is the node daemon. It connects to the controller (the node
// initiates the stream, so nodes behind NAT work), registers the node's
// resources, heartbeats, and runs the jobs the controller launches on it:
// as the submitting user, with Slurm's environment, output files, time
// limit and kill sequence.
//
// Launches are pipelines of small hooks over an executor.Executor, the way
// Nomad's task runner is: stephooks.go (env, cgroup, prolog, the tasks'
// specs through task hooks, srun's I/O, the step's time limit) and
// batchhooks.go (spool directory, env, prolog, cgroup, script, stdio). A
// new concern (containers, PMI, per-task binding) is a new hook, each
// testable alone with executor/fake; the runners only start, wait and
// report.
//
// Reports the controller must not miss are kept until it confirms them:
// JobEnded (EndAck), StepEnded and JobStarted (ReportAck; reports.go);
// they are resent after every registration, so a controller restart or a
// broken stream loses no outcome. The other way, a registration's answer
// carries what the node may have missed while away: the jobs it is to
// run, which of them are suspended, their time limits now (suspend.go).
// scontrol reconfigure makes the agent read slurm.conf, cgroup.conf and
// gres.conf again, and register its GPUs on the open stream
// (reconfigure.go says what takes effect when). Without its node's job
// supervisor the agent keeps trying to reach one (supkeep.go). Every send to the controller is bounded
// by MessageTimeout. A step whose srun is gone for MessageTimeout is
// killed (stepclients.go).
//
// It must not import the controller's packages (internal/archtest): what
// both sides need lives in slurmconf, wire and the API package.
package agent
