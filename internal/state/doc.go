// Package state is the controller's in-memory store: jobs, nodes and
// partitions held in persistent (structurally shared) maps, so a Snapshot is
// an O(1) immutable view that readers and the scheduler use without locks.
//
// Only package fsm mutates the store, through a Txn, in Raft log order. The
// store knows nothing of Raft, the network or the clock.
package state
