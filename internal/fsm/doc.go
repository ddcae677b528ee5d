// Package fsm owns every change to controller state: one command type per
// kind of change (a type tag plus a JSON body), applied in Raft log order to
// the state store. Apply is deterministic — commands carry the leader's
// timestamps and decisions, never read a clock — so every replica and every
// replay after a restart reaches the same state. A Group carries several
// commands in one log entry (one write, one fsync), applied in order in one
// transaction, each with its own result. It also snapshots and restores
// the whole store for Raft.
package fsm
