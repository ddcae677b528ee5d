// Package cgroups owns the control groups Drover confines jobs with, on
// both layouts Linux has: the v1 hierarchies (one mount per controller, as
// on this project's build machines, "hybrid" systems included) and the
// unified v2 hierarchy. One Manager per node owns the subtree
// "drover/<node>" in every hierarchy, so several agents (virtual nodes)
// on one machine never touch each other's groups.
//
// A Group is a directory in each hierarchy: its limits (cpuset, memory
// and memory+swap, pids, devices), its statistics, the means to start a
// process inside it before that process runs (Targets, EnterThread), and
// its end (Kill everything inside, Delete).
//
// On v1 a group is a directory in the cpuset, cpuacct, memory, devices,
// freezer and pids hierarchies (not cpu: no shares or quotas are set),
// except where it would only repeat its parent's (no cpuset, devices or
// pids limit of its own; the freezer of a batch step): directories cost
// the kernel more than anything else a job's start and end do here; on
// v2 one directory, with cpuset, cpu, memory and pids delegated down to
// it. For the same reason an emptied top-level v1 group (with its one
// leaf, the batch step's) can be kept for the next Create whose limits
// set the same things (Recycler, recycle_v1.go): renamed, not made again.
// Path walks in cgroupfs are the next cost (kernfs walks by reference,
// name by name): a sub-group is made from its parent group's known
// directories (ChildMaker), and the files of a job's end are opened
// relative to their directories (at, files.go).
// NewAt works on another base (tests give a directory that mimics a
// hierarchy).
//
// Devices: on v1 the devices controller keeps an allow/deny list per
// group; on v2 a small eBPF program (BPF_PROG_TYPE_CGROUP_DEVICE,
// assembled here with cilium/ebpf) attached to the group decides. Both
// are inherited by sub-groups.
//
// It knows nothing of jobs, steps or users: callers name groups ("job_5",
// "job_5/step_0") and choose the limits. (Recycle knows one name: the
// batch step's leaf, "step_batch", the only sub-group a kept tree holds.)
package cgroups
