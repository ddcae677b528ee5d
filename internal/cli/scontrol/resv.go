package scontrol

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/jobspec"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/units"
)

// Reservations: create, update, delete and show, with scontrol's keywords,
// checks and messages. Times are resolved here against the local clock,
// as Slurm's scontrol does, and sent as absolute values.

// createResv is "create reservation k=v ..." (argv from "reservation").
func (r *runner) createResv(argv []string) {
	const tail = "No reservation created."
	req, ok := r.parseResv(argv, tail)
	if !ok {
		return
	}
	req.Op = "create"
	switch {
	case !req.HasStart:
		r.errorf("A start time must be given.  %s", tail)
	case !req.HasEnd && !req.HasDuration:
		r.errorf("An end time or duration must be given.  %s", tail)
	case req.HasEnd && req.HasDuration && req.Duration != model.Unlimited && req.Start+req.Duration != req.End:
		r.errorf("StartTime + Duration does not equal EndTime.  %s", tail)
	case req.HasEnd && req.Start > req.End:
		r.errorf("Start time cannot be after end time.  %s", tail)
	case !req.HasNodes && req.NodeCnt == 0 && req.CoreCnt == 0 && req.GPUs == 0 && !req.HasPartition:
		r.errorf("CoreCnt, Nodes, NodeCnt, BurstBuffer, Licenses or Watts must be specified.  %s", tail)
	case len(req.Users) == 0 && len(req.Accounts) == 0:
		r.errorf("Either Users/Groups and/or Accounts must be specified.  %s", tail)
	default:
		c := r.client("Error creating the reservation")
		if c == nil {
			return
		}
		name, err := c.ReservationCommand(r.ctx, req)
		if err != nil {
			r.perror("Error creating the reservation", err)
			return
		}
		fmt.Fprintf(r.env.Stdout, "Reservation created: %s\n", name)
	}
}

// updateResv is "update ReservationName=X k=v ...".
func (r *runner) updateResv(args []string) {
	const tail = "No reservation update."
	req, ok := r.parseResv(args, tail)
	if !ok {
		return
	}
	if req.Name == "" {
		r.errorf("Reservation must be given.  %s", tail)
		return
	}
	req.Op = "update"
	c := r.client("Error updating the reservation")
	if c == nil {
		return
	}
	if _, err := c.ReservationCommand(r.ctx, req); err != nil {
		r.perror("Error updating the reservation", err)
		return
	}
	fmt.Fprintln(r.env.Stdout, "Reservation updated.")
}

// deleteIt is "delete <entity>=<id>" or "delete <entity> <id>"; only
// reservations can be deleted in Drover.
func (r *runner) deleteIt(argv []string) {
	args := argv[1:]
	var tag, val string
	switch len(args) {
	case 1:
		var ok bool
		if tag, val, ok = strings.Cut(args[0], "="); !ok {
			r.errorf("Proper format is 'delete <ENTITY>=<ID>' or 'delete <ENTITY> <ID>'")
			return
		}
	case 2:
		tag, val = args[0], args[1]
	default:
		r.errorf("Proper format is 'delete <ENTITY>=<ID>' or 'delete <ENTITY> <ID>'")
		return
	}
	if !abbrev(tag, "ReservationName", 3) {
		r.complain("Invalid deletion entity: %s", args[0])
		return
	}
	what := "delete_reservation " + args[0]
	c := r.client(what)
	if c == nil {
		return
	}
	if _, err := c.ReservationCommand(r.ctx, &model.ResvRequest{Op: "delete", Name: val}); err != nil {
		r.perror(what, err)
	}
}

