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
// It does not watch files, talk to daemons or decide runtime state: the
// conversion to model types gives nodes their configured starting state
// and nothing more. gres.conf and cgroup.conf are meant to live here too
// but are not parsed yet.
package slurmconf
