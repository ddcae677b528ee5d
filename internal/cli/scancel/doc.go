// Package scancel implements the scancel command: it turns job ids and
// filter options into one cli.JobSelection plus a cli.SignalRequest, sends
// them to the controller with a single Client.Signal call, and reports each
// job's outcome the way Slurm's scancel does (silence for jobs that are
// already gone, "Kill job error on job id N: ..." for real failures).
//
// The controller applies the filters; scancel only reads the job list
// itself for --interactive, where it must ask about each job first. It owns
// no state and must not import server packages.
package scancel
