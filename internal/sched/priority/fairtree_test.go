package priority

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

// treeDB builds an association tree from "parent/account:shares" and
// "account/user:shares" lines ("root/acct:1", "acct/ann:2").
func treeDB(lines ...string) *model.AcctDB {
	db := &model.AcctDB{}
	db.Assocs = append(db.Assocs, model.NewAssoc("c", "root", "", ""))
	for _, l := range lines {
		path, sh, _ := strings.Cut(l, ":")
		parent, name, _ := strings.Cut(path, "/")
		shares := 0
		if sh == "parent" {
			shares = model.SharesParent
		} else {
			fmt.Sscan(sh, &shares)
		}
		var a *model.Assoc
		if strings.HasPrefix(name, "u") { // users are named u*
			a = model.NewAssoc("c", parent, name, "")
		} else {
			a = model.NewAssoc("c", name, "", "")
			a.Parent = parent
		}
		a.Shares = shares
		db.Assocs = append(db.Assocs, a)
	}
	return db
}

func fairTree(db *model.AcctDB, usage map[string]float64) *Tree {
	t := NewTree(db, "c", usage)
	t.Finish()
	t.FairTree()
	return t
}

// ranks are the users' FairShare times the number of users: their ranks.
func ranks(t *Tree) string {
	var b []string
	t.Walk(func(n *Node, _ int) {
		if n.IsUser() {
			b = append(b, fmt.Sprintf("%s=%g", n.User, math.Round(n.FairShare*float64(t.Users())*1000)/1000))
		}
	})
	return strings.Join(b, " ")
}

// TestFairTreeDocExample is the situation fair_tree.shtml walks through:
// UserA under root→Acct1→Acct12 and UserB under root→Acct1→Acct16. Acct1
// is their first common ancestor; UserB ranks above UserA exactly when
// Acct16's LevelFS is above Acct12's. A second account beside Acct1
// holds a heavy user: every user of the better-served-least account
// (Acct1) ranks above every user of the other.
func TestFairTreeDocExample(t *testing.T) {
	db := treeDB("root/acct1:1", "root/acct2:1", "acct1/acct12:1", "acct1/acct16:1",
		"acct12/uA:1", "acct16/uB:1", "acct2/uC:1")
	usage := map[string]float64{UsageKey("acct12", "uA"): 100, UsageKey("acct16", "uB"): 10, UsageKey("acct2", "uC"): 1000}
	tr := fairTree(db, usage)
	acct := func(name string) *Node { return tr.accounts[name] }
	// Root level: S = 1/2 each; U = 110/1110 and 1000/1110.
	if a1, a2 := acct("acct1"), acct("acct2"); !near(a1.LevelFS, 0.5/(110.0/1110)) || !near(a2.LevelFS, 0.5/(1000.0/1110)) {
		t.Errorf("root level: acct1 %v acct2 %v", a1.LevelFS, a2.LevelFS)
	}
	// Under Acct1: S = 1/2; U = 100/110 and 10/110.
	if a12, a16 := acct("acct12"), acct("acct16"); !near(a12.LevelFS, 0.55) || !near(a16.LevelFS, 5.5) {
		t.Errorf("acct1 level: acct12 %v acct16 %v", a12.LevelFS, a16.LevelFS)
	}
	// Users alone under their accounts: S = U = 1.
	if u := tr.User("acct12", "uA"); u.NormShares != 1 || u.EffUsage != 1 || u.LevelFS != 1 {
		t.Errorf("uA %+v", u)
	}
	if got := ranks(tr); got != "uA=2 uB=3 uC=1" {
		t.Errorf("ranks %s", got)
	}
	if f := tr.User("acct16", "uB").FairShare; f != 1 {
		t.Errorf("top user's FairShare %v, want 1", f)
	}
	// Turn Acct12 and Acct16's usage around: the order of UserA and
	// UserB follows, the account order above them does not change.
	usage[UsageKey("acct12", "uA")], usage[UsageKey("acct16", "uB")] = 10, 100
	if got := ranks(fairTree(db, usage)); got != "uA=3 uB=2 uC=1" {
		t.Errorf("swapped: ranks %s", got)
	}
}

func TestFairTreeSharesAndNoUsage(t *testing.T) {
	// Two users under one account, 3:1 shares, equal usage: the one with
	// more shares is under-served. A user without usage has LevelFS +Inf
	// and ranks first; one without shares ranks last.
	db := treeDB("root/a:1", "a/u1:3", "a/u2:1", "a/u3:1", "a/u4:0")
	usage := map[string]float64{UsageKey("a", "u1"): 50, UsageKey("a", "u2"): 50, UsageKey("a", "u4"): 1}
	tr := fairTree(db, usage)
	u1, u2, u3, u4 := tr.User("a", "u1"), tr.User("a", "u2"), tr.User("a", "u3"), tr.User("a", "u4")
	if !near(u1.NormShares, 0.6) || !near(u1.EffUsage, 50.0/101) || !near(u1.LevelFS, 0.6*101/50) {
		t.Errorf("u1 %+v", u1)
	}
	if !math.IsInf(u3.LevelFS, 1) || u4.LevelFS != 0 || !near(u2.LevelFS, 0.2*101/50) {
		t.Errorf("u3 %v u4 %v u2 %v", u3.LevelFS, u4.LevelFS, u2.LevelFS)
	}
	if got := ranks(tr); got != "u1=3 u2=2 u3=4 u4=1" {
		t.Errorf("ranks %s", got)
	}
}

