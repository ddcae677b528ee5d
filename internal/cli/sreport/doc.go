// Package sreport is the sreport command: usage reports computed from
// the accounting records, in Slurm 22.05's layouts — cluster
// Utilization, AccountUtilizationByUser and UserUtilizationByAccount,
// user TopUsage and job SizesByAccount — with its options (-t units,
// -T/--tres, -p/-P/-n, -M/-a), its Key=Value conditions (Start=, End=,
// Accounts=, Users=, Format=, ...) and its interactive mode.
//
// Slurm reads hourly rollups; sreport here computes each job's share of
// the period from its start and end, so the period is not rounded to the
// hour. A cluster's capacity is its nodes' current CPUs (memory, GPUs,
// ...) over the period, known for the local cluster only; node down time
// and reservations are not recorded yet, so Down and Planned are 0.
package sreport
