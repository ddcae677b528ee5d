package acctmgr

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

// apply runs one sacctmgr change given as its words (after the entity)
// and returns the new configuration, failing the test on an error.
func apply(t *testing.T, db *model.AcctDB, verb, entity string, words ...string) (*model.AcctDB, string) {
	t.Helper()
	next, text, err := Apply(db, request(verb, entity, words), "spice")
	if err != nil {
		t.Fatalf("%s %s %v: %v", verb, entity, words, err)
	}
	if next == nil {
		t.Fatalf("%s %s %v changed nothing:\n%s", verb, entity, words, text)
	}
	return next, text
}

func request(verb, entity string, words []string) *Request {
	req := &Request{Verb: verb, Entity: entity}
	set := verb == VerbAdd
	for _, w := range words {
		switch {
		case IsKeyword(w, "where"):
			set = verb == VerbAdd
		case IsKeyword(w, "set"):
			set = true
		case set:
			req.Set = append(req.Set, SplitOption(w))
		default:
			req.Where = append(req.Where, SplitOption(w))
		}
	}
	return req
}

func list(t *testing.T, db *model.AcctDB, entity string, opts ListOptions, args ...string) string {
	t.Helper()
	l, err := ParseList(entity, args, opts)
	if err != nil {
		t.Fatalf("list %s %v: %v", entity, args, err)
	}
	return l.Render(db, &Controller{"spice", "127.0.0.1", 6817, 9728})
}

// adminGuide is the set-up of the admin guide: an account, a
// user in it, a QOS limiting GPUs per user.
func adminGuide(t *testing.T) *model.AcctDB {
	db := Init("spice")
	db, _ = apply(t, db, VerbAdd, EntityAccount, "test", "Cluster=spice", "Description=test", "Organization=LRI")
	db, _ = apply(t, db, VerbAdd, EntityUser, "diviyan", "Account=test")
	db, _ = apply(t, db, VerbAdd, EntityQOS, "default", "MaxTresPerUser=gres/gpu=4")
	db, _ = apply(t, db, VerbModify, EntityUser, "where", "name=diviyan", "set", "qos=default", "defaultqos=default")
	return db
}

func TestAdminGuide(t *testing.T) {
	db := adminGuide(t)
	if a := db.Accounts["test"]; a == nil || a.Description != "test" {
		t.Fatalf("account test: %+v", a)
	}
	u := db.Users["diviyan"]
	if u == nil || u.DefaultAccount != "test" || u.AdminLevel != model.AdminNone {
		t.Fatalf("user diviyan: %+v", u)
	}
	q := db.QOS["default"]
	if q == nil || q.MaxTRESPerUser["gres/gpu"] != 4 || q.ID != 2 {
		t.Fatalf("qos default: %+v", q)
	}
	ua := db.UserAssoc("spice", "test", "diviyan", "")
	if ua == nil || strings.Join(ua.QOS, ",") != "default" || ua.DefaultQOS != "default" {
		t.Fatalf("diviyan's association: %+v", ua)
	}
	if aa := db.AccountAssoc("spice", "test"); aa == nil || aa.Parent != "root" {
		t.Fatalf("test's association: %+v", aa)
	}
	got := list(t, db, EntityUser, ListOptions{Mode: Parsable2, NoHeader: true, WithAssoc: true},
		"withassoc", "format=account,qos", "where", "user=diviyan", "cluster=spice")
	if got != "test|default\n" {
		t.Errorf("list user withassoc: %q", got)
	}
	got = list(t, db, EntityQOS, ListOptions{Mode: Parsable2}, "format=name,maxtrespu")
	if got != "Name|MaxTRESPU\nnormal|\ndefault|gres/gpu=4\n" {
		t.Errorf("list qos: %q", got)
	}
}

