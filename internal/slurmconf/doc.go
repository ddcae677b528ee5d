// Package slurmconf reads slurm.conf into a typed Config: the cluster-wide
// keys Drover acts on (with Slurm's defaults), one NodeConf per node and
// one PartitionConf per partition, plus every raw key=value for
// `scontrol show config`.
//
// It owns the file syntax (comments, quoting, backslash continuation,
// Include with loop detection, DEFAULT lines, hostlists in NodeName and
// Nodes=) and the checks that need the whole file: duplicate nodes,
// partitions naming undefined nodes, several default partitions. Every
// fatal problem is a *ParseError carrying file and line; keys it does not
// know are warnings, not errors, so a config that real Slurm accepts still
// loads.
//
// It also reads the two files that live beside slurm.conf (GresPathFor,
// CgroupPathFor), with the same syntax and Include handling: gres.conf
// (LoadGres: which device files back each node's GPUs and other generic
// resources, and AutoDetect; an unknown key is an error there, as in
// Slurm) and cgroup.conf (LoadCgroup: what the agent confines, and
// MemLimit, Slurm's memory limit rule). Neither file has to exist: a
// missing gres.conf is empty, and a missing cgroup.conf gives Drover's
// defaults, which confine cores, memory, swap and devices (Slurm's do
// not).
//
// It does not watch files, talk to daemons or decide runtime state: the
// conversion to model types gives nodes their configured starting state
// and nothing more. Finding a node's GPUs is internal/gres's job.
package slurmconf
