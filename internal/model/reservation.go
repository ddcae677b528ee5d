package model

import (
	"slices"
	"strings"
	"time"
)

// ResvFlags is a set of reservation flags (scontrol create reservation
// Flags=). Every flag Slurm 22.05 names is parsed and kept; the ones whose
// meaning Drover implements are listed at ResvFlagNames.
type ResvFlags uint32

// Reservation flags, in the order Slurm prints them.
const (
	ResvMaint ResvFlags = 1 << iota
	ResvFlex
	ResvOverlap
	ResvIgnoreJobs
	ResvHourly
	ResvDaily
	ResvWeekday
	ResvWeekend
	ResvWeekly
	ResvSpecNodes
	ResvAllNodes
	ResvAnyNodes
	ResvStatic
	ResvPartNodes
	ResvFirstCores
	ResvTimeFloat
	ResvReplace
	ResvReplaceDown
	ResvPurgeComp
	ResvNoHoldJobsAfterEnd
	ResvMagnetic
)

// ResvFlagNames maps each flag to its name, in Slurm's print order.
// Implemented: MAINT (node state maint, pending reason), FLEX (jobs may
// use nodes outside), OVERLAP and IGNORE_JOBS (creation checks),
// HOURLY/DAILY/WEEKDAY/WEEKEND/WEEKLY (the window repeats), SPEC_NODES and
// ALL_NODES (set from Nodes=), PURGE_COMP (deleted once its jobs are done).
// The rest are stored and shown only.
var ResvFlagNames = []struct {
	Flag ResvFlags
	Name string
}{
	{ResvMaint, "MAINT"}, {ResvFlex, "FLEX"}, {ResvOverlap, "OVERLAP"},
	{ResvIgnoreJobs, "IGNORE_JOBS"}, {ResvHourly, "HOURLY"}, {ResvDaily, "DAILY"},
	{ResvWeekday, "WEEKDAY"}, {ResvWeekend, "WEEKEND"}, {ResvWeekly, "WEEKLY"},
	{ResvSpecNodes, "SPEC_NODES"}, {ResvAllNodes, "ALL_NODES"}, {ResvAnyNodes, "ANY_NODES"},
	{ResvStatic, "STATIC"}, {ResvPartNodes, "PART_NODES"}, {ResvFirstCores, "FIRST_CORES"},
	{ResvTimeFloat, "TIME_FLOAT"}, {ResvReplace, "REPLACE"}, {ResvReplaceDown, "REPLACE_DOWN"},
	{ResvPurgeComp, "PURGE_COMP"}, {ResvNoHoldJobsAfterEnd, "NO_HOLD_JOBS_AFTER_END"},
	{ResvMagnetic, "MAGNETIC"},
}

// ResvFlagByName finds a flag by its name, ignoring case; ok false when
// Slurm has no such flag.
func ResvFlagByName(name string) (ResvFlags, bool) {
	for _, f := range ResvFlagNames {
		if strings.EqualFold(f.Name, name) {
			return f.Flag, true
		}
	}
	return 0, false
}

// ResvRecurring is the set of flags that make a window repeat.
const ResvRecurring = ResvHourly | ResvDaily | ResvWeekday | ResvWeekend | ResvWeekly

// DefaultPurgeComp is PURGE_COMP's delay when none is given (Slurm: 5 min).
const DefaultPurgeComp = 300

// Reservation is a window of time during which nodes are set aside for
// some users or accounts (or, with MAINT, for maintenance). Times are unix
// seconds; the window is [Start, End).
type Reservation struct {
	Name  string    `json:"name"`
	Start int64     `json:"start"`
	End   int64     `json:"end"`
	Flags ResvFlags `json:"flags,omitempty"`
	// Nodes are the reserved nodes, expanded, in node-table order.
	Nodes     []string `json:"nodes"`
	CoreCnt   int      `json:"core_cnt"`
	CPUs      int      `json:"cpus"`           // TRES cpu=
	GPUs      int      `json:"gpus,omitempty"` // TRES gres/gpu=
	Partition string   `json:"partition,omitempty"`
	// Users and Accounts may use the reservation; with UsersNot
	// (AccountsNot) everyone but them may ("Users=-bob").
	Users       []string `json:"users,omitempty"`
	UsersNot    bool     `json:"users_not,omitempty"`
	Accounts    []string `json:"accounts,omitempty"`
	AccountsNot bool     `json:"accounts_not,omitempty"`
	// PurgeComp is PURGE_COMP's delay in seconds.
	PurgeComp int64 `json:"purge_comp,omitempty"`
}

