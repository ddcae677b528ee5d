package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/state"
)

const (
	// maxResvDelay is how far in the past a new reservation may start
	// (Slurm's MAX_RESV_DELAY): "now" typed a moment ago still works.
	maxResvDelay = 600
	// resvUnlimited is how long Duration=UNLIMITED lasts: a year, as in
	// Slurm, so that the window still has an end to plan against.
	resvUnlimited = 365 * 86400
	// maxResvNames bounds Users= and Accounts= lists.
	maxResvNames = 1024
)

// ReservationCommand runs scontrol create, update or delete reservation
// (operators only) and returns the reservation's name.
func (s *Service) ReservationCommand(ctx context.Context, req *model.ResvRequest) (string, error) {
	id, err := s.Identify(ctx)
	if err != nil {
		return "", err
	}
	if !s.privileged(id) {
		return "", errDenied
	}
	if err := checkResvSizes(req); err != nil {
		return "", err
	}
	snap := s.store.Snapshot()
	now := s.clock.Now().Unix()
	var cmd *fsm.Reservation
	switch req.Op {
	case "delete":
		if snap.Reservation(req.Name) == nil {
			return "", invalid(model.MsgResvInvalid)
		}
		if resvInUse(snap, req.Name) {
			return "", invalid(model.MsgResvBusy)
		}
		cmd = &fsm.Reservation{Delete: req.Name}
	case "create", "update":
		var old *model.Reservation
		if req.Op == "update" {
			if old = snap.Reservation(req.Name); old == nil {
				return "", invalid(model.MsgResvInvalid)
			}
		} else if req.Name != "" && snap.Reservation(req.Name) != nil {
			return "", invalid(model.MsgResvDup)
		}
		r, err := buildReservation(snap, req, old, now)
		if err != nil {
			return "", err
		}
		cmd = &fsm.Reservation{Resv: r, Create: old == nil}
	default:
		return "", invalid("unknown reservation operation " + req.Op)
	}
	if _, err := s.raft.Apply(fsm.TypeReservation, cmd); err != nil {
		if errors.Is(err, fsm.ErrResvDup) || errors.Is(err, fsm.ErrResvOverlap) || errors.Is(err, fsm.ErrResvInvalid) {
			return "", invalid(err.Error())
		}
		return "", errCommit(err)
	}
	name := req.Name
	if cmd.Resv != nil {
		name = cmd.Resv.Name
	}
	s.log.Info("reservation "+req.Op, "name", name, "by", id.UID)
	s.notify.Kick()
	return name, nil
}

// Reservations lists every reservation and the controller's clock (for
// ACTIVE/INACTIVE). Anyone may read them, as in Slurm without PrivateData.
func (s *Service) Reservations(ctx context.Context) ([]*model.Reservation, int64, error) {
	if _, err := s.Identify(ctx); err != nil {
		return nil, 0, err
	}
	return s.store.Snapshot().Reservations(), s.clock.Now().Unix(), nil
}

// checkJobReservation admits --reservation: it must exist and let the
// user (or the job's account) in. A job naming none gets the
// reservation's partition when it names none either.
func checkJobReservation(snap *state.Snapshot, spec *model.JobSpec, user string) error {
	if spec.Reservation == "" {
		return nil
	}
	if len(spec.Reservation) > MaxStringLen {
		return invalid(msgTooLong)
	}
	r := snap.Reservation(spec.Reservation)
	if r == nil {
		return invalid(model.MsgResvInvalid)
	}
	if !r.Allows(user, spec.Account) {
		return &Error{Code: CodeDenied, Msg: model.MsgResvAccess}
	}
	if spec.Partition == "" && r.Partition != "" {
		spec.Partition = r.Partition
	}
	return nil
}

func checkResvSizes(req *model.ResvRequest) error {
	var c sizeCheck
	c.str("ReservationName", req.Name, MaxStringLen)
	c.str("Nodes", req.Nodes, maxListLen)
	c.str("PartitionName", req.Partition, MaxStringLen)
	c.list("Users", maxListLen, req.Users)
	c.list("Accounts", maxListLen, req.Accounts)
	if err := c.err(); err != nil {
		return err
	}
	if len(req.Users) > maxResvNames || len(req.Accounts) > maxResvNames {
		return invalid(msgTooLong)
	}
	if req.NodeCnt < 0 || req.CoreCnt < 0 || req.GPUs < 0 || req.Duration < model.Unlimited ||
		(req.Duration > 0 && req.Duration > 100*resvUnlimited) {
		return invalid(model.MsgInvalidTime)
	}
	return nil
}

// resvInUse reports whether an unfinished job asked for the reservation:
// Slurm refuses to delete such a reservation.
func resvInUse(snap *state.Snapshot, name string) bool {
	used := false
	snap.EachActive(func(j *model.Job) bool {
		used = j.Spec != nil && j.Spec.Reservation == name
		return !used
	})
	return used
}

