package sched_test

import (
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
	"github.com/drover-hpc/drover/internal/sched/schedtest"
)

// acctDB: account lab under root, users "user" and "other" in it, QOS
// normal (limited by mod) and the association limits set by amod.
func acctDB(mod func(q *model.QOS), amod func(acct, user *model.Assoc)) *model.AcctDB {
	q := model.NewQOS("normal")
	if mod != nil {
		mod(q)
	}
	root := model.NewAssoc("c", "root", "", "")
	root.ID = 1
	lab := model.NewAssoc("c", "lab", "", "")
	lab.ID, lab.Parent = 2, "root"
	u := model.NewAssoc("c", "lab", "user", "")
	u.ID = 3
	o := model.NewAssoc("c", "lab", "other", "")
	o.ID = 4
	if amod != nil {
		amod(lab, u)
	}
	return &model.AcctDB{QOS: map[string]*model.QOS{"normal": q}, Assocs: []*model.Assoc{root, lab, u, o}}
}

func limitsInput(c *schedtest.Cluster, db *model.AcctDB) *sched.Input {
	in := c.Input()
	in.Limits = &sched.Limits{DB: db, Cluster: "c"}
	for _, j := range c.Jobs {
		if j.State == model.JobRunning {
			in.Limits.Running = append(in.Limits.Running, j)
		}
	}
	return in
}