// Active reports whether now falls inside the window.
func (r *Reservation) Active(now int64) bool { return r.Start <= now && now < r.End }

// Overlaps reports whether the window meets [a, b).
func (r *Reservation) Overlaps(a, b int64) bool { return r.Start < b && a < r.End }

// HasNode reports whether node is reserved.
func (r *Reservation) HasNode(node string) bool { return slices.Contains(r.Nodes, node) }

// Allows reports whether a job of user, charged to account, may run in
// the reservation. A name on an exclusion list ("-bob") denies; a name on
// an inclusion list allows; with only exclusion lists everyone else is
// allowed, otherwise nobody else is.
func (r *Reservation) Allows(user, account string) bool {
	inUsers := slices.Contains(r.Users, user)
	inAccts := account != "" && slices.Contains(r.Accounts, account)
	if (r.UsersNot && inUsers) || (r.AccountsNot && inAccts) {
		return false
	}
	if (len(r.Users) > 0 && !r.UsersNot && inUsers) || (len(r.Accounts) > 0 && !r.AccountsNot && inAccts) {
		return true
	}
	inclusive := (len(r.Users) > 0 && !r.UsersNot) || (len(r.Accounts) > 0 && !r.AccountsNot)
	return !inclusive && (len(r.Users) > 0 || len(r.Accounts) > 0)
}

// FlagString is Flags= as Slurm prints it ("MAINT,SPEC_NODES").
func (r *Reservation) FlagString() string {
	var out []string
	for _, f := range ResvFlagNames {
		if r.Flags&f.Flag != 0 {
			out = append(out, f.Name)
		}
	}
	return strings.Join(out, ",")
}

// ListString is a Users= or Accounts= value: names joined by commas, each
// prefixed "-" for an exclusion list; "(null)" when empty.
func ListString(names []string, not bool) string {
	if len(names) == 0 {
		return "(null)"
	}
	if !not {
		return strings.Join(names, ",")
	}
	return "-" + strings.Join(names, ",-")
}

// Period is how far a recurring window moves when it ends (0: it does not
// recur). WEEKDAY and WEEKEND move a day at a time; NextWindow skips the
// days they leave out.
func (r *Reservation) Period() int64 {
	switch {
	case r.Flags&ResvHourly != 0:
		return 3600
	case r.Flags&(ResvDaily|ResvWeekday|ResvWeekend) != 0:
		return 86400
	case r.Flags&ResvWeekly != 0:
		return 7 * 86400
	}
	return 0
}

// Clone returns a copy of r that may be modified.
func (r *Reservation) Clone() *Reservation {
	c := *r
	c.Nodes = slices.Clone(r.Nodes)
	c.Users = slices.Clone(r.Users)
	c.Accounts = slices.Clone(r.Accounts)
	return &c
}

// ResvRequest is scontrol create/update/delete reservation as parsed by
// the client: times are already absolute (the client resolves "now+1hour"
// as Slurm's scontrol does). Zero values mean "not given".
type ResvRequest struct {
	Op   string `json:"op"` // "create", "update", "delete"
	Name string `json:"name"`
	// Start and End are unix seconds; Duration seconds, or Unlimited.
	Start, End, Duration int64
	HasStart, HasEnd     bool
	HasDuration          bool
	Nodes                string `json:"nodes,omitempty"` // hostlist or "ALL"
	NodeCnt, CoreCnt     int
	GPUs                 int    `json:"gpus,omitempty"`
	Partition            string `json:"partition,omitempty"`
	// Flags to set; with FlagsRemove (Flags-=) to clear instead.
	Flags       ResvFlags `json:"flags,omitempty"`
	FlagsRemove bool      `json:"flags_remove,omitempty"`
	PurgeComp   int64     `json:"purge_comp,omitempty"`
	// Users/Accounts: the list given; Op '=' replaces, '+' adds, '-'
	// removes (Users+=carl, Users-=bob); HasUsers when given at all.
	Users, Accounts        []string
	UsersNot, AccountsNot  bool
	HasUsers, HasAccounts  bool
	UsersOp, AccountsOp    byte
	HasNodes, HasPartition bool
	HasNodeCnt, HasCoreCnt bool
	HasGPUs, HasFlags      bool
}

