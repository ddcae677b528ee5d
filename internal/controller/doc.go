// Package controller runs the leader's loops around the replicated state:
// the scheduling cycle (snapshot → sched.Schedule → commit → launch), the
// agents' streams (registration, heartbeats, job ends, launches and
// signals), node liveness, the purge of old finished jobs, and the
// slicer (slices.go) that resumes suspended preemption victims and turns
// gang time slices. Decisions are
// committed through Raft before anyone acts on them.
package controller
