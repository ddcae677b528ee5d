// Package controller runs the leader's loops around the replicated state:
// the scheduling cycle (snapshot → sched.ScheduleUntil, in a Scratch
// kept from pass to pass → commit → launch), the agents' streams
// (registration, heartbeats, job ends, launches and signals), node
// liveness, the purge of old finished jobs, and the slicer (slices.go)
// that resumes suspended preemption victims and turns gang time slices.
// Decisions are committed through Raft before anyone acts on them.
//
// Leadership is explicit (leader.go). A Leadership source (Polled over the
// raftnode.Node in production, a fake in tests) says whether this controller leads; Run
// starts every loop of leaderLoops when leadership is gained and, when it
// is lost, cancels their context and waits until each has returned. That
// list is the one place leader-only work is registered: scheduling passes
// and their pacing, the accounting outbox writer, dead-node detection and
// the MinJobAge purge, priority recalculation. A loop takes the term's
// context, stops its timers when it ends, and proposes only while it runs.
// LeaderOnly wraps the committer the controller and the service share, so
// a follower (or a loop that outlived its term) proposes nothing: while
// another leader is known the change is refused with a
// service.NotLeaderError naming it, which the gRPC adapter turns into
// Unavailable with the address in its details.
//
// Time comes from the injected clock.Clock (tickers, timers, AfterFunc),
// never from package time, so tests drive the loops on a fake clock.
package controller
