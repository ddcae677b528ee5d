package acctmgr

import (
	"errors"

	"github.com/drover-hpc/drover/internal/model"
)

// Apply returns the configuration after req, and the text sacctmgr prints
// about the change. It never modifies db.
func Apply(db *model.AcctDB, req *Request, cluster string) (*model.AcctDB, string, error) {
	return nil, "", errors.New("not implemented yet")
}
