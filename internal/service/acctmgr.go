package service

import (
	"context"
	"errors"

	"github.com/drover-hpc/drover/internal/acctmgr"
	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
)

// AcctDB returns the accounting configuration sacctmgr shows: the
// replicated one, or a new cluster's when none was ever set.
func (s *Service) AcctDB(ctx context.Context) (*model.AcctDB, error) {
	if _, err := s.Identify(ctx); err != nil {
		return nil, err
	}
	db, _ := s.acctDB()
	return db, nil
}

func (s *Service) acctDB() (*model.AcctDB, uint64) {
	db, ver := s.store.Snapshot().AcctDB()
	if db == nil {
		// Until sacctmgr first changes something, every submission
		// reads a new cluster's database (twice): made once per name.
		// Like the replicated one it is read-only (acctmgr changes
		// copies).
		name := s.Settings().ClusterName
		if c := s.initDB.Load(); c != nil && c.cluster == name {
			return c.db, ver
		}
		db = acctmgr.Init(name)
		s.initDB.Store(&initAcct{cluster: name, db: db})
	}
	return db, ver
}

// initAcct is acctmgr.Init's database of a cluster name.
type initAcct struct {
	cluster string
	db      *model.AcctDB
}

// AcctModify applies a sacctmgr change. Without commit it only returns
// the description of what would change (sacctmgr asks before committing).
// Root, SlurmUser and users whose AdminLevel is Administrator may.
func (s *Service) AcctModify(ctx context.Context, req *acctmgr.Request, commit bool) (string, error) {
	id, err := s.Identify(ctx)
	if err != nil {
		return "", err
	}
	for attempt := 0; ; attempt++ {
		db, ver := s.acctDB()
		if !s.acctAdmin(id, db) {
			return "", &Error{Code: CodeDenied, Msg: "Access/permission denied"}
		}
		next, text, err := acctmgr.Apply(db, req, s.Settings().ClusterName)
		// A *acctmgr.Warning comes with a change made in part: it is
		// committed, and the warning goes back to the client as the error.
		var warn *acctmgr.Warning
		if errors.As(err, &warn) {
			err = nil
		}
		if err != nil || !commit || next == nil {
			if err == nil && warn != nil {
				return text, warn
			}
			return text, invalidErr(err)
		}
		_, err = s.raft.Apply(fsm.TypeSetAcctDB, &fsm.SetAcctDB{DB: next, Base: ver})
		if errors.Is(err, fsm.ErrAcctDBChanged) && attempt < 10 {
			continue
		}
		if err == nil && warn != nil {
			return text, warn
		}
		return text, err
	}
}

func (s *Service) acctAdmin(id *api.Identity, db *model.AcctDB) bool {
	if s.privileged(id) {
		return true
	}
	u := db.Users[id.User]
	return u != nil && u.AdminLevel == model.AdminAdmin
}

func invalidErr(err error) error {
	if err == nil {
		return nil
	}
	return invalid(err.Error())
}