// buildReservation applies req to old (nil: a new reservation) and checks
// the result: times, nodes, users, and that it overlaps no other
// reservation (unless OVERLAP) or running job (unless IGNORE_JOBS).
func buildReservation(snap *state.Snapshot, req *model.ResvRequest, old *model.Reservation, now int64) (*model.Reservation, error) {
	r := &model.Reservation{Name: req.Name}
	if old != nil {
		r = old.Clone()
	}
	if r.Name == "" {
		r.Name = resvName(snap, req)
	}
	if err := resvTimes(r, req, old == nil, now); err != nil {
		return nil, err
	}
	if req.HasFlags {
		if req.FlagsRemove {
			r.Flags &^= req.Flags
		} else {
			r.Flags |= req.Flags
		}
		if req.Flags&model.ResvPurgeComp != 0 {
			r.PurgeComp = cmpOr(req.PurgeComp, model.DefaultPurgeComp)
		}
	}
	if req.HasPartition {
		if snap.Partition(req.Partition) == nil {
			return nil, invalid("Invalid partition name specified")
		}
		r.Partition = req.Partition
	}
	if req.HasGPUs {
		r.GPUs = req.GPUs
	}
	if req.HasUsers {
		r.Users, r.UsersNot = editNames(r.Users, r.UsersNot, req.Users, req.UsersNot, req.UsersOp)
	}
	if req.HasAccounts {
		r.Accounts, r.AccountsNot = editNames(r.Accounts, r.AccountsNot, req.Accounts, req.AccountsNot, req.AccountsOp)
	}
	if len(r.Users) == 0 && len(r.Accounts) == 0 {
		return nil, invalid(model.MsgResvEmpty)
	}
	if err := resvNodes(snap, r, req, old == nil); err != nil {
		return nil, err
	}
	if model.ResvConflict(snap.Reservations(), r) != nil {
		return nil, invalid(model.MsgResvOverlap)
	}
	if r.Flags&model.ResvIgnoreJobs == 0 && jobsOverlap(snap, r) {
		return nil, invalid(model.MsgNodesBusy)
	}
	return r, nil
}

func cmpOr(v, def int64) int64 {
	if v > 0 {
		return v
	}
	return def
}

// resvName makes a name for a reservation created without one, as Slurm
// does: the first user (or account), "_", a number not yet taken.
func resvName(snap *state.Snapshot, req *model.ResvRequest) string {
	base := "resv"
	switch {
	case len(req.Users) > 0:
		base = req.Users[0]
	case len(req.Accounts) > 0:
		base = req.Accounts[0]
	}
	for n := 1; ; n++ {
		name := fmt.Sprintf("%s_%d", base, n)
		if snap.Reservation(name) == nil {
			return name
		}
	}
}

func resvTimes(r *model.Reservation, req *model.ResvRequest, create bool, now int64) error {
	if create && !req.HasStart {
		return invalid(model.MsgInvalidTime)
	}
	length := r.End - r.Start
	if req.HasStart {
		if req.Start < now-maxResvDelay && (create || req.Start != r.Start) {
			return invalid(model.MsgInvalidTime)
		}
		r.Start = req.Start
		if !create && !req.HasEnd && !req.HasDuration {
			r.End = r.Start + length // moving a window keeps its length
		}
	}
	switch {
	case req.HasEnd:
		r.End = req.End
	case req.HasDuration && req.Duration == model.Unlimited:
		r.End = r.Start + resvUnlimited
	case req.HasDuration:
		r.End = r.Start + req.Duration
	case create:
		return invalid(model.MsgInvalidTime)
	}
	if r.End <= r.Start {
		return invalid(model.MsgInvalidTime)
	}
	return nil
}

// editNames applies Users=/Users+=/Users-= (or Accounts) to a list.
func editNames(have []string, haveNot bool, given []string, givenNot bool, op byte) ([]string, bool) {
	switch op {
	case '+':
		for _, n := range given {
			if !slices.Contains(have, n) {
				have = append(have, n)
			}
		}
		return have, haveNot
	case '-':
		out := have[:0:0]
		for _, n := range have {
			if !slices.Contains(given, n) {
				out = append(out, n)
			}
		}
		return out, haveNot && len(out) > 0
	}
	return slices.Clone(given), givenNot
}

