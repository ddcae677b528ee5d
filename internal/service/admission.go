package service

import (
	"os/user"
	"slices"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/state"
)

// Slurm's words for jobs refused by accounting.
const (
	msgInvalidAccount = "Invalid account or account/partition combination specified"
	msgInvalidQOS     = "Invalid qos specification"
	msgPolicy         = "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)"
)

// admitAccounting fills in the job's account (the user's default when
// -A is not given) and QOS (the association's default, else normal), and
// applies AccountingStorageEnforce: an association is required, the QOS
// must be one the association allows, and the submit limits (MaxSubmit*,
// GrpSubmit*) refuse jobs at once. The running limits are the
// scheduler's: over them a job waits with a reason.
func (s *Service) admitAccounting(snap *state.Snapshot, spec *model.JobSpec, id *api.Identity, part *model.Partition) error {
	st := s.Settings()
	db, _ := s.acctDB()
	cluster := st.ClusterName
	user := db.Users[strings.ToLower(id.User)]
	var assoc *model.Assoc
	if user != nil && spec.Account != "" {
		assoc = db.UserAssoc(cluster, spec.Account, user.Name, part.Name)
	}
	if st.EnforceAssoc && assoc == nil {
		return invalid(msgInvalidAccount)
	}
	spec.QOS = strings.ToLower(spec.QOS)
	allowed := effectiveQOS(db, cluster, assoc)
	if spec.QOS == "" {
		spec.QOS = "normal"
		if assoc != nil && assoc.DefaultQOS != "" {
			spec.QOS = assoc.DefaultQOS
		} else if len(allowed) > 0 && !slices.Contains(allowed, "normal") {
			spec.QOS = allowed[0]
		}
	}
	if (len(part.AllowQOS) > 0 && !slices.Contains(part.AllowQOS, spec.QOS)) || slices.Contains(part.DenyQOS, spec.QOS) {
		return invalid(msgInvalidQOS)
	}
	if st.EnforceQOS {
		if db.QOS[spec.QOS] == nil || (assoc != nil && !slices.Contains(allowed, spec.QOS)) {
			return invalid(msgInvalidQOS)
		}
	}
	if st.EnforceLimits {
		return submitLimits(snap, db, cluster, spec, id, assoc)
	}
	return nil
}

// effectiveQOS is the QOS list an association allows: its own, else the
// nearest parent account's.
func effectiveQOS(db *model.AcctDB, cluster string, a *model.Assoc) []string {
	if a == nil {
		return nil
	}
	if len(a.QOS) > 0 {
		return a.QOS
	}
	for _, p := range db.Lineage(cluster, a.Account) {
		if len(p.QOS) > 0 {
			return p.QOS
		}
	}
	return nil
}

// submitLimits refuses a job that would take its user or account past a
// limit on jobs pending and running at once.
func submitLimits(snap *state.Snapshot, db *model.AcctDB, cluster string, spec *model.JobSpec, id *api.Identity, assoc *model.Assoc) error {
	type limit struct {
		max   int
		count func(j *model.Job) bool
	}
	var limits []limit
	add := func(max int, count func(j *model.Job) bool) {
		if max >= 0 {
			limits = append(limits, limit{max, count})
		}
	}
	if q := db.QOS[spec.QOS]; q != nil {
		add(q.MaxSubmitJobsPerUser, func(j *model.Job) bool { return j.UserID == id.UID && jobQOS(j) == q.Name })
		add(q.GrpSubmitJobs, func(j *model.Job) bool { return jobQOS(j) == q.Name })
	}
	if assoc != nil {
		maxSubmit := assoc.MaxSubmitJobs
		for _, p := range db.Lineage(cluster, assoc.Account) {
			if maxSubmit < 0 {
				maxSubmit = p.MaxSubmitJobs
			}
			acct := p.Account
			under := accountsUnder(db, cluster, acct)
			add(p.GrpSubmitJobs, func(j *model.Job) bool { return j.Spec != nil && under[j.Spec.Account] })
		}
		acct := assoc.Account
		add(maxSubmit, func(j *model.Job) bool { return j.UserID == id.UID && j.Spec != nil && j.Spec.Account == acct })
		add(assoc.GrpSubmitJobs, func(j *model.Job) bool { return j.UserID == id.UID && j.Spec != nil && j.Spec.Account == acct })
	}
	if len(limits) == 0 {
		return nil
	}
	n := 1
	if spec.Array != nil {
		n = len(spec.Array.TaskIDs)
	}
	counts := make([]int, len(limits))
	snap.EachActive(func(j *model.Job) bool {
		for i, l := range limits {
			if l.count(j) {
				counts[i]++
			}
		}
		return true
	})
	for i, l := range limits {
		if counts[i]+n > l.max {
			return invalid(msgPolicy)
		}
	}
	return nil
}

func jobQOS(j *model.Job) string {
	if j.Spec == nil || j.Spec.QOS == "" {
		return "normal"
	}
	return j.Spec.QOS
}

