// Package raftnode wires hashicorp/raft for the controller: a raft-wal log
// and stable store, file snapshots, and the FSM adapter. A single controller
// is a one-voter cluster on an in-memory transport; the same code path
// commits every change, so adding voters later changes wiring, not logic.
// ApplyDeferred lets a command that may wait a few milliseconds (a job's
// end) ride with the next commit in one fsm.Group entry (group.go).
package raftnode