// parseResv reads the k=v words of create/update; tail ends each error.
func (r *runner) parseResv(args []string, tail string) (*model.ResvRequest, bool) {
	req := &model.ResvRequest{}
	now := r.env.Now()
	for _, arg := range args {
		tag, val, hasVal := strings.Cut(arg, "=")
		var op byte = '='
		if n := len(tag); hasVal && n > 0 && (tag[n-1] == '+' || tag[n-1] == '-') {
			op, tag = tag[n-1], tag[:n-1]
		}
		if !hasVal {
			if abbrev(tag, "reservation", 3) {
				continue
			}
			r.errorf("Misformatted parameter '%s', most options have a parameter after '='.  %s", arg, tail)
			return nil, false
		}
		bad := func(what string) (*model.ResvRequest, bool) {
			r.errorf("%s %s.  %s", what, arg, tail)
			return nil, false
		}
		if op != '=' && !abbrev(tag, "Users", 1) && !abbrev(tag, "Accounts", 1) && !abbrev(tag, "Flags", 2) {
			r.errorf("The +=/-= notation is not supported when updating %s.  %s", tag, tail)
			return nil, false
		}
		switch {
		case abbrev(tag, "ReservationName", 3):
			req.Name = val
		case abbrev(tag, "Accounts", 1):
			req.Accounts, req.AccountsNot = splitNames(val)
			req.HasAccounts, req.AccountsOp = true, op
		case abbrev(tag, "Flags", 2):
			f, purge, ok := parseResvFlags(val)
			if !ok {
				r.errorf("Error parsing flags %s.  %s", val, tail)
				return nil, false
			}
			req.Flags, req.PurgeComp, req.HasFlags, req.FlagsRemove = f, purge, true, op == '-'
		case abbrev(tag, "Users", 1):
			req.Users, req.UsersNot = splitNames(val)
			req.HasUsers, req.UsersOp = true, op
		case abbrev(tag, "StartTime", 2):
			t, err := jobspec.ParseBegin(val, now)
			if err != nil {
				return bad("Invalid start time")
			}
			req.Start, req.HasStart = t.Unix(), true
		case abbrev(tag, "EndTime", 1):
			t, err := jobspec.ParseBegin(val, now)
			if err != nil {
				return bad("Invalid end time")
			}
			req.End, req.HasEnd = t.Unix(), true
		case abbrev(tag, "Duration", 1):
			d, err := units.ParseDuration(val)
			if err != nil {
				return bad("Invalid duration")
			}
			req.Duration, req.HasDuration = d, true
		case abbrev(tag, "NodeCnt", 5), abbrev(tag, "NodeCount", 5):
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 || n > 1<<20 {
				r.errorf("Invalid node count %s.  %s", arg, tail)
				return nil, false
			}
			req.NodeCnt, req.HasNodeCnt = n, true
		case abbrev(tag, "CoreCnt", 5), abbrev(tag, "CoreCount", 5), abbrev(tag, "CPUCnt", 5), abbrev(tag, "CPUCount", 5):
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 || n > 1<<24 {
				r.errorf("Invalid core count %s.  %s", arg, tail)
				return nil, false
			}
			req.CoreCnt, req.HasCoreCnt = n, true
		case abbrev(tag, "Nodes", 5):
			if !strings.EqualFold(val, "ALL") {
				if _, err := hostlist.Expand(val); err != nil {
					r.errorf("Invalid node list %s.  %s", arg, tail)
					return nil, false
				}
			}
			req.Nodes, req.HasNodes = val, true
		case abbrev(tag, "PartitionName", 1):
			req.Partition, req.HasPartition = val, true
		case abbrev(tag, "TRES", 1):
			if !parseResvTRES(val, req) {
				r.errorf("Invalid TRES %s.  %s", val, tail)
				return nil, false
			}
		case abbrev(tag, "Groups", 1), abbrev(tag, "Features", 2), abbrev(tag, "Licenses", 2),
			abbrev(tag, "BurstBuffer", 2), abbrev(tag, "Watts", 1), abbrev(tag, "MaxStartDelay", 2),
			abbrev(tag, "Skip", 2):
			r.errorf("%s: not supported by Drover.  %s", tag, tail)
			return nil, false
		case abbrev(tag, "res", 3):
		default:
			r.errorf("Unknown parameter %s.  %s", arg, tail)
			return nil, false
		}
	}
	return req, true
}

// splitNames splits "a,b" or "-a,-b" (an exclusion list).
func splitNames(val string) ([]string, bool) {
	var out []string
	not := false
	for _, n := range strings.Split(val, ",") {
		if strings.HasPrefix(n, "-") {
			not, n = true, n[1:]
		}
		if n != "" {
			out = append(out, n)
		}
	}
	return out, not
}

// parseResvFlags parses "MAINT,IGNORE_JOBS" or "PURGE_COMP=5:00";
// MAINTENANCE is MAINT spelled out.
func parseResvFlags(val string) (model.ResvFlags, int64, bool) {
	var f model.ResvFlags
	var purge int64
	for _, w := range strings.Split(val, ",") {
		name, arg, hasArg := strings.Cut(w, "=")
		if strings.EqualFold(name, "MAINTENANCE") {
			name = "MAINT"
		}
		flag, ok := model.ResvFlagByName(name)
		if !ok {
			return 0, 0, false
		}
		if hasArg {
			if flag != model.ResvPurgeComp {
				return 0, 0, false
			}
			d, err := units.ParseDuration(arg)
			if err != nil || d <= 0 {
				return 0, 0, false
			}
			purge = d
		}
		f |= flag
	}
	return f, purge, true
}

