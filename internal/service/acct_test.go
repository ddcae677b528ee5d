package service

import (
	"strings"
	"testing"

	"github.com/drover-hpc/drover/internal/acctmgr"
	"github.com/drover-hpc/drover/internal/model"
)

func sacctmgr(t *testing.T, svc *Service, verb, entity string, set ...string) {
	t.Helper()
	req := &acctmgr.Request{Verb: verb, Entity: entity}
	where := verb != acctmgr.VerbAdd
	for _, w := range set {
		switch {
		case w == "set":
			where = false
		case where:
			req.Where = append(req.Where, acctmgr.SplitOption(w))
		default:
			req.Set = append(req.Set, acctmgr.SplitOption(w))
		}
	}
	if text, err := svc.AcctModify(as(0), req, true); err != nil {
		t.Fatalf("%s %s %v: %v %s", verb, entity, set, err, text)
	}
}

// TestAccountingAdmission: with AccountingStorageEnforce=associations,
// limits,qos a job needs an association and a permitted QOS, gets its
// user's default account and QOS, and submit limits refuse at once.
func TestAccountingAdmission(t *testing.T) {
	svc, _, _ := setup(t)
	st := *svc.Settings()
	st.EnforceAssoc, st.EnforceQOS, st.EnforceLimits = true, true, true
	if err := svc.InstallConfig(&st); err != nil {
		t.Fatal(err)
	}
	// Only administrators change the configuration.
	if _, err := svc.AcctModify(as(1000), &acctmgr.Request{Verb: acctmgr.VerbAdd, Entity: acctmgr.EntityAccount,
		Set: []acctmgr.KeyValue{{Key: "name", Op: "=", Value: "x"}}}, true); err == nil || err.Error() != "Access/permission denied" {
		t.Errorf("a user's sacctmgr add: %v", err)
	}
	submit := func(edit func(*model.JobSpec)) (*model.Job, error) {
		s := spec()
		if edit != nil {
			edit(s)
		}
		id, err := svc.SubmitJob(as(0), s)
		if err != nil {
			return nil, err
		}
		jobs, _, _ := listJobs(as(0), svc, []model.JobID{id}, false)
		return jobs[0], nil
	}
	j, err := submit(nil)
	if err != nil || j.Spec.Account != "root" || j.Spec.QOS != "normal" {
		t.Fatalf("root's job: %v %+v", err, j)
	}
	for _, tc := range []struct {
		name string
		edit func(*model.JobSpec)
		want string
	}{
		{"unknown account", func(s *model.JobSpec) { s.Account = "nosuch" }, "Invalid account or account/partition combination specified"},
		{"unknown qos", func(s *model.JobSpec) { s.QOS = "nosuch" }, "Invalid qos specification"},
	} {
		if _, err := submit(tc.edit); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// A user without an association is refused.
	if _, err := svc.SubmitJob(as(4242), spec()); err == nil || !strings.Contains(err.Error(), "Invalid account") {
		t.Errorf("uid 4242 without association: %v", err)
	}

	sacctmgr(t, svc, acctmgr.VerbAdd, acctmgr.EntityAccount, "name=lab")
	sacctmgr(t, svc, acctmgr.VerbAdd, acctmgr.EntityQOS, "name=gpu", "MaxSubmitJobsPerUser=2")
	sacctmgr(t, svc, acctmgr.VerbAdd, acctmgr.EntityUser, "name=root", "account=lab")
	sacctmgr(t, svc, acctmgr.VerbModify, acctmgr.EntityUser, "name=root", "account=lab", "set", "qos=gpu", "defaultqos=gpu")
	j, err = submit(func(s *model.JobSpec) { s.Account = "lab" })
	if err != nil || j.Spec.Account != "lab" || j.Spec.QOS != "gpu" {
		t.Fatalf("job in lab: %v %+v", err, j)
	}
	if _, err := submit(func(s *model.JobSpec) { s.Account = "lab"; s.QOS = "normal" }); err == nil ||
		!strings.Contains(err.Error(), "Invalid qos specification") {
		t.Errorf("qos normal not in lab's list: %v", err)
	}
	if _, err := submit(func(s *model.JobSpec) { s.Account = "lab" }); err != nil {
		t.Fatalf("second job: %v", err)
	}
	if _, err := submit(func(s *model.JobSpec) { s.Account = "lab" }); err == nil ||
		!strings.Contains(err.Error(), "Job violates accounting/QOS policy") {
		t.Errorf("third job over MaxSubmitJobsPerUser=2: %v", err)
	}
}

// Before sacctmgr changed anything, the database every call reads is a
// new cluster's, and a change it previews (no commit) leaves it as it is.
func TestNewClusterAcctDBUnchangedByAPreview(t *testing.T) {
	svc, _, _ := setup(t)
	add := &acctmgr.Request{Verb: acctmgr.VerbAdd, Entity: acctmgr.EntityUser,
		Set: []acctmgr.KeyValue{{Key: "name", Op: "=", Value: "alice"}, {Key: "account", Op: "=", Value: "root"}}}
	for range 2 {
		if _, err := svc.AcctModify(as(0), add, false); err != nil {
			t.Fatalf("preview: %v", err)
		}
		db, err := svc.AcctDB(as(0))
		if err != nil {
			t.Fatal(err)
		}
		if db.Users["alice"] != nil || len(db.Users) != 1 || len(db.Assocs) != 2 {
			t.Fatalf("after a preview the database has users %v and %d associations, want root's alone", db.Users, len(db.Assocs))
		}
	}
	sacctmgr(t, svc, acctmgr.VerbAdd, acctmgr.EntityUser, "name=alice", "account=root")
	if db, _ := svc.AcctDB(as(0)); db.Users["alice"] == nil {
		t.Fatal("the committed user is missing")
	}
}
