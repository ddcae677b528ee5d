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
// v0 has no backfill and no preemption: a job that waits for Resources
// holds back every lower-ordered job that could use its nodes. Backfill
// (start lower jobs that end before the blocked job's reserved start) and
// preemption (free nodes before a Resources wait) extend consider in
// sched.go; the free-count bookkeeping in cluster.go is where their
// what-if-and-undo will live.
//
// Subpackage schedtest builds clusters, queues and job indexes for tests,
// benchmarks and the simulator, and checks plan invariants.
package sched
