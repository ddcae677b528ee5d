package service

import (
	"errors"
	"github.com/drover-hpc/drover/internal/api"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched/priority"
)

func multifactor(t *testing.T, svc *Service, mod func(*PriorityConfig)) {
	t.Helper()
	st := *svc.Settings()
	st.Priority = PriorityConfig{Multifactor: true, Weights: priority.Weights{JobSize: 1000, FairShare: 1000}}
	if mod != nil {
		mod(&st.Priority)
	}
	if err := svc.InstallConfig(&st); err != nil {
		t.Fatal(err)
	}
}

func submitN(t *testing.T, svc *Service, uid uint32, n int) []model.JobID {
	t.Helper()
	var ids []model.JobID
	for range n {
		id, err := svc.SubmitJob(as(uid), spec())
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

func prios(svc *Service, ids ...model.JobID) []uint32 {
	var out []uint32
	for _, id := range ids {
		out = append(out, svc.store.Snapshot().Job(id).Priority)
	}
	return out
}

// scontrol top: the named job takes the best priority of its user's
// group, the others keep their order below it (ties broken downwards),
// nice records the exchange; another user's job does not move.
func TestTopJobs(t *testing.T) {
	svc, _, _ := setup(t)
	multifactor(t, svc, nil)
	mine := submitN(t, svc, 1000, 3)
	other := submitN(t, svc, 1001, 1)[0]
	p0 := prios(svc, mine...)
	if p0[0] != p0[1] || p0[1] != p0[2] {
		t.Fatalf("equal jobs, priorities %v", p0)
	}
	otherPrio := prios(svc, other)[0]
	sel := api.JobSelection{Targets: []api.JobTarget{{ID: mine[2]}}, UID: -1}
	// A user may not, without SchedulerParameters=enable_user_top.
	if _, err := svc.Control(as(1000), sel, "top"); !errors.Is(err, errDenied) {
		t.Fatalf("user top: %v", err)
	}
	res, err := svc.Control(as(0), sel, "top")
	if err != nil || len(res) != 1 || res[0].Error != "" {
		t.Fatalf("top: %v %+v", err, res)
	}
	p := prios(svc, mine...)
	if p[2] != p0[2] || p[0] != p0[0]-1 || p[1] != p0[0]-2 {
		t.Errorf("after top %v (before %v)", p, p0)
	}
	snap := svc.store.Snapshot()
	if n := snap.Job(mine[1]).Nice; n != 2 {
		t.Errorf("nice of the job moved down two: %d", n)
	}
	if prios(svc, other)[0] != otherPrio {
		t.Error("another user's job moved")
	}
	// Two named jobs, in order; with enable_user_top the owner may.
	multifactor(t, svc, func(c *PriorityConfig) { c.EnableUserTop = true })
	sel.Targets = []api.JobTarget{{ID: mine[1]}, {ID: mine[0]}}
	if _, err := svc.Control(as(1000), sel, "top"); err != nil {
		t.Fatal(err)
	}
	if p := prios(svc, mine...); !(p[1] > p[0] && p[0] > p[2]) {
		t.Errorf("top 2,1: %v", p)
	}
	// Another user's job is refused.
	sel.Targets = []api.JobTarget{{ID: other}}
	if res, _ := svc.Control(as(1000), sel, "top"); len(res) != 1 || res[0].Error != "Access/permission denied" {
		t.Errorf("other's job: %+v", res)
	}
}

// scontrol update job nice= takes effect at once; priority= pins the
// job, which the recalculation then leaves alone.
func TestNiceAndPinnedPriority(t *testing.T) {
	svc, _, _ := setup(t)
	multifactor(t, svc, nil)
	ids := submitN(t, svc, 1000, 2)
	before := prios(svc, ids...)
	sel := api.JobSelection{Targets: []api.JobTarget{{ID: ids[0]}}, UID: -1}
	if res, err := svc.UpdateJob(as(1000), sel, map[string]string{"Nice": "100"}); err != nil || res[0].Error != "" {
		t.Fatalf("nice: %v %+v", err, res)
	}
	if p := prios(svc, ids...); p[0] != before[0]-100 || p[1] != before[1] {
		t.Errorf("after nice=100: %v (before %v)", p, before)
	}
	sel.Targets = []api.JobTarget{{ID: ids[1]}}
	if _, err := svc.UpdateJob(as(0), sel, map[string]string{"Priority": "5"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.UpdateJob(as(0), sel, map[string]string{"Nice": "-50"}); err != nil {
		t.Fatal(err)
	}
	if p := prios(svc, ids[1])[0]; p != 5 {
		t.Errorf("pinned priority moved: %d", p)
	}
	// sprio shows a pinned job's factors and nice as 0.
	r, err := svc.PriorityFactors(as(0))
	if err != nil {
		t.Fatal(err)
	}
	for _, jp := range r.Jobs {
		f := jp.Factors
		switch jp.Job.ID {
		case ids[1]:
			if f.Priority != 5 || f.JobSize != 0 || f.FairShare != 0 || f.Nice != 0 {
				t.Errorf("pinned job's factors %+v", f)
			}
		case ids[0]:
			if f.JobSize == 0 || f.Nice != 100 {
				t.Errorf("computed job's factors %+v", f)
			}
		}
	}
}

// A released job is ranked at once, as a fresh submission would be, not left
// at priority 1 until the next PriorityCalcPeriod; an operator's pinned
// priority does not survive a hold and release.
func TestReleaseRanksJob(t *testing.T) {
	svc, _, _ := setup(t)
	multifactor(t, svc, nil)
	free := submitN(t, svc, 1000, 1)[0]
	want := prios(svc, free)[0]
	if want <= 1 {
		t.Fatalf("multifactor priority of a fresh job: %d", want)
	}
	s := spec()
	s.Hold = true
	held, err := svc.SubmitJob(as(1000), s)
	if err != nil {
		t.Fatal(err)
	}
	if p := prios(svc, held)[0]; p != 0 {
		t.Fatalf("held job priority %d, want 0", p)
	}
	sel := api.JobSelection{Targets: []api.JobTarget{{ID: held}}, UID: -1}
	if res, err := svc.Control(as(1000), sel, "release"); err != nil || res[0].Error != "" {
		t.Fatalf("release: %v %+v", err, res)
	}
	if p := prios(svc, held)[0]; p != want {
		t.Errorf("released job priority %d, want %d (as a fresh submission)", p, want)
	}
	// Pinned, held by an operator, released: ranked again, no longer pinned.
	if res, err := svc.UpdateJob(as(0), sel, map[string]string{"priority": "777"}); err != nil || res[0].Error != "" {
		t.Fatalf("update priority: %v %+v", err, res)
	}
	if j := svc.store.Snapshot().Job(held); j.Priority != 777 || !j.PrioritySet {
		t.Fatalf("pinned: priority %d set %v", j.Priority, j.PrioritySet)
	}
	for _, action := range []string{"hold", "release"} {
		if res, err := svc.Control(as(0), sel, action); err != nil || res[0].Error != "" {
			t.Fatalf("%s: %v %+v", action, err, res)
		}
	}
	j := svc.store.Snapshot().Job(held)
	if j.Priority != want || j.PrioritySet {
		t.Errorf("after hold and release of a pinned job: priority %d pinned %v, want %d unpinned", j.Priority, j.PrioritySet, want)
	}
}
