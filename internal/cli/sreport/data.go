package sreport

import (
	"os/user"
	"sort"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/model"
)

// world is what a report is computed from: the job records of the
// period, the account tree and the local cluster's nodes.
type world struct {
	now        int64 // unix seconds
	start, end int64 // the period, [start, end)
	local      string
	recs       []*rec
	db         *model.AcctDB
	nodes      []*model.Node
	names      map[string]string
	lookupUser func(login string) (*user.User, error)
}

// rec is a job that ran during the period.
type rec struct {
	*acct.Job
	secs int64            // seconds run inside the period
	tres map[string]int64 // allocated TRES counts (mem in MB)
}

// elapsed is the part of the job's run [Start, End, or now while it
// runs] inside [start, end).
func elapsed(j *acct.Job, start, end, now int64) int64 {
	if j.Start <= 0 {
		return 0
	}
	stop := j.End
	if stop <= 0 {
		stop = now
	}
	return max(min(stop, end)-max(j.Start, start), 0)
}

func newWorld(jobs []*acct.Job, db *model.AcctDB, nodes []*model.Node, local string, start, end, now int64, lookupUser func(string) (*user.User, error)) *world {
	if db == nil {
		db = &model.AcctDB{}
	}
	w := &world{now: now, start: start, end: end, local: local, db: db, nodes: nodes, names: map[string]string{}, lookupUser: lookupUser}
	for _, j := range jobs {
		if s := elapsed(j, start, end, now); s > 0 {
			w.recs = append(w.recs, &rec{Job: j, secs: s, tres: parseAllocTRES(j)})
		}
	}
	return w
}

// parseAllocTRES reads "billing=2,cpu=2,gres/gpu=1,mem=400M,node=1";
// cpu and node fall back on the record's counts.
func parseAllocTRES(j *acct.Job) map[string]int64 {
	t := map[string]int64{}
	for _, item := range strings.Split(j.AllocTRES, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok || k == "" {
			continue
		}
		k = strings.ToLower(k)
		mult := int64(1)
		if k == "mem" && v != "" {
			switch v[len(v)-1] {
			case 'K', 'k':
				mult, v = -1, v[:len(v)-1]
			case 'M', 'm':
				v = v[:len(v)-1]
			case 'G', 'g':
				mult, v = 1024, v[:len(v)-1]
			case 'T', 't':
				mult, v = 1024*1024, v[:len(v)-1]
			}
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			continue
		}
		if mult < 0 {
			n = (n + 1023) / 1024
		} else {
			n *= mult
		}
		t[k] = n
	}
	if _, ok := t["cpu"]; !ok {
		t["cpu"] = int64(j.NCPUs)
	}
	if _, ok := t["node"]; !ok && j.NNodes > 0 {
		t["node"] = int64(j.NNodes)
	}
	return t
}

// usage is the job's TRES-seconds of name inside the period.
func (r *rec) usage(name string) int64 { return r.secs * r.tres[name] }

// clusterRecs are the records of one cluster.
func (w *world) clusterRecs(cluster string) []*rec {
	var out []*rec
	for _, r := range w.recs {
		if strings.EqualFold(r.Cluster, cluster) {
			out = append(out, r)
		}
	}
	return out
}

// capacity is how many of a TRES the cluster has: known for the local
// cluster only, from its nodes (billing counts CPUs, energy nothing).
func (w *world) capacity(cluster, name string) int64 {
	if !strings.EqualFold(cluster, w.local) {
		return 0
	}
	var n int64
	for _, node := range w.nodes {
		switch {
		case name == "cpu" || name == "billing":
			n += int64(node.CPUs)
		case name == "mem":
			n += node.Memory
		case name == "node":
			n++
		case strings.HasPrefix(name, "gres/"):
			n += gresCount(node, strings.TrimPrefix(name, "gres/"))
		}
	}
	return n
}

// gresCount counts a node's gres "gpu" or "gpu:a100".
func gresCount(node *model.Node, spec string) int64 {
	gname, typ, _ := strings.Cut(spec, ":")
	items, _ := model.ParseGres(node.Gres)
	if len(items) == 0 && gname == "gpu" {
		var n int64
		for _, g := range node.GPUs {
			if typ == "" || g.Type == typ {
				n++
			}
		}
		return n
	}
	var n int64
	for _, it := range items {
		if it.Name == gname && (typ == "" || it.Type == typ) {
			n += int64(it.Count)
		}
	}
	return n
}

