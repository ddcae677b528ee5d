package sched_test

import (
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched/schedtest"
)

const (
	dep   = model.ReasonDependency
	never = model.ReasonDepNeverSatisfied
)

// on is the term "typ on job id" (the whole job or array).
func on(typ model.DepType, id model.JobID) model.DepTerm {
	return model.DepTerm{Type: typ, Job: id, Task: model.NoArrayTask}
}

// after returns a spec modifier setting the dependency (OR when any).
func after(any bool, terms ...model.DepTerm) func(*model.JobSpec) {
	return func(s *model.JobSpec) { s.Dependency = &model.Dependency{Terms: terms, Any: any} }
}

// The dependee helpers fix times relative to now = 1000 (see depCase).
func running(c *schedtest.Cluster, j *model.Job) {
	c.Run(j, 900, []model.NodeAlloc{{Node: "n1", CPUs: 1}})
}

func ended(c *schedtest.Cluster, j *model.Job, state model.JobState, exit int32) {
	c.Finish(j, state, exit, 950)
}

// depCase is a scenario on one 64-CPU node at now = 1000.
func depCase(name string, setup func(c *schedtest.Cluster), want map[model.JobID]string, depFailed ...model.JobID) scenario {
	if depFailed == nil {
		depFailed = []model.JobID{}
	}
	return scenario{name: name, now: 1000, want: want, depFailed: depFailed, setup: func(c *schedtest.Cluster) {
		oneNode(c, 64, 1000)
		setup(c)
	}}
}

