package service

import (
	"maps"
	"slices"
	"strings"

	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/state"
)

// topJobs is scontrol top JOBID[,JOBID...]: the named jobs move, in the
// order given, ahead of the other pending jobs of the same user,
// partition, account and QOS (those of the first named job; others are
// left alone, as are jobs of several partitions, held jobs and jobs an
// operator gave a priority). The group's priorities are exchanged, not
// raised: the named jobs take the group's highest values and the rest
// keep their order below, where ties are broken downwards, so the
// user's standing against other users does not improve. Each moved
// job's nice changes by what its priority did, so the periodic
// recalculation keeps the new order. Operators only, unless
// SchedulerParameters=enable_user_top.
func (s *Service) topJobs(id *api.Identity, priv bool, sel api.JobSelection) ([]api.JobResult, error) {
	if !priv && !s.Settings().Priority.EnableUserTop {
		return nil, errDenied
	}
	snap := s.store.Snapshot()
	results, chosen := s.judge(snap, &sel, id, priv, func(j *model.Job) string {
		if j.State != model.JobPending {
			return msgNotPending
		}
		return ""
	})
	var named []*model.Job
	for _, j := range chosen {
		if !slices.Contains(named, j) {
			named = append(named, j)
		}
	}
	if len(named) == 0 {
		return results, nil
	}
	key := topKey(named[0])
	movable := func(j *model.Job) bool {
		return j.State == model.JobPending && j.Priority > 0 && !j.PrioritySet &&
			!strings.Contains(j.Partition, ",") && topKey(j) == key
	}
	named = slices.DeleteFunc(named, func(j *model.Job) bool { return !movable(j) })
	if len(named) == 0 {
		return results, nil
	}
	prio, nice := topOrder(snap, named, movable)
	if len(prio) == 0 {
		return results, nil
	}
	now := s.clock.Now().Unix()
	for _, jid := range slices.Sorted(maps.Keys(nice)) {
		n := nice[jid]
		if _, err := s.raft.Apply(fsm.TypeUpdateJob, &fsm.UpdateJob{Jobs: []model.JobID{jid}, Nice: &n, Now: now}); err != nil {
			return nil, errCommit(err)
		}
	}
	if _, err := s.raft.Apply(fsm.TypePriorities, &fsm.Priorities{Jobs: prio}); err != nil {
		return nil, errCommit(err)
	}
	s.notify.Kick()
	return results, nil
}

// topKey is what jobs must share to be reordered together.
func topKey(j *model.Job) [4]string {
	acct, qos := "", ""
	if j.Spec != nil {
		acct, qos = strings.ToLower(j.Spec.Account), j.Spec.QOS
	}
	return [4]string{j.UserName, j.Partition, acct, qos}
}

// topOrder gives the group (named first, in order, then the others by
// priority, then id) the group's priorities from the highest down, each
// strictly below the one before; it returns the priorities and nice
// values of the jobs that change.
func topOrder(snap *state.Snapshot, named []*model.Job, member func(*model.Job) bool) (map[model.JobID]uint32, map[model.JobID]int) {
	var rest []*model.Job
	var values []uint32
	snap.EachActive(func(j *model.Job) bool {
		if member(j) {
			values = append(values, j.Priority)
			if !slices.Contains(named, j) {
				rest = append(rest, j)
			}
		}
		return true
	})
	slices.SortStableFunc(rest, func(a, b *model.Job) int {
		switch {
		case a.Priority > b.Priority:
			return -1
		case a.Priority < b.Priority:
			return 1
		}
		return int(a.ID) - int(b.ID)
	})
	slices.SortFunc(values, func(a, b uint32) int { return int(int64(b) - int64(a)) })
	order := append(slices.Clone(named), rest...)
	prio, nice := map[model.JobID]uint32{}, map[model.JobID]int{}
	prev := uint32(0)
	for i, j := range order {
		p := values[i]
		if i > 0 && p >= prev {
			p = max(1, prev-1)
		}
		prev = p
		if p != j.Priority {
			prio[j.ID] = p
			nice[j.ID] = j.Nice + int(j.Priority) - int(p)
		}
	}
	return prio, nice
}

// reprioritize recomputes the multifactor priority of jobs now (after a
// nice change), as Slurm does, rather than at the next
// PriorityCalcPeriod; jobs an operator gave a priority keep it.
func (s *Service) reprioritize(ids []model.JobID) error {
	if !s.Settings().Priority.Multifactor {
		return nil
	}
	snap := s.store.Snapshot()
	p := s.newPrioritizer(snap, nil, false)
	now := s.clock.Now().Unix()
	cmd := &fsm.Priorities{Jobs: map[model.JobID]uint32{}}
	for _, id := range ids {
		j := snap.Job(id)
		if j == nil || j.State != model.JobPending || j.Priority == 0 || j.PrioritySet {
			continue
		}
		if pr := p.Factors(j, now).Priority; pr != j.Priority {
			cmd.Jobs[id] = pr
		}
	}
	if len(cmd.Jobs) == 0 {
		return nil
	}
	if _, err := s.raft.Apply(fsm.TypePriorities, cmd); err != nil {
		return errCommit(err)
	}
	return nil
}
