// Package controller runs the leader's loops around the replicated state:
// the scheduling cycle (snapshot → sched.Schedule → commit → launch), the
// agents' streams (registration, heartbeats, job ends, launches and
// signals), node liveness and the purge of old finished jobs. Decisions are
// committed through Raft before anyone acts on them.
package controller