func TestDependencies(t *testing.T) {
	runScenarios(t, []scenario{
		depCase("afterany waits for the end, completing included", func(c *schedtest.Cluster) {
			running(c, submit(c, 1, nil))
			ended(c, submit(c, 1, nil), model.JobCompleted, 0)
			ended(c, submit(c, 1, nil), model.JobFailed, 1)
			ended(c, submit(c, 1, nil), model.JobCancelled, 0)
			j := submit(c, 1, nil)
			ended(c, j, model.JobCompleted, 0)
			j.Completing = true
			for id := model.JobID(1); id <= 5; id++ {
				submit(c, 1, after(false, on(model.DepAfterAny, id)))
			}
		}, map[model.JobID]string{6: dep, 7: startN1, 8: startN1, 9: startN1, 10: dep}),

		depCase("afterok", func(c *schedtest.Cluster) {
			ended(c, submit(c, 1, nil), model.JobCompleted, 0)
			ended(c, submit(c, 1, nil), model.JobFailed, 1)
			running(c, submit(c, 1, nil))
			ended(c, submit(c, 1, nil), model.JobTimeout, 0)
			for id := model.JobID(1); id <= 4; id++ {
				submit(c, 1, after(false, on(model.DepAfterOK, id)))
			}
			submit(c, 1, after(false, on(model.DepAfterOK, 77))) // unknown job
		}, map[model.JobID]string{5: startN1, 6: never, 7: dep, 8: never, 9: never}, 6, 8, 9),

		depCase("afternotok", func(c *schedtest.Cluster) {
			ended(c, submit(c, 1, nil), model.JobFailed, 2)
			ended(c, submit(c, 1, nil), model.JobCompleted, 0)
			running(c, submit(c, 1, nil))
			ended(c, submit(c, 1, nil), model.JobTimeout, 0)
			for id := model.JobID(1); id <= 4; id++ {
				submit(c, 1, after(false, on(model.DepAfterNotOK, id)))
			}
		}, map[model.JobID]string{5: startN1, 6: never, 7: dep, 8: startN1}, 6),

		depCase("after: started or ended without start, plus delay", func(c *schedtest.Cluster) {
			submit(c, 1, nil).HoldUser = true
			running(c, submit(c, 1, nil))
			ended(c, submit(c, 1, nil), model.JobCancelled, 0) // cancelled while pending
			withDelay := func(id model.JobID, d int64) model.DepTerm {
				t := on(model.DepAfter, id)
				t.Delay = d
				return t
			}
			submit(c, 1, after(false, on(model.DepAfter, 1)))
			submit(c, 1, after(false, on(model.DepAfter, 2)))
			submit(c, 1, after(false, withDelay(2, 101))) // 900+101 > now
			submit(c, 1, after(false, withDelay(2, 100))) // 900+100 = now
			submit(c, 1, after(false, withDelay(3, 50)))  // ended at 950
		}, map[model.JobID]string{1: model.ReasonHeldUser, 4: dep, 5: startN1, 6: dep, 7: startN1, 8: startN1}),

		depCase("OR: one satisfied term is enough, all must fail", func(c *schedtest.Cluster) {
			ended(c, submit(c, 1, nil), model.JobFailed, 1)
			running(c, submit(c, 1, nil))
			ended(c, submit(c, 1, nil), model.JobCompleted, 0)
			ended(c, submit(c, 1, nil), model.JobFailed, 1)
			submit(c, 1, after(true, on(model.DepAfterOK, 1), on(model.DepAfterOK, 2)))
			submit(c, 1, after(true, on(model.DepAfterOK, 1), on(model.DepAfterOK, 3)))
			submit(c, 1, after(true, on(model.DepAfterOK, 1), on(model.DepAfterOK, 4)))
		}, map[model.JobID]string{5: dep, 6: startN1, 7: never}, 7),

		depCase("AND: one failed term fails it", func(c *schedtest.Cluster) {
			ended(c, submit(c, 1, nil), model.JobCompleted, 0)
			running(c, submit(c, 1, nil))
			ended(c, submit(c, 1, nil), model.JobFailed, 1)
			submit(c, 1, after(false, on(model.DepAfterOK, 1), on(model.DepAfterAny, 2)))
			submit(c, 1, after(false, on(model.DepAfterOK, 3), on(model.DepAfterAny, 2)))
		}, map[model.JobID]string{4: dep, 5: never}, 5),

		depCase("already failed: reason only, not listed again; holds come first", func(c *schedtest.Cluster) {
			ended(c, submit(c, 1, nil), model.JobCompleted, 0)
			submit(c, 1, after(false, on(model.DepAfterOK, 1))).DepFailed = true
			submit(c, 1, after(false, on(model.DepAfterOK, 77))).HoldUser = true
			submit(c, 1, func(s *model.JobSpec) { // dependency outranks begin time
				after(false, on(model.DepAfterAny, 2))(s)
				s.BeginTime = 5000
			})
		}, map[model.JobID]string{2: never, 3: model.ReasonHeldUser, 4: dep}),
	})
}

// array submits a pending array (tasks 0..n-1) with spec modifier mod.
func array(c *schedtest.Cluster, n int, mod func(*model.JobSpec)) []*model.Job {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i
	}
	return c.SubmitArray(spec(func(s *model.JobSpec) {
		s.Array = &model.ArraySpec{TaskIDs: ids}
		if mod != nil {
			mod(s)
		}
	}))
}

