// Package sinfo implements the sinfo command: it lists partitions and nodes
// (cli.Client.ListPartitions and ListNodes), groups nodes into lines and
// renders them with internal/format in Slurm 22.05's layout.
//
// Grouping follows Slurm: without -N, the nodes of a partition that agree
// on every node attribute the format prints (state, reason, features, GRES,
// ...) share a line, and the counts, node list and A/I/O/T summaries are
// computed over the group; numeric attributes (CPUs, memory, weight, S:C:T)
// print as "min" or "min+" unless -e asks for exact groups. A partition
// with no matching node still prints a line ("n/a" state, 0 nodes) when
// the format shows the partition. -N prints one line per node and
// partition; -R lists down and drained nodes by reason, across partitions.
//
// Default formats, written in format's language ("#" = width of the widest
// value, at least 9, as Slurm sizes partition and node columns):
//
//	default  %#P %.5a %.10l %.6D %.6t %N
//	-s       %#P %.5a %.10l %.16F %N
//	-l       %#P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %N
//	-N       %#N %.6D %.#P %6t
//	-N -l    %#N %.6D %.#P %.11T %4c %.8z %.6m %.8d %.6w %.8f %20E
//	-R       %20E %9u %19H %N
//	-R -l    %20E %12U %19H %6t %N
//
// Default order: partitions as configured, then node state descending (as
// Slurm's numeric states sort: flagged states such as drained first, then
// mixed, allocated, idle, down); -N sorts by node name.
//
// -V prints "slurm <version>", like Drover's other commands. Not supported:
// --json/--yaml, -M clusters, reservations (-T prints "No reservations in
// the system"), and CPU load and free memory (print "N/A"). GRES usage
// (-O gresused) is cli.GresUsed: Slurm's GresUsed forms.
//
// sinfo never imports server packages; everything it shows comes through
// cli.Client.
package sinfo
