package agent

import (
	"sync"
	"testing"

	"github.com/drover-hpc/drover/internal/cgroups"
	"github.com/drover-hpc/drover/internal/model"
)

// recordingGroups is a cgroup manager that only records which groups
// were removed.
type recordingGroups struct {
	mu      sync.Mutex
	deleted []string
}

type recordedGroup struct {
	cgroups.Group
	m   *recordingGroups
	rel string
}

func (g *recordedGroup) Rel() string { return g.rel }
func (g *recordedGroup) Delete() error {
	g.m.mu.Lock()
	defer g.m.mu.Unlock()
	g.m.deleted = append(g.m.deleted, g.rel)
	return nil
}

func (m *recordingGroups) Layout() cgroups.Layout { return cgroups.LayoutV1 }
func (m *recordingGroups) Create(rel string, _ cgroups.Limits) (cgroups.Group, error) {
	return &recordedGroup{m: m, rel: rel}, nil
}
func (m *recordingGroups) Open(rel string) (cgroups.Group, error) {
	return &recordedGroup{m: m, rel: rel}, nil
}
func (m *recordingGroups) List() ([]string, error) { return nil, nil }

// TestStaleRunLeavesTheNewRunsGroup: a requeued job's stale run that ends
// only after replaceStale gave up on it and started the new run (same job
// id, same cgroup names) must not remove (or keep for later jobs) the
// groups the new run now uses; its own end, with no newer run, does.
func TestStaleRunLeavesTheNewRunsGroup(t *testing.T) {
	a, _ := testAgent(t)
	rec := &recordingGroups{}
	a.iso.cg = rec
	mj := &model.Job{ID: 7, ArrayTaskID: model.NoArrayTask, Alloc: []model.NodeAlloc{{Node: "n1", CPUs: 1}}}
	stale, fresh := newJob(7, mj, true), newJob(7, mj, true)
	stale.cg = &recordedGroup{m: rec, rel: jobGroupName(7)}

	a.jobs[7] = fresh
	if a.removeJobGroup(stale) {
		t.Fatal("the stale run removed the job's cgroup while the new run holds it")
	}
	if len(rec.deleted) != 0 {
		t.Fatalf("groups removed under the new run: %v", rec.deleted)
	}

	a.jobs[7] = stale
	stale.cg = &recordedGroup{m: rec, rel: jobGroupName(7)}
	if !a.removeJobGroup(stale) || len(rec.deleted) != 1 {
		t.Fatalf("a run that is the job's own did not remove its group: %v", rec.deleted)
	}
}
