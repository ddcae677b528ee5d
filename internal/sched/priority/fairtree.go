package priority

import (
	"math"
	"slices"
	"strings"

	"github.com/drover-hpc/drover/internal/model"
)

// Node is one association of the fair-share tree: an account (User "")
// or a user under an account.
type Node struct {
	Account, User string
	// Shares is the raw Fairshare= value (model.SharesParent for
	// "parent"); Usage the decayed usage of the association and
	// everything under it.
	Shares   int
	Usage    float64
	Parent   *Node
	Children []*Node // after Finish: users first, then accounts, each in name order

	// Fair Tree's figures, relative to the association's siblings (the
	// level): NormShares is S (its shares over the level's), EffUsage U
	// (its usage over the level's), LevelFS S/U (+Inf without usage).
	// FairShare is a user's final factor, rank / users.
	NormShares, EffUsage, LevelFS, FairShare float64
}

// IsUser reports whether n is a user association.
func (n *Node) IsUser() bool { return n.User != "" }

// Tree is a cluster's association tree with the usage recorded so far,
// the input of both fair-share algorithms' sshare rows and of Fair Tree.
// Build it with NewTree, add users that only have jobs with AddUser, then
// call Finish once.
type Tree struct {
	Root     *Node
	Total    float64 // all usage
	accounts map[string]*Node
	users    map[[2]string]*Node // {account, user} → user node (no key string to build per lookup)
	nusers   int                 // users reachable from root
}

// NewTree builds the tree of cluster's associations in db (nil: none),
// adding the accounts and users that have usage but no association
// under root (a cluster without sacctmgr records still shares fairly
// among the users that ran).
func NewTree(db *model.AcctDB, cluster string, usage map[string]float64) *Tree {
	t := &Tree{Root: &Node{Account: "root", Shares: 1}, accounts: map[string]*Node{}, users: map[[2]string]*Node{}}
	t.accounts["root"] = t.Root
	type link struct {
		n      *Node
		parent string
	}
	var links []link
	if db != nil {
		for _, a := range db.Assocs {
			if a.Cluster != cluster || a.Partition != "" || a.User != "" || a.Account == "root" {
				continue
			}
			if _, dup := t.accounts[a.Account]; dup {
				continue
			}
			n := &Node{Account: a.Account, Shares: a.Shares}
			t.accounts[a.Account] = n
			links = append(links, link{n, a.Parent})
		}
	}
	for _, l := range links {
		p := t.accounts[l.parent]
		if p == nil || p == l.n {
			p = t.Root
		}
		l.n.Parent = p
	}
	// A loop in the parents (never made by sacctmgr, but state is input)
	// would hang every walk: hang such accounts under root instead.
	for _, l := range links {
		seen := map[*Node]bool{}
		for p := l.n; p != nil && p != t.Root; p = p.Parent {
			if seen[p] {
				l.n.Parent = t.Root
				break
			}
			seen[p] = true
		}
	}
	for _, l := range links {
		l.n.Parent.Children = append(l.n.Parent.Children, l.n)
	}
	if db != nil {
		for _, a := range db.Assocs {
			if a.Cluster == cluster && a.Partition == "" && a.User != "" {
				t.addUser(a.Account, a.User, a.Shares)
			}
		}
	}
	for key, u := range usage {
		account, user, _ := strings.Cut(key, "\x00")
		if user == "" {
			continue
		}
		t.addUser(account, user, 1).Usage += u
		t.Total += u
	}
	return t
}

// AddUser adds user under account (with one share) unless it is there;
// it reports whether it added one. Call it before Finish.
func (t *Tree) AddUser(account, user string) bool {
	if _, ok := t.users[[2]string{account, user}]; ok {
		return false
	}
	t.addUser(account, user, 1)
	return true
}

func (t *Tree) addUser(account, user string, shares int) *Node {
	key := [2]string{account, user}
	if n := t.users[key]; n != nil {
		return n
	}
	acct := t.accounts[account]
	if acct == nil {
		acct = &Node{Account: account, Shares: 1, Parent: t.Root}
		t.accounts[account] = acct
		t.Root.Children = append(t.Root.Children, acct)
	}
	n := &Node{Account: account, User: user, Shares: shares, Parent: acct}
	acct.Children = append(acct.Children, n)
	t.users[key] = n
	return n
}

// Finish sums usage up the tree and puts every level in display order.
func (t *Tree) Finish() {
	t.nusers = 0
	var walk func(n *Node) float64
	walk = func(n *Node) float64 {
		if n.IsUser() {
			t.nusers++
			return n.Usage
		}
		slices.SortFunc(n.Children, func(a, b *Node) int {
			if a.IsUser() != b.IsUser() {
				if a.IsUser() {
					return -1
				}
				return 1
			}
			if c := strings.Compare(a.User, b.User); c != 0 {
				return c
			}
			return strings.Compare(a.Account, b.Account)
		})
		sum := 0.0
		for _, c := range n.Children {
			sum += walk(c)
		}
		n.Usage = sum
		return sum
	}
	walk(t.Root)
}

