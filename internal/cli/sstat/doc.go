// Package sstat is the sstat command: the usage of running job steps
// (memory, CPU time, tasks, processes), asked of the nodes that run them
// at the moment of the call, in Slurm's columns and formats.
//
// Drover measures each step's cgroup per node, not each task: MaxRSS is
// the highest per-node peak of the step (MaxRSSTask is 0, the node's
// first task), AveRSS the mean of the sampled memory use, and MinCPU /
// AveCPU the step's CPU time divided among its tasks. Fields Drover does
// not measure (virtual memory, pages, disk I/O, energy, CPU frequency)
// print as Slurm prints unavailable data: 0 or empty.
package sstat