// Reservation-related pending reasons and errors in Slurm's words.
const (
	ReasonReservation  = "Reservation"
	ReasonResvMaint    = "ReqNodeNotAvail, Reserved for maintenance"
	MsgResvAccess      = "Access denied to requested reservation"
	MsgResvInvalid     = "Requested reservation is invalid"
	MsgResvOverlap     = "Requested reservation overlaps with another reservation"
	MsgResvBusy        = "Requested reservation is in use"
	MsgResvDup         = "Duplicate reservation name"
	MsgResvEmpty       = "Reservation request lacks users, groups or accounts"
	MsgNodesBusy       = "Requested nodes are busy"
	MsgInvalidTime     = "Invalid time specified"
	MsgInvalidNodeName = "Invalid node name specified"
)

// ResvConflict returns the first of others that r may not overlap: one
// that shares a node with r while their windows meet. As in Slurm, a
// MAINT or OVERLAP reservation may overlap any other, and any may overlap
// a MAINT or OVERLAP one. A reservation never conflicts with itself.
func ResvConflict(others []*Reservation, r *Reservation) *Reservation {
	const free = ResvMaint | ResvOverlap
	if r.Flags&free != 0 {
		return nil
	}
	for _, o := range others {
		if o.Name == r.Name || o.Flags&free != 0 || !o.Overlaps(r.Start, r.End) {
			continue
		}
		for _, n := range r.Nodes {
			if o.HasNode(n) {
				return o
			}
		}
	}
	return nil
}

// Shadows reports whether the jobs of r may use other's nodes during
// other's window, as in Slurm: a MAINT reservation's jobs ignore every
// other reservation, an OVERLAP one's every other but MAINT ones. (Only
// such reservations can share nodes and time with another: ResvConflict.)
func (r *Reservation) Shadows(other *Reservation) bool {
	return r.Flags&ResvMaint != 0 || (r.Flags&ResvOverlap != 0 && other.Flags&ResvMaint == 0)
}

// ResvNodeState is the reservation flag node shows at now: "MAINT" in an
// active MAINT reservation, "RESERVED" in another active one, "" else.
func ResvNodeState(list []*Reservation, node string, now int64) string {
	state := ""
	for _, r := range list {
		if !r.Active(now) || !r.HasNode(node) {
			continue
		}
		if r.Flags&ResvMaint != 0 {
			return "MAINT"
		}
		state = "RESERVED"
	}
	return state
}

// NextWindow is the window a recurring reservation moves to once its
// current one has ended by now: shifted by Period until it ends after
// now, WEEKDAY (WEEKEND) windows only starting Monday to Friday (on
// Saturday or Sunday) in loc. ok is false for a reservation that does
// not recur.
func (r *Reservation) NextWindow(now int64, loc *time.Location) (start, end int64, ok bool) {
	p := r.Period()
	if p == 0 {
		return 0, 0, false
	}
	length := r.End - r.Start
	start = r.Start
	for i := 0; i < 1<<20; i++ {
		start += p
		if start+length <= now {
			continue
		}
		wd := time.Unix(start, 0).In(loc).Weekday()
		weekend := wd == time.Saturday || wd == time.Sunday
		if (r.Flags&ResvWeekday != 0 && weekend) || (r.Flags&ResvWeekend != 0 && !weekend) {
			continue
		}
		return start, start + length, true
	}
	return 0, 0, false
}
