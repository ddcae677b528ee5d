// Package sched decides which pending jobs start, where, and why the others
// wait: Schedule(Input, now, Config) → Plan.
//
// It owns the scheduling policy and nothing else: job ordering, the gates a
// pending job must pass (holds, dependencies, begin time, partition state
// and limits, array throttles), first-fit placement of CPUs and memory on
// nodes, the strict-priority block, and the pending reason of each job in
// Slurm's words. Feasible and JobResources expose the same placement rules
// to admission, so a job accepted at submit time is one Schedule can place.
//
// It must stay a pure function of its input and the clock value it is
// given. It must not read the clock, the network, files, the state store or
// Raft, must not write to its Input (the caller's snapshot), and must not
// use randomness: the same input always yields the same plan, which is
// what lets the simulator, the tests and the leader's plan verification
// trust it. The controller builds Input, calls Schedule, re-checks the
// Plan against the newest state and commits it; sched never commits
// anything. imports_test.go enforces that it imports only the standard
// library and internal/model.
//
// Two policies: sched/builtin (Config.Backfill false) keeps strict order,
// a job that waits for Resources holding back every lower-ordered job that
// could use its nodes (block in cluster.go). sched/backfill (backfill.go)
// gives a job that cannot start a reservation at the earliest time it
// fits, from a per-node profile of when running jobs reach their time
// limit and what earlier reservations hold (CPUs, memory, GPU indices);
// lower-ordered jobs start now only when they take nothing a reservation
// needs over their whole time limit. Plan.StartTimes carries the planned
// starts; bfsteps.go keeps each node's reserved use as a cached step
// function, so the earliest-start search (bfsearch.go) costs a scan per
// node, not a re-sort of its reservations per job, and bfbounds.go keeps
// per-shape lower bounds on each node's earliest start in min segment
// trees, so a job looks only at the nodes that may start it in time. Preemption (preempt.go:
// partition_prio or qos; CANCEL, REQUEUE or SUSPEND victims) is tried for
// a job that waits for Resources, and on gang partitions (gang.go) a
// waiting job may suspend jobs it can share CPUs with; subpackage gang
// decides each time slice.
//
// Advance reservations (Input.Reservations) reach placement as excluded
// nodes: subpackage resv decides, per job, which nodes reservations deny
// it over [now, now+limit) and which nodes its own reservation confines it
// to (reservations.go merges them into the job's -x set), so first-fit,
// backfill and preemption honour them without a path of their own. The
// backfill search for a later start sees them as blocks in time instead
// (resvplan.go): each window, repeats within bf_window included, holds
// its nodes from the jobs that may not use it, so planned starts fall
// after the window (or before it), and a job of a reservation is planned
// on its nodes within its window.
//
// Subpackage schedtest builds clusters, queues and job indexes for tests,
// benchmarks and the simulator, and checks plan invariants.
package sched
