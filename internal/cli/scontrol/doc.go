// Package scontrol implements the scontrol command: show job/step/node/
// partition/config/hostnames/hostlist, hold/uhold/release/requeue/requeuehold, update
// of jobs and nodes, ping, reconfigure and version.
//
// Its output follows Slurm 22.05's scontrol byte for byte where Drover has
// the data (Key=Value records, three-space continuation lines, one line per
// record with -o), and prints Slurm's placeholders ((null), N/A, Unknown,
// None) where it does not. The hostnames/hostlist commands work without a
// controller and never dial one. "show step" prints the running steps
// (showstep.go), with a "batch" step synthesized for running batch jobs
// until the controller records one. GPUs (showgres.go): TRES gets
// gres/gpu=N, records end with CpusPerTres/MemPerTres/TresPer* as Slurm
// 22.05 stores the request ("gres:gpu:2"), -d adds JOB_GRES and the
// per-node CPU_IDs/Mem/GRES lines to jobs and GresDrain/GresUsed to nodes.
// The package owns no state and must not
// import server packages; it sees the controller only through cli.Client.
package scontrol