func TestApplyLeavesInputAlone(t *testing.T) {
	db := adminGuide(t)
	before, _ := json.Marshal(db)
	next, _ := apply(t, db, VerbModify, EntityAccount, "test", "set", "GrpTRES=cpu=8", "MaxJobs=4", "Fairshare=10")
	next, _ = apply(t, next, VerbModify, EntityQOS, "default", "set", "MaxJobsPerUser=2", "MaxWall=1:00:00")
	after, _ := json.Marshal(db)
	if string(before) != string(after) {
		t.Fatal("Apply changed the configuration it was given (it is shared with readers)")
	}
	aa := next.AccountAssoc("spice", "test")
	if aa.GrpTRES["cpu"] != 8 || aa.MaxJobs != 4 || aa.Shares != 10 {
		t.Errorf("account limits: %+v", aa)
	}
	if q := next.QOS["default"]; q.MaxJobsPerUser != 2 || q.MaxWall != 3600 {
		t.Errorf("qos limits: %+v", q)
	}
	// A user's association lists the account's MaxJobs as its own.
	got := list(t, next, EntityAssoc, ListOptions{Mode: Parsable2, NoHeader: true},
		"format=account,user,maxjobs", "where", "user=diviyan")
	if got != "test|diviyan|4\n" {
		t.Errorf("inherited MaxJobs: %q", got)
	}
}

func TestErrors(t *testing.T) {
	db := adminGuide(t)
	for _, tc := range []struct {
		verb, entity string
		words        []string
		want         string
	}{
		{VerbAdd, EntityUser, []string{"bob", "Account=nosuch"}, "nosuch"},
		{VerbAdd, EntityQOS, []string{"q2", "MaxWall=forever"}, "MaxWall"},
		{VerbAdd, EntityQOS, []string{"q3", "NoSuchKey=1"}, "NoSuchKey"},
	} {
		next, text, err := Apply(db, request(tc.verb, tc.entity, tc.words), "spice")
		if next != nil {
			t.Errorf("%s %s %v: applied:\n%s", tc.verb, tc.entity, tc.words, text)
			continue
		}
		msg := text
		if err != nil {
			msg += err.Error()
		}
		if !strings.Contains(strings.ToLower(msg), strings.ToLower(tc.want)) {
			t.Errorf("%s %s %v: %q does not mention %q", tc.verb, tc.entity, tc.words, msg, tc.want)
		}
	}
	// Changes that match nothing say so and change nothing.
	next, text, err := Apply(db, request(VerbModify, EntityUser, []string{"where", "name=nobody", "set", "maxjobs=1"}), "spice")
	if next != nil || err != nil || !Unchanged(text) {
		t.Errorf("modify nobody: %v %q %v", next != nil, text, err)
	}
}

func TestDelete(t *testing.T) {
	db := adminGuide(t)
	db, text := apply(t, db, VerbDelete, EntityUser, "diviyan")
	if !strings.Contains(text, "diviyan") || db.Users["diviyan"] != nil || db.UserAssoc("spice", "test", "diviyan", "") != nil {
		t.Fatalf("delete user: %q", text)
	}
	db, _ = apply(t, db, VerbDelete, EntityAccount, "test")
	if db.Accounts["test"] != nil || db.AccountAssoc("spice", "test") != nil {
		t.Fatal("account test still there")
	}
	db, _ = apply(t, db, VerbDelete, EntityQOS, "default")
	if db.QOS["default"] != nil {
		t.Fatal("qos default still there")
	}
	got := list(t, db, EntityAssoc, ListOptions{Mode: Parsable2, NoHeader: true}, "format=account,user")
	if got != "root|\nroot|root\n" {
		t.Errorf("associations left: %q", got)
	}
}

func TestTree(t *testing.T) {
	db := adminGuide(t)
	db, _ = apply(t, db, VerbAdd, EntityAccount, "sub", "parent=test")
	got := list(t, db, EntityAssoc, ListOptions{}, "tree", "format=account,user")
	want := "Account                    User \n" +
		"-------------------- ---------- \n" +
		"root                            \n" +
		" root                      root \n" +
		" test                           \n" +
		"  test                  diviyan \n" +
		"  sub                           \n"
	// Users come before sub-accounts under an account, as Slurm lists them.
	if got != want {
		t.Errorf("tree:\n%s\nwant:\n%s", got, want)
	}
}