// parseResvTRES reads TRES=cpu=N,node=N,gres/gpu[:type]=N.
func parseResvTRES(val string, req *model.ResvRequest) bool {
	for _, w := range strings.Split(val, ",") {
		k, v, ok := strings.Cut(w, "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n < 0 || n > 1<<24 {
			return false
		}
		switch {
		case strings.EqualFold(k, "cpu"):
			req.CoreCnt, req.HasCoreCnt = n, true
		case strings.EqualFold(k, "node"):
			req.NodeCnt, req.HasNodeCnt = n, true
		case strings.EqualFold(k, "gres/gpu") || strings.HasPrefix(strings.ToLower(k), "gres/gpu:"):
			req.GPUs, req.HasGPUs = n, true
		default:
			return false
		}
	}
	return true
}

// showResv is "show reservation [NAME]".
func (r *runner) showResv(name string, hasName bool) {
	c := r.client("slurm_load_reservations error")
	if c == nil {
		return
	}
	list, now, err := c.ListReservations(r.ctx)
	if err != nil {
		r.perror("slurm_load_reservations error", err)
		return
	}
	var b strings.Builder
	for _, rv := range list {
		if hasName && rv.Name != name {
			continue
		}
		b.WriteString(r.resvRecord(rv, now))
	}
	switch {
	case b.Len() > 0:
		fmt.Fprint(r.env.Stdout, b.String())
	case hasName:
		r.fail()
		fmt.Fprintf(r.env.Stdout, "Reservation %s not found\n", name)
	default:
		fmt.Fprintln(r.env.Stdout, "No reservations in the system")
	}
}

// resvRecord formats one reservation as scontrol show reservation does.
func (r *runner) resvRecord(rv *model.Reservation, now int64) string {
	le := r.lineEnd()
	state := "INACTIVE"
	if rv.Start <= now && rv.End >= now {
		state = "ACTIVE"
	}
	tres := "cpu=" + strconv.Itoa(rv.CPUs)
	if rv.GPUs > 0 {
		tres += ",gres/gpu=" + strconv.Itoa(rv.GPUs)
	}
	part := rv.Partition
	if part == "" {
		part = "(null)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ReservationName=%s StartTime=%s EndTime=%s Duration=%s%s", rv.Name,
		units.FormatTimestamp(rv.Start, "Unknown"), units.FormatTimestamp(rv.End, "Unknown"),
		units.FormatElapsed(rv.End-rv.Start), le)
	fmt.Fprintf(&b, "Nodes=%s NodeCnt=%d CoreCnt=%d Features=(null) PartitionName=%s Flags=%s%s",
		hostlist.Compress(rv.Nodes), len(rv.Nodes), rv.CoreCnt, part, flagString(rv), le)
	fmt.Fprintf(&b, "TRES=%s%s", tres, le)
	fmt.Fprintf(&b, "Users=%s Groups=(null) Accounts=%s Licenses=(null) State=%s BurstBuffer=(null) Watts=n/a%s",
		model.ListString(rv.Users, rv.UsersNot), model.ListString(rv.Accounts, rv.AccountsNot), state, le)
	b.WriteString("MaxStartDelay=(null)")
	b.WriteString(r.recordEnd())
	return b.String()
}

// flagString is Flags=, with PURGE_COMP's delay when it is not the default.
func flagString(rv *model.Reservation) string {
	s := rv.FlagString()
	if rv.Flags&model.ResvPurgeComp != 0 && rv.PurgeComp > 0 && rv.PurgeComp != model.DefaultPurgeComp {
		s = strings.Replace(s, "PURGE_COMP", "PURGE_COMP="+units.FormatElapsed(rv.PurgeComp), 1)
	}
	return s
}

// create is "create <entity> ..."; only reservations in Drover.
func (r *runner) create(argv []string) {
	if len(argv) < 2 {
		r.complain("too few arguments for keyword:%s", argv[0])
		return
	}
	tag, _, _ := strings.Cut(argv[1], "=")
	switch {
	case abbrev(tag, "ReservationName", 3):
		r.createResv(argv[1:])
	case abbrev(tag, "PartitionName", 3), abbrev(tag, "NodeName", 3):
		r.fail()
		r.env.Errorf("create %s: not supported by Drover", tag)
	default:
		r.complain("Invalid creation entity: %s", argv[1])
	}
}