// seconds is the part of the period already past: the time the
// cluster's resources could have been used.
func (w *world) seconds() int64 { return max(min(w.end, w.now)-w.start, 0) }

// reported is the TRES-seconds a cluster reports for the period: its
// capacity, or what its jobs used when that is more (or capacity is not
// known).
func (w *world) reported(cluster, name string, recs []*rec) int64 {
	var used int64
	for _, r := range recs {
		used += r.usage(name)
	}
	return max(w.capacity(cluster, name)*w.seconds(), used)
}

// fixedTRES are the TRES every cluster tracks, in Slurm's id order.
var fixedTRES = []string{"cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages"}

// tresList resolves --tres (empty: cpu): known names in the order given,
// ALL for every TRES the records and nodes show.
func (w *world) tresList(arg string) ([]string, error) {
	if arg == "" {
		return []string{"cpu"}, nil
	}
	var out []string
	for _, name := range addList(nil, arg, true) {
		if name == "all" {
			return w.allTRES(), nil
		}
		if contains(fixedTRES, name) || strings.Contains(name, "/") {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return nil, condError("No valid TRES given")
	}
	return out, nil
}

func (w *world) allTRES() []string {
	seen := model.TRES{}
	for _, n := range fixedTRES {
		seen[n] = 0
	}
	for _, r := range w.recs {
		for n := range r.tres {
			if strings.Contains(n, "/") {
				seen[n] = 0
			}
		}
	}
	for _, node := range w.nodes {
		items, _ := model.ParseGres(node.Gres)
		for _, it := range items {
			seen["gres/"+it.Name] = 0
			if it.Type != "" {
				seen["gres/"+it.Name+":"+it.Type] = 0
			}
		}
	}
	return seen.Names()
}

// tree is a cluster's account hierarchy.
type tree struct {
	parent   map[string]string
	children map[string][]string
}

// tree builds the cluster's account tree from its associations; an
// account the records name but the tree lacks hangs under root.
func (w *world) tree(cluster string) *tree {
	t := &tree{parent: map[string]string{"root": ""}, children: map[string][]string{}}
	for _, a := range w.db.Assocs {
		if a.User != "" || a.Account == "root" || !strings.EqualFold(a.Cluster, cluster) {
			continue
		}
		if _, dup := t.parent[a.Account]; dup {
			continue
		}
		p := a.Parent
		if p == "" {
			p = "root"
		}
		t.parent[a.Account] = p
		t.children[p] = append(t.children[p], a.Account)
	}
	for _, r := range w.recs {
		if r.Account != "" && strings.EqualFold(r.Cluster, cluster) {
			t.ensure(r.Account)
		}
	}
	for _, c := range t.children {
		sort.Strings(c)
	}
	return t
}

func (t *tree) ensure(a string) {
	if _, ok := t.parent[a]; !ok {
		t.parent[a] = "root"
		t.children["root"] = append(t.children["root"], a)
	}
}

func (t *tree) has(a string) bool {
	_, ok := t.parent[a]
	return ok
}

// under reports whether account a is anc or below it.
func (t *tree) under(a, anc string) bool {
	for seen := 0; a != "" && seen < 128; seen++ {
		if a == anc {
			return true
		}
		a = t.parent[a]
	}
	return false
}

// order lists the accounts below (and including) top depth first.
func (t *tree) order(top string) []string {
	var out []string
	var walk func(string)
	walk = func(a string) {
		out = append(out, a)
		for _, c := range t.children[a] {
			walk(c)
		}
	}
	walk(top)
	return out
}

// gecos looks a login's full name up (the GECOS field up to its first
// comma); empty when unknown.
func (w *world) gecos(login string) string {
	u, err := w.lookupUser(login)
	if err != nil {
		return ""
	}
	name, _, _ := strings.Cut(u.Name, ",")
	return name
}

func (w *world) properName(login string) string {
	if login == "" {
		return ""
	}
	name, ok := w.names[login]
	if !ok {
		name = w.gecos(login)
		w.names[login] = name
	}
	return name
}
