package acctmgr

import "github.com/drover-hpc/drover/internal/model"

// Request is one sacctmgr command that changes the accounting
// configuration (add/create, modify, delete/remove), as parsed from the
// command line and sent to the controller.
type Request struct {
	Verb   string     `json:"verb"`   // "add", "modify", "delete"
	Entity string     `json:"entity"` // "cluster", "account", "user", "qos", "association", ...
	Names  []string   `json:"names,omitempty"`
	Where  []KeyValue `json:"where,omitempty"`
	Set    []KeyValue `json:"set,omitempty"`
}

// KeyValue is one "Key=Value", "Key+=Value" or "Key-=Value" of a command.
type KeyValue struct {
	Key   string `json:"key"`
	Op    string `json:"op"` // "=", "+=", "-="
	Value string `json:"value"`
}

// Init is the configuration of a new cluster: the cluster itself, the
// root account and its association, user root (an administrator) in it,
// and QOS normal, as a fresh Slurm database holds after `sacctmgr add
// cluster`.
func Init(cluster string) *model.AcctDB {
	db := &model.AcctDB{
		Clusters: []string{cluster},
		Accounts: map[string]*model.Account{"root": {Name: "root", Description: "default root account", Organization: "root"}},
		Users:    map[string]*model.AcctUser{"root": {Name: "root", DefaultAccount: "root", AdminLevel: model.AdminAdmin}},
		QOS:      map[string]*model.QOS{},
		NextID:   1,
		NextQOS:  2,
	}
	q := model.NewQOS("normal")
	q.ID, q.Description = 1, "Normal QOS default"
	db.QOS["normal"] = q
	root := model.NewAssoc(cluster, "root", "", "")
	root.ID = 1
	user := model.NewAssoc(cluster, "root", "root", "")
	user.ID = 2
	root.QOS, user.QOS = []string{"normal"}, []string{"normal"}
	db.Assocs = []*model.Assoc{root, user}
	db.NextID = 3
	return db
}