// resvNodes sets the reserved nodes from Nodes= (a hostlist, or ALL),
// NodeCnt=, CoreCnt= or TRES=gres/gpu=, or a partition's nodes; then the
// counts Slurm shows (CoreCnt, TRES cpu=).
func resvNodes(snap *state.Snapshot, r *model.Reservation, req *model.ResvRequest, create bool) error {
	var pool []*model.Node // candidates, node-table order
	if p := snap.Partition(r.Partition); p != nil {
		for _, n := range partitionNodes(snap, p) {
			pool = append(pool, n)
		}
		slices.SortFunc(pool, func(a, b *model.Node) int { return strings.Compare(a.Name, b.Name) })
	} else {
		pool = snap.Nodes()
	}
	coreCnt := 0
	switch {
	case req.HasNodes && strings.EqualFold(req.Nodes, "ALL"):
		r.Nodes = names(pool)
		r.Flags = r.Flags&^model.ResvSpecNodes | model.ResvAllNodes
	case req.HasNodes:
		exp, err := hostlist.Expand(req.Nodes)
		if err != nil || len(exp) == 0 {
			return invalid(model.MsgInvalidNodeName)
		}
		for _, n := range exp {
			if snap.Node(n) == nil {
				return invalid(model.MsgInvalidNodeName)
			}
		}
		slices.Sort(exp)
		r.Nodes = slices.Compact(exp)
		r.Flags = r.Flags&^model.ResvAllNodes | model.ResvSpecNodes
	case req.HasNodeCnt && req.NodeCnt > 0, req.HasCoreCnt && req.CoreCnt > 0, create && req.GPUs > 0:
		picked, err := pickResvNodes(snap, r, pool, req)
		if err != nil {
			return err
		}
		r.Nodes = picked
		r.Flags &^= model.ResvSpecNodes | model.ResvAllNodes
		if req.HasCoreCnt {
			coreCnt = req.CoreCnt
		}
	case create && r.Partition != "":
		r.Nodes = names(pool) // the whole partition, as Slurm does
	case create:
		return invalid(model.MsgInvalidNodeName)
	default:
		return nil // an update that leaves nodes alone
	}
	if len(r.Nodes) == 0 {
		return invalid(model.MsgInvalidNodeName)
	}
	r.CPUs, r.CoreCnt = 0, 0
	for _, name := range r.Nodes {
		n := snap.Node(name)
		r.CPUs += n.CPUs
		r.CoreCnt += nodeCores(n)
	}
	if coreCnt > 0 && coreCnt < r.CoreCnt {
		// Whole nodes are reserved (Drover does not reserve single
		// cores); the counts shown are the ones asked for.
		r.CPUs = r.CPUs * coreCnt / r.CoreCnt
		r.CoreCnt = coreCnt
	}
	return nil
}

func names(nodes []*model.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name
	}
	return out
}

func nodeCores(n *model.Node) int {
	if n.Sockets > 0 && n.Cores > 0 {
		return n.Sockets * n.Cores
	}
	return n.CPUs
}

// pickResvNodes chooses nodes for NodeCnt=/CoreCnt=/TRES=gres/gpu=: in
// node order, usable nodes first, skipping nodes another reservation
// holds in the window (unless OVERLAP); nodes whose jobs may still run at
// its start come last under IGNORE_JOBS and not at all without it.
func pickResvNodes(snap *state.Snapshot, r *model.Reservation, pool []*model.Node, req *model.ResvRequest) ([]string, error) {
	busy := busyNodes(snap, r)
	others := snap.Reservations()
	var usable, rest, taken []*model.Node
	for _, n := range pool {
		if busy[n.Name] {
			if r.Flags&model.ResvIgnoreJobs != 0 {
				taken = append(taken, n)
			}
			continue
		}
		if r.Flags&model.ResvOverlap == 0 && heldBy(others, r, n.Name) {
			continue
		}
		if n.Usable() {
			usable = append(usable, n)
		} else {
			rest = append(rest, n)
		}
	}
	var out []string
	nodes, cores, gpus := 0, 0, 0
	done := func() bool {
		return (!req.HasNodeCnt || nodes >= req.NodeCnt) && (!req.HasCoreCnt || cores >= req.CoreCnt) && gpus >= req.GPUs
	}
	for _, n := range slices.Concat(usable, rest, taken) {
		if done() {
			break
		}
		if req.GPUs > 0 && len(n.GPUs) == 0 && !req.HasNodeCnt && !req.HasCoreCnt {
			continue
		}
		out = append(out, n.Name)
		nodes++
		cores += nodeCores(n)
		gpus += len(n.GPUs)
	}
	if !done() {
		return nil, invalid(model.MsgNodesBusy)
	}
	slices.Sort(out)
	return out, nil
}

// heldBy reports whether another reservation holds node during r's
// window: chosen nodes avoid it (even a MAINT one, which Nodes= may
// overlap), unless r has OVERLAP.
func heldBy(others []*model.Reservation, r *model.Reservation, node string) bool {
	for _, o := range others {
		if o.Name != r.Name && o.Overlaps(r.Start, r.End) && o.HasNode(node) {
			return true
		}
	}
	return false
}

// busyNodes are the nodes of jobs (other than the reservation's own) that
// may still be running when r starts.
func busyNodes(snap *state.Snapshot, r *model.Reservation) map[string]bool {
	out := map[string]bool{}
	snap.EachAllocated(func(j *model.Job) bool {
		if j.Spec != nil && j.Spec.Reservation == r.Name {
			return true
		}
		end := int64(1 << 62)
		if j.TimeLimit > 0 && !j.Completing {
			end = j.StartTime + j.TimeLimit + j.SuspendedSecs
		} else if j.Completing {
			end = 0
		}
		if end > r.Start {
			for _, a := range j.Alloc {
				out[a.Node] = true
			}
		}
		return true
	})
	return out
}

// jobsOverlap reports whether a running job holds one of r's nodes past
// r's start: Slurm refuses such a reservation without IGNORE_JOBS.
func jobsOverlap(snap *state.Snapshot, r *model.Reservation) bool {
	busy := busyNodes(snap, r)
	for _, n := range r.Nodes {
		if busy[n] {
			return true
		}
	}
	return false
}