func TestFairTreeTies(t *testing.T) {
	t.Run("sibling users share a rank", func(t *testing.T) {
		// u1 and u2 tie; u3, the next, gets the rank after both (4 users:
		// u0 4, u1 and u2 3, u3 1).
		db := treeDB("root/a:1", "a/u0:1", "a/u1:1", "a/u2:1", "a/u3:1")
		usage := map[string]float64{UsageKey("a", "u1"): 10, UsageKey("a", "u2"): 10, UsageKey("a", "u3"): 30}
		if got := ranks(fairTree(db, usage)); got != "u0=4 u1=3 u2=3 u3=1" {
			t.Errorf("ranks %s", got)
		}
	})
	t.Run("user tied with an account shares its best user's rank", func(t *testing.T) {
		// Under root: user u (shares 1, usage 50) and account x (shares 1,
		// usage 50): LevelFS 1 both. x's best user shares u's rank.
		db := treeDB("root/x:1", "root/u:1", "x/ux1:1", "x/ux2:1")
		usage := map[string]float64{UsageKey("root", "u"): 50, UsageKey("x", "ux1"): 10, UsageKey("x", "ux2"): 40}
		tr := fairTree(db, usage)
		if got := ranks(tr); got != "u=3 ux1=3 ux2=1" {
			t.Errorf("ranks %s", got)
		}
	})
	t.Run("tied accounts merge their children", func(t *testing.T) {
		// a and b tie at the root level (LevelFS 1). Merged, b's users
		// (LevelFS 1) come between a's unused user (+Inf) and a's heavy
		// one (0.5); walked one account after the other they would not.
		db := treeDB("root/a:1", "root/b:1", "a/ua1:1", "a/ua2:1", "b/ub1:1", "b/ub2:1")
		usage := map[string]float64{UsageKey("a", "ua1"): 50, UsageKey("b", "ub1"): 25, UsageKey("b", "ub2"): 25}
		if got := ranks(fairTree(db, usage)); got != "ua1=1 ua2=4 ub1=3 ub2=3" {
			t.Errorf("ranks %s", got)
		}
	})
	t.Run("no usage at all: everyone first", func(t *testing.T) {
		db := treeDB("root/a:1", "root/b:5", "a/u1:1", "b/u2:1")
		if got := ranks(fairTree(db, nil)); got != "u1=2 u2=2" {
			t.Errorf("ranks %s", got)
		}
	})
}

func TestFairTreeParentShares(t *testing.T) {
	// Account p has Fairshare=parent: its users compete beside a's other
	// children as if they were a's own.
	db := treeDB("root/a:1", "a/p:parent", "a/u1:1", "p/u2:1")
	usage := map[string]float64{UsageKey("a", "u1"): 10, UsageKey("p", "u2"): 30}
	tr := fairTree(db, usage)
	if u2 := tr.User("p", "u2"); !near(u2.NormShares, 0.5) || !near(u2.EffUsage, 0.75) {
		t.Errorf("u2 %+v", u2)
	}
	if got := ranks(tr); got != "u1=2 u2=1" {
		t.Errorf("ranks %s", got)
	}
}

func TestTreeWithoutAssociations(t *testing.T) {
	// Usage of users no sacctmgr record names: accounts under root, users
	// with one share each; AddUser brings in users that only queue jobs.
	tr := NewTree(nil, "c", map[string]float64{UsageKey("root", "ann"): 10, UsageKey("phys", "bob"): 30})
	if !tr.AddUser("root", "cid") || tr.AddUser("root", "ann") {
		t.Fatal("AddUser")
	}
	tr.Finish()
	tr.FairTree()
	var rows []string
	tr.Walk(func(n *Node, d int) { rows = append(rows, fmt.Sprintf("%d:%s/%s:%g", d, n.Account, n.User, n.Usage)) })
	if got := strings.Join(rows, " "); got != "0:root/:40 1:root/ann:10 1:root/cid:0 1:phys/:30 2:phys/bob:30" {
		t.Errorf("walk %s", got)
	}
	if got := ranks(tr); got != "ann=2 cid=3 bob=1" {
		t.Errorf("ranks %s", got)
	}
}

func TestTreeLoopInParents(t *testing.T) {
	db := treeDB("b/a:1", "a/b:1", "a/u1:1")
	tr := fairTree(db, map[string]float64{UsageKey("a", "u1"): 1})
	if tr.Users() != 1 || tr.User("a", "u1").FairShare != 1 {
		t.Errorf("users %d", tr.Users())
	}
}