// accountsUnder is the set of account and its descendants.
func accountsUnder(db *model.AcctDB, cluster, account string) map[string]bool {
	under := map[string]bool{account: true}
	for changed := true; changed; {
		changed = false
		for _, a := range db.Assocs {
			if a.Cluster == cluster && a.User == "" && under[a.Parent] && !under[a.Account] {
				under[a.Account], changed = true, true
			}
		}
	}
	return under
}

// defaultAccount lower-cases the job's account, as accounting stores
// names, and gives a job without -A its user's default account.
func (s *Service) defaultAccount(spec *model.JobSpec, id *api.Identity) {
	spec.Account = strings.ToLower(spec.Account)
	if spec.Account != "" {
		return
	}
	db, _ := s.acctDB()
	if u := db.Users[strings.ToLower(id.User)]; u != nil {
		spec.Account = u.DefaultAccount
	}
}

// checkPrivileged applies what only an operator may ask for: a negative
// nice, and running as another user or group (sbatch refuses --uid/--gid
// itself; this stops a hand-made request). --priority from anyone else is
// dropped, as Slurm 22.05 does.
func (s *Service) checkPrivileged(spec *model.JobSpec, id *api.Identity) error {
	priv := s.privileged(id)
	if spec.Nice < 0 && !priv {
		return invalid("Invalid --nice value")
	}
	if !priv {
		spec.Priority = nil
		if (spec.UID != nil && *spec.UID != id.UID) || (spec.GID != nil && *spec.GID != id.GID) {
			return errDenied
		}
		spec.UID, spec.GID = nil, nil
	}
	return nil
}

// runAs is the identity a job runs under: the caller's, or the one root
// named with --uid/--gid.
func runAs(spec *model.JobSpec, id *api.Identity) (*api.Identity, error) {
	if spec.UID == nil && spec.GID == nil {
		return id, nil
	}
	out := *id
	if spec.UID != nil && *spec.UID != id.UID {
		u, err := user.LookupId(strconv.FormatUint(uint64(*spec.UID), 10))
		if err != nil {
			return nil, invalid("Invalid user id")
		}
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		out.UID, out.GID, out.User, out.Groups = *spec.UID, uint32(gid), u.Username, nil
		if gids, err := u.GroupIds(); err == nil {
			for _, g := range gids {
				if n, err := strconv.ParseUint(g, 10, 32); err == nil {
					out.Groups = append(out.Groups, uint32(n))
				}
			}
		}
	}
	if spec.GID != nil {
		out.GID = *spec.GID
	}
	return &out, nil
}

// checkJobCount refuses a job that would take the jobs in memory past
// MaxJobCount. The error is temporary: sbatch waits and retries, as room
// comes back when ended jobs age out after MinJobAge.
func checkJobCount(snap *state.Snapshot, spec *model.JobSpec, max int) error {
	if max <= 0 {
		return nil
	}
	n := 1
	if spec.Array != nil {
		n = len(spec.Array.TaskIDs)
	}
	if snap.NumJobs()+n > max {
		return ErrQueueFull
	}
	return nil
}

// checkHeldBytes refuses, for now, a job that would take what its
// user's jobs in memory hold of scripts, argv, environments and submit
// lines past MaxUserJobBytes (each distinct spec counted once: an
// array's tasks share one). As for MaxJobCount sbatch waits and retries:
// room comes back as the user's jobs end and age out. A user holding
// nothing may always submit one; root and SlurmUser are not bound.
func (s *Service) checkHeldBytes(st *Settings, spec *model.JobSpec, id *api.Identity) error {
	max := st.MaxUserJobBytes
	if max <= 0 || id.UID == 0 || id.UID == st.SlurmUID {
		return nil
	}
	held := s.store.HeldBytes(id.UID)
	if held > 0 && held+state.SpecBytes(spec) > max {
		return ErrQueueFull
	}
	return nil
}

// msgUserStepBytes is CreateStep's refusal past MaxUserJobBytes.
const msgUserStepBytes = "Step limit reached for this job: the running steps of its user's jobs hold their argv and environment budget in the controller"

// checkHeldStepBytes is checkHeldBytes for a step: the argv and
// environments of the steps of one user's jobs count against the same
// bound, apart from the jobs' own (so a full queue does not stop the
// user's running jobs' sruns). The per-job step budget alone let a user
// with many running jobs hold GiBs.
func (s *Service) checkHeldStepBytes(j *model.Job, spec *model.StepSpec) error {
	st := s.Settings()
	max := st.MaxUserJobBytes
	if max <= 0 || j.UserID == 0 || j.UserID == st.SlurmUID {
		return nil
	}
	held := s.store.HeldStepBytes(j.UserID)
	if held > 0 && held+state.StepExecBytes(spec) > max {
		return invalid(msgUserStepBytes)
	}
	return nil
}

// ErrQueueFull is MaxJobCount reached; transports mark it retryable.
var ErrQueueFull = api.ErrTryAgain