// User is the node of user under account, or nil.
func (t *Tree) User(account, user string) *Node { return t.users[[2]string{account, user}] }

// Users is how many user associations the tree ranks.
func (t *Tree) Users() int { return t.nusers }

// Walk visits the tree depth first in display order: an account, its
// users, then its sub-accounts; depth 0 is root.
func (t *Tree) Walk(visit func(n *Node, depth int)) {
	var walk func(n *Node, depth int)
	walk = func(n *Node, depth int) {
		visit(n, depth)
		for _, c := range n.Children {
			walk(c, depth+1)
		}
	}
	walk(t.Root, 0)
}

// FairTree computes Slurm's Fair Tree factors (the default since 19.05):
// at every level each association's LevelFS = S/U, siblings sorted by
// it, highest first; a depth-first walk of that order ranks users from
// the number of users down, and a user's FairShare is its rank over the
// number of users, so the best-served-least user gets 1. Ties as Slurm
// documents them: sibling users with equal LevelFS share a rank, a user
// tied with a sibling account shares the rank of that account's best
// user, and tied sibling accounts have their children merged (and
// sorted together) before the walk descends. Call after Finish.
func (t *Tree) FairTree() {
	if t.nusers == 0 {
		return
	}
	next := t.nusers
	t.rank(t.level(t.Root), &next, 0)
}

// level computes S, U and LevelFS of parent's children and returns them.
// An account with Fairshare=parent does not compete itself: its children
// stand at its parent's level. A user with Fairshare=parent takes its
// account's LevelFS.
func (t *Tree) level(parent *Node) []*Node {
	var kids []*Node
	var gather func(n *Node)
	gather = func(n *Node) {
		for _, c := range n.Children {
			if !c.IsUser() && c.Shares == model.SharesParent {
				gather(c)
				continue
			}
			kids = append(kids, c)
		}
	}
	gather(parent)
	shares, usage := 0.0, 0.0
	for _, c := range kids {
		if c.Shares != model.SharesParent {
			shares += float64(max(0, c.Shares))
		}
		usage += c.Usage
	}
	for _, c := range kids {
		if c.Shares == model.SharesParent {
			c.NormShares, c.EffUsage, c.LevelFS = parent.NormShares, parent.EffUsage, parent.LevelFS
			if parent == t.Root {
				c.LevelFS = math.Inf(1)
			}
			continue
		}
		c.NormShares, c.EffUsage = 0, 0
		if shares > 0 {
			c.NormShares = float64(max(0, c.Shares)) / shares
		}
		if usage > 0 {
			c.EffUsage = c.Usage / usage
		}
		c.LevelFS = levelFS(c.NormShares, c.EffUsage)
	}
	return kids
}

// levelFS is S/U: 0 without shares, +Inf with shares but no usage.
func levelFS(s, u float64) float64 {
	switch {
	case s <= 0:
		return 0
	case u <= 0:
		return math.Inf(1)
	}
	return s / u
}

// tied reports whether two LevelFS values are the same: equal, or apart
// by rounding only (S/U reached by different sums of the same ratio).
func tied(a, b float64) bool {
	if a == b {
		return true
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return false
	}
	return math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b))
}

// rank walks one (possibly merged) level. next is the rank the next
// untied user gets; carry, when > 0, is the rank the first group of the
// level must share (the level's account tied with users above).
func (t *Tree) rank(kids []*Node, next *int, carry int) {
	slices.SortStableFunc(kids, func(a, b *Node) int {
		switch {
		case tied(a.LevelFS, b.LevelFS):
			return 0
		case a.LevelFS > b.LevelFS:
			return -1
		}
		return 1
	})
	n := float64(t.nusers)
	for i := 0; i < len(kids); {
		j := i + 1
		for j < len(kids) && tied(kids[j].LevelFS, kids[i].LevelFS) {
			j++
		}
		r := *next
		if i == 0 && carry > 0 {
			r = carry
		}
		users := 0
		var merged []*Node
		for _, c := range kids[i:j] {
			if c.IsUser() {
				c.FairShare = float64(r) / n
				users++
				continue
			}
			merged = append(merged, t.level(c)...)
		}
		*next -= users
		if len(merged) > 0 {
			down := 0
			if users > 0 || (i == 0 && carry > 0) {
				down = r
			}
			t.rank(merged, next, down)
		}
		i = j
	}
}
