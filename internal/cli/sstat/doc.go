// Package sstat is the sstat command: the usage of running job steps
// (memory, CPU time, tasks, processes), asked of the nodes that run them
// at the moment of the call, in the columns, widths and value formats of
// Slurm 22.05's sstat.
//
// What Slurm measures per task, Drover measures per node, from the step's
// cgroup there; the figures are derived from the nodes' reports:
//
//   - MaxRSS is the highest memory peak of one node (MaxRSSNode), AveRSS
//     the mean of the sampled memory use over the nodes; MaxRSSTask is the
//     first task of that node. TRESUsageInMin's mem is the lowest node
//     peak, TRESUsageInTot's the sum of the peaks.
//   - CPU time is shared evenly among a node's tasks: AveCPU is the step's
//     CPU time over its task count, MinCPU (MinCPUNode, MinCPUTask) the
//     lowest per-task share of a node, TRESUsageInMax's cpu the highest,
//     TRESUsageInTot's the whole.
//
// The usage TRES strings hold the two TRES measured, cpu and mem. What
// Drover does not measure (virtual memory, pages, disk I/O) prints empty,
// as sstat prints data it does not have; energy and the CPU frequency
// print 0 and the requested frequencies Unknown, as sstat shows them
// without energy accounting or --cpu-freq.
//
// As in Slurm: without a step, a job's lowest numbered running step is
// shown (none when only its batch step runs), with -a all its running
// steps; errors about one job do not change the exit status, which is 1
// only for a command line sstat cannot use.
package sstat
