// Package model holds Drover's domain types — jobs, nodes, partitions — and
// the pure methods on them (state names, reason names, derived values).
//
// It owns no I/O and imports only the standard library, so every other
// package (the scheduler, the FSM, the CLI formatters) can share it.
package model
