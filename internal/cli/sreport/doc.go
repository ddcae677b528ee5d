// Package sreport is the sreport command: usage reports computed from
// the accounting records (cluster utilization, usage by account and user,
// top users, job sizes), in Slurm's report layouts.
package sreport