func TestLimits(t *testing.T) {
	gpuJob := func(user string) func(s *model.JobSpec) {
		return func(s *model.JobSpec) {
			s.Account = "lab"
			s.GPUs = &model.GPUReq{PerNode: 1}
		}
	}
	t.Run("QOS MaxTRESPerUser gres/gpu counts jobs started in the same cycle", func(t *testing.T) {
		c := schedtest.New()
		n := c.AddNode("n1", 16, 16000)
		schedtest.AddGPUs(n, "", 8)
		c.AddPartition("p")
		submit(c, 5, gpuJob("user"))
		other := c.Submit(spec(gpuJob("other")))
		other.UserName, other.UserID = "other", 1001
		db := acctDB(func(q *model.QOS) { q.MaxTRESPerUser = model.TRES{"gres/gpu": 4} }, nil)
		in := limitsInput(c, db)
		p := sched.Schedule(in, 0, sched.Config{})
		got := outcomes(p)
		if len(p.Starts) != 5 || got[5] != "QOSMaxGRESPerUser" {
			t.Fatalf("want jobs 1-4 and the other user's started, job 5 QOSMaxGRESPerUser:%s", show(got))
		}
		// With four running, the fifth still waits; when one ends it starts.
		for _, s := range p.Starts[:4] {
			c.Run(c.Jobs[s.Job], 0, s.Alloc)
		}
		if got := outcomes(sched.Schedule(limitsInput(c, db), 1, sched.Config{})); got[5] != "QOSMaxGRESPerUser" {
			t.Fatalf("job 5 with four running:%s", show(got))
		}
		c.Jobs[1].State = model.JobCompleted
		c.Node("n1").AllocGPUs = c.Node("n1").AllocGPUs.AndNot(c.Jobs[1].Alloc[0].GPUs)
		c.Node("n1").AllocCPUs -= c.Jobs[1].Alloc[0].CPUs
		c.Node("n1").AllocCores = c.Node("n1").AllocCores.AndNot(c.Jobs[1].Alloc[0].CPUIDs)
		c.Node("n1").AllocMem -= c.Jobs[1].Alloc[0].Mem
		if got := outcomes(sched.Schedule(limitsInput(c, db), 2, sched.Config{})); got[5][:5] != "start" {
			t.Fatalf("job 5 once one ended:%s", show(got))
		}
	})
	for _, tc := range []struct {
		name   string
		qos    func(q *model.QOS)
		assoc  func(acct, user *model.Assoc)
		jobs   int
		starts int
		reason string
	}{
		{"QOS MaxJobsPerUser", func(q *model.QOS) { q.MaxJobsPerUser = 2 }, nil, 3, 2, "QOSMaxJobsPerUserLimit"},
		{"QOS GrpJobs", func(q *model.QOS) { q.GrpJobs = 1 }, nil, 2, 1, "QOSGrpJobsLimit"},
		{"QOS MaxWall", func(q *model.QOS) { q.MaxWall = 60 }, nil, 1, 0, "QOSMaxWallDurationPerJobLimit"},
		{"QOS MaxTRESPerJob cpu", func(q *model.QOS) { q.MaxTRESPerJob = model.TRES{"cpu": 0} }, nil, 1, 0, "QOSMaxCpuPerJobLimit"},
		{"QOS GrpTRES cpu", func(q *model.QOS) { q.GrpTRES = model.TRES{"cpu": 2} }, nil, 3, 2, "QOSGrpCpuLimit"},
		{"user MaxJobs", nil, func(_, u *model.Assoc) { u.MaxJobs = 1 }, 2, 1, "AssocMaxJobsLimit"},
		{"account MaxJobs inherited", nil, func(a, _ *model.Assoc) { a.MaxJobs = 2 }, 3, 2, "AssocMaxJobsLimit"},
		{"account GrpTRES cpu", nil, func(a, _ *model.Assoc) { a.GrpTRES = model.TRES{"cpu": 1} }, 2, 1, "AssocGrpCpuLimit"},
		{"account GrpJobs", nil, func(a, _ *model.Assoc) { a.GrpJobs = 3 }, 4, 3, "AssocGrpJobsLimit"},
		{"user MaxWall", nil, func(_, u *model.Assoc) { u.MaxWall = 30 }, 1, 0, "AssocMaxWallDurationPerJobLimit"},
		{"user MaxTRES mem", nil, func(_, u *model.Assoc) { u.MaxTRES = model.TRES{"mem": 10} }, 1, 0, "AssocMaxMemPerJob"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := schedtest.New()
			oneNode(c, 16, 16000)
			submit(c, tc.jobs, func(s *model.JobSpec) { s.Account, s.TimeLimit, s.MemPerNode = "lab", 3600, 100 })
			for _, j := range c.Jobs {
				j.TimeLimit = 3600
			}
			p := sched.Schedule(limitsInput(c, acctDB(tc.qos, tc.assoc)), 0, sched.Config{})
			got := outcomes(p)
			if len(p.Starts) != tc.starts || got[model.JobID(tc.starts+1)] != tc.reason {
				t.Fatalf("want %d starts and job %d waiting for %s:%s", tc.starts, tc.starts+1, tc.reason, show(got))
			}
		})
	}
	t.Run("the partition's QOS limits apply too", func(t *testing.T) {
		c := schedtest.New()
		oneNode(c, 4, 4000)
		c.Partitions["p"].QOS = "part"
		submit(c, 2, func(s *model.JobSpec) { s.Account = "lab" })
		db := acctDB(nil, nil)
		pq := model.NewQOS("part")
		pq.MaxJobsPerUser = 1
		db.QOS["part"] = pq
		got := outcomes(sched.Schedule(limitsInput(c, db), 0, sched.Config{}))
		if got[2] != "QOSMaxJobsPerUserLimit" {
			t.Fatalf("partition QOS ignored:%s", show(got))
		}
	})
	t.Run("no association: no association limits", func(t *testing.T) {
		c := schedtest.New()
		oneNode(c, 4, 4000)
		submit(c, 2, func(s *model.JobSpec) { s.Account = "nosuch" })
		p := sched.Schedule(limitsInput(c, acctDB(nil, func(a, _ *model.Assoc) { a.MaxJobs = 0 })), 0, sched.Config{})
		if len(p.Starts) != 2 {
			t.Fatalf("starts %+v", p.Starts)
		}
	})
}