func TestArrayDependencies(t *testing.T) {
	runScenarios(t, []scenario{
		depCase("whole array, all ok", func(c *schedtest.Cluster) {
			for _, j := range array(c, 3, nil) {
				ended(c, j, model.JobCompleted, 0)
			}
			submit(c, 1, after(false, on(model.DepAfterOK, 1)))
			submit(c, 1, after(false, on(model.DepAfterAny, 1)))
			submit(c, 1, after(false, on(model.DepAfterNotOK, 1)))
		}, map[model.JobID]string{4: startN1, 5: startN1, 6: never}, 6),

		depCase("whole array, one failed while others run", func(c *schedtest.Cluster) {
			a := array(c, 3, nil)
			running(c, a[0])
			ended(c, a[1], model.JobFailed, 3)
			ended(c, a[2], model.JobCompleted, 0)
			submit(c, 1, after(false, on(model.DepAfterOK, 1)))
			submit(c, 1, after(false, on(model.DepAfterAny, 1)))
			submit(c, 1, after(false, on(model.DepAfterNotOK, 1)))
			submit(c, 1, after(false, on(model.DepAfter, 1)))
		}, map[model.JobID]string{4: never, 5: dep, 6: dep, 7: startN1}, 4),

		depCase("whole array, all ended, one failed", func(c *schedtest.Cluster) {
			a := array(c, 2, nil)
			ended(c, a[0], model.JobCompleted, 0)
			ended(c, a[1], model.JobOOM, 0)
			submit(c, 1, after(false, on(model.DepAfterNotOK, 1)))
		}, map[model.JobID]string{3: startN1}),

		depCase("after on an array waits until every task started", func(c *schedtest.Cluster) {
			a := array(c, 2, nil)
			running(c, a[0])
			a[1].HoldUser = true
			submit(c, 1, after(false, on(model.DepAfter, 1)))
		}, map[model.JobID]string{2: model.ReasonHeldUser, 3: dep}),

		depCase("one task: by index, and by its own job id", func(c *schedtest.Cluster) {
			a := array(c, 3, nil)
			ended(c, a[0], model.JobFailed, 1)
			ended(c, a[1], model.JobCompleted, 0)
			running(c, a[2])
			task := func(i int) model.DepTerm {
				t := on(model.DepAfterOK, 1)
				t.Task = i
				return t
			}
			submit(c, 1, after(false, task(1)))
			submit(c, 1, after(false, task(2)))
			submit(c, 1, after(false, task(7))) // no such task
			submit(c, 1, after(false, on(model.DepAfterOK, 2)))
		}, map[model.JobID]string{4: startN1, 5: dep, 6: never, 7: startN1}, 6),

		depCase("aftercorr pairs tasks by index", func(c *schedtest.Cluster) {
			a := array(c, 3, nil)
			ended(c, a[0], model.JobCompleted, 0)
			running(c, a[1])
			ended(c, a[2], model.JobFailed, 1)
			// B has tasks 0-3; task 3 has no partner and waits on all of A.
			array(c, 4, after(false, on(model.DepAfterCorr, 1)))
		}, map[model.JobID]string{4: startN1, 5: dep, 6: never, 7: never}, 6, 7),
	})
}

func TestSingleton(t *testing.T) {
	single := after(false, model.DepTerm{Type: model.DepSingleton, Task: model.NoArrayTask})
	named := func(name string, mod func(*model.JobSpec)) func(*model.JobSpec) {
		return func(s *model.JobSpec) {
			s.Name = name
			if mod != nil {
				mod(s)
			}
		}
	}
	runScenarios(t, []scenario{
		depCase("a running job of the same name and user blocks", func(c *schedtest.Cluster) {
			running(c, submit(c, 1, named("s", nil)))
			submit(c, 1, named("s", single))
			submit(c, 1, named("s", single)).UserID = 2000
			submit(c, 1, named("t", single))
		}, map[model.JobID]string{2: dep, 3: startN1, 4: startN1}),

		depCase("finished jobs do not block", func(c *schedtest.Cluster) {
			ended(c, submit(c, 1, named("s", nil)), model.JobCompleted, 0)
			submit(c, 1, named("s", single))
		}, map[model.JobID]string{2: startN1}),

		depCase("an earlier pending job blocks, a later one does not", func(c *schedtest.Cluster) {
			submit(c, 1, named("s", nil)).HoldUser = true
			submit(c, 1, named("s", single))
			submit(c, 1, named("u", single))
			submit(c, 1, named("u", single))
		}, map[model.JobID]string{1: model.ReasonHeldUser, 2: dep, 3: startN1, 4: dep}),

		depCase("a job started earlier in the same cycle blocks", func(c *schedtest.Cluster) {
			submit(c, 1, named("s", single)).Priority = 1
			submit(c, 1, named("s", nil)).Priority = 9
		}, map[model.JobID]string{1: dep, 2: startN1}),

		depCase("a singleton array runs one task at a time", func(c *schedtest.Cluster) {
			array(c, 3, named("arr", single))
		}, map[model.JobID]string{1: startN1, 2: dep, 3: dep}),
	})
}
