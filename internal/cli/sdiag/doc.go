// Package sdiag is the sdiag command: the controller's statistics in the
// layout of Slurm's sdiag — thread count, the accounting queue (the jobs
// whose records wait for the database: "DBD Agent queue size"), job
// counters since the last reset, the main scheduler's cycle figures, and
// RPC counts by method and by user.
//
// Drover has no agent queue (the controller writes to each node's stream
// directly) and no backfill scheduler yet: the agent lines print 0 and the
// backfill block is left out rather than filled with numbers that do not
// exist. RPCs are named by Drover's methods, which have no Slurm message
// numbers.
package sdiag
