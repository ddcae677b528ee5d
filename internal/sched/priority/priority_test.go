package priority

import (
	"math"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

func job(nodes, tasks int, part string) *model.Job {
	return &model.Job{Partition: part, EligibleTime: 1000, Spec: &model.JobSpec{MinNodes: nodes, NTasks: tasks, CPUsPerTask: 1}}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestFactors(t *testing.T) {
	c := &Cluster{Nodes: 1, CPUs: 64, MaxPartitionJF: 2, PartitionFactors: map[string]int{"a": 1, "b": 2},
		MaxQOSPriority: 10, QOSPriority: map[string]int{"normal": 5, "high": 10}}
	w := Weights{Age: 1000, FairShare: 10000, JobSize: 1000, Partition: 1000, QOS: 100}
	// The peer's figure: 2 CPUs of a 64-CPU one-node cluster, fair-share 1.
	f := Compute(job(1, 2, "b"), 1000, w, c, 1)
	if !near(f.JobSize, 0.515625) || f.Age != 0 || f.Partition != 1 || !near(f.QOS, 0.5) {
		t.Errorf("factors %+v", f)
	}
	if f.Priority != 10000+515+1000+50 {
		t.Errorf("priority %d", f.Priority)
	}
	// Age grows to PriorityMaxAge and stops.
	if f := Compute(job(1, 1, "a"), 1000+DefaultMaxAge/2, w, c, 0); !near(f.Age, 0.5) {
		t.Errorf("age at half max: %v", f.Age)
	}
	if f := Compute(job(1, 1, "a"), 1000+10*DefaultMaxAge, w, c, 0); f.Age != 1 {
		t.Errorf("age capped: %v", f.Age)
	}
	// Favor small: the small job gets the larger factor.
	ws := w
	ws.FavorSmall = true
	small, big := Compute(job(1, 1, "a"), 1000, ws, c, 0), Compute(job(1, 64, "a"), 1000, ws, c, 0)
	if small.JobSize <= big.JobSize {
		t.Errorf("favor small: small %v big %v", small.JobSize, big.JobSize)
	}
	// Nice lowers, never to 0 (0 is held).
	j := job(1, 1, "a")
	j.Nice = 1 << 20
	if f := Compute(j, 1000, w, c, 0); f.Priority != 1 {
		t.Errorf("nice past everything: %d", f.Priority)
	}
	j.Nice = -100
	if a, b := Compute(j, 1000, w, c, 0), Compute(job(1, 1, "a"), 1000, w, c, 0); a.Priority != b.Priority+100 {
		t.Errorf("nice -100: %d vs %d", a.Priority, b.Priority)
	}
}

func TestClassicFairShare(t *testing.T) {
	db := &model.AcctDB{}
	add := func(a *model.Assoc) { db.Assocs = append(db.Assocs, a) }
	root := model.NewAssoc("c", "root", "", "")
	add(root)
	for _, acct := range []struct {
		name   string
		shares int
	}{{"phys", 3}, {"bio", 1}} {
		a := model.NewAssoc("c", acct.name, "", "")
		a.Parent, a.Shares = "root", acct.shares
		add(a)
	}
	for _, u := range []struct{ acct, user string }{{"phys", "ann"}, {"phys", "bob"}, {"bio", "cid"}} {
		add(model.NewAssoc("c", u.acct, u.user, ""))
	}
	usage := map[string]float64{UsageKey("phys", "ann"): 300, UsageKey("bio", "cid"): 100}
	s := NewShares(db, "c", usage)
	if !near(s.NormShares("phys", "ann", 0), 0.375) || !near(s.NormShares("bio", "cid", 0), 0.25) {
		t.Fatalf("norm shares ann %v cid %v", s.NormShares("phys", "ann", 0), s.NormShares("bio", "cid", 0))
	}
	// bob used nothing: 1. ann used 75% with 37.5% of the shares: 2^-2.
	if f := s.Factor("phys", "bob", 0); f != 1 {
		t.Errorf("bob %v", f)
	}
	if f := s.Factor("phys", "ann", 0); !near(f, 0.25) {
		t.Errorf("ann %v", f)
	}
	if f := s.Factor("bio", "cid", 0); !near(f, 0.5) {
		t.Errorf("cid %v", f)
	}
	if !near(Decay(3600, 3600), 0.5) || Decay(10, 0) != 1 {
		t.Error("decay")
	}
}
