package sinfo

import (
	"context"
	"fmt"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/units"
)

// reservationReport is sinfo -T: one line per reservation, columns as
// Slurm's (RESV_NAME as wide as the longest name, at least 9).
func reservationReport(ctx context.Context, env *cli.Env, client cli.Client, noHeader bool) error {
	list, now, err := client.ListReservations(ctx)
	if err != nil {
		fmt.Fprintf(env.Stderr, "slurm_load_reservations: %v\n", err)
		return err
	}
	if len(list) == 0 {
		fmt.Fprintln(env.Stdout, noReservationsMsg)
		return nil
	}
	width := 9
	for _, r := range list {
		width = max(width, len(r.Name))
	}
	line := func(name, state, start, end, dur, nodes string) {
		fmt.Fprintf(env.Stdout, "%-*s  %8s  %19s  %19s  %11s  %s\n", width, name, state, start, end, dur, nodes)
	}
	if !noHeader {
		line("RESV_NAME", "STATE", "START_TIME", "END_TIME", "DURATION", "NODELIST")
	}
	for _, r := range list {
		state := "INACTIVE"
		if r.Start <= now && r.End >= now {
			state = "ACTIVE"
		}
		line(r.Name, state, units.FormatTimestamp(r.Start, "Unknown"), units.FormatTimestamp(r.End, "Unknown"),
			units.FormatElapsed(r.End-r.Start), hostlist.Compress(r.Nodes))
	}
	return nil
}

// markReserved sets each node's reservation flag (maint, resv) from the
// active reservations. A controller that cannot list them leaves the
// states plain: the node listing matters more than the flag.
func markReserved(ctx context.Context, client cli.Client, nodes []*model.Node) {
	list, now, err := client.ListReservations(ctx)
	if err != nil || len(list) == 0 {
		return
	}
	for _, n := range nodes {
		if n != nil {
			n.Resv = model.ResvNodeState(list, n.Name, now)
		}
	}
}
