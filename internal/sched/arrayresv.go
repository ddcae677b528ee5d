package sched

import "github.com/drover-hpc/drover/internal/model"

// bf_max_job_array_resv: the backfill pass plans a later start for at most
// that many tasks of one array per partition; the array's other waiting
// tasks keep their reason (Resources or Priority, as placement says) and
// no planned start. Slurm holds an array's waiting tasks in one record and
// moves past it once that many of its tasks have a reservation; it has no
// bearing on tasks that can start now, which still start in order. Here
// every task is its own job, so the bound is counted per array and
// partition over the pass, and the tasks past it skip only the
// reservation search (the costly part of a waiting task under backfill).

// arrayResvKey is one array in one partition.
type arrayResvKey struct {
	array     model.JobID
	partition string
}

// arrayResvFull reports whether j is an array task whose array already
// has Config.BfMaxJobArrayResv reservations in j's partition this pass.
func (s *scheduler) arrayResvFull(j *model.Job) bool {
	if s.cfg.BfMaxJobArrayResv <= 0 || !j.IsArrayTask() {
		return false
	}
	return s.arrayResv[arrayResvKey{j.ArrayJobID, j.Partition}] >= s.cfg.BfMaxJobArrayResv
}

// arrayResvMade counts a reservation made for j.
func (s *scheduler) arrayResvMade(j *model.Job) {
	if s.cfg.BfMaxJobArrayResv <= 0 || !j.IsArrayTask() {
		return
	}
	if s.arrayResv == nil {
		s.arrayResv = map[arrayResvKey]int{}
	}
	s.arrayResv[arrayResvKey{j.ArrayJobID, j.Partition}]++
}
