package localwire

import (
	"errors"

	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/acctmgr"
	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/model"
)

// The arguments and results of the calls whose api signature has more
// than one of either.
type (
	JobID     struct{ ID model.JobID }
	Selection struct {
		Sel    api.JobSelection
		Sig    api.SignalRequest
		Action string
		Fields map[string]string
	}
	NodeUpdate struct {
		Nodes  []string
		Fields map[string]string
	}
	StepCreate struct {
		Job  model.JobID
		Spec *model.StepSpec
	}
	StepCreated struct {
		Job  *model.Job
		Step *model.Step
	}
	JobEnd struct {
		Job              model.JobID
		ExitCode, Signal int
	}
	Attach struct {
		Job       model.JobID
		Step      model.StepID
		Addr, Key string
	}
	StatsQuery struct {
		Job     model.JobID
		Step    model.StepID
		HasStep bool
	}
	Stats struct {
		Stats  []api.StepStat
		Failed []string
	}
	AcctChange struct {
		Req    *acctmgr.Request
		Commit bool
	}
	Text         struct{ Text string }
	Reset        struct{ Reset bool }
	Reservations struct {
		List []*model.Reservation
		Now  int64
	}
	TokenMade struct {
		Token   string
		Expires int64
	}
	// ListQuery asks for a listing; IDs are WatchJobs' jobs.
	ListQuery struct {
		Q   api.JobQuery
		IDs []model.JobID
	}
)

// messages are the values the protocol carries, for the Fingerprint.
var messages = []any{Request{}, Answer{}, JobList{}, ListQuery{}, JobID{}, Selection{}, NodeUpdate{}, StepCreate{},
	StepCreated{}, JobEnd{}, Attach{}, StatsQuery{}, Stats{}, AcctChange{}, Text{}, Reset{}, Reservations{}, TokenMade{},
	model.JobSpec{}, []*model.Node{}, []*model.Partition{}, []api.JobResult{}, api.PingResult{}, []api.KV{},
	api.BroadcastRequest{}, []string{}, acct.Query{}, []*acct.Job{}, model.AcctDB{}, api.DiagInfo{}, api.PriorityInfo{},
	model.ResvRequest{}, api.TokenSpec{}, []*model.JoinToken{}}

// ToError puts an error on the wire.
func ToError(err error) *Error {
	if err == nil {
		return nil
	}
	if nl, ok := api.IsNotLeader(err); ok {
		return &Error{Kind: "leader", Msg: err.Error(), Leader: nl.Leader}
	}
	if e, ok := api.IsError(err); ok {
		return &Error{Kind: "api", Code: int(e.Code), Msg: e.Msg}
	}
	var w *acctmgr.Warning
	if errors.As(err, &w) {
		return &Error{Kind: "warning", Msg: err.Error(), Text: w.Text}
	}
	if errors.Is(err, ErrOtherBuild) {
		return &Error{Kind: "build", Msg: err.Error()}
	}
	return &Error{Msg: err.Error()}
}

// sentinels are the api's errors that callers test by identity.
var sentinels = []error{api.ErrAcctDisabled, api.ErrStepBusy, api.ErrTryAgain}

// Err turns a wire error back into the error the service returned: the
// api's sentinel values themselves, so errors.Is holds across the socket.
func (e *Error) Err() error {
	switch e.Kind {
	case "leader":
		return &api.NotLeaderError{Leader: e.Leader}
	case "warning":
		return &acctmgr.Warning{Text: e.Text}
	case "build":
		return ErrOtherBuild
	case "api":
		for _, s := range sentinels {
			if ae := s.(*api.Error); int(ae.Code) == e.Code && ae.Msg == e.Msg {
				return s
			}
		}
		return &api.Error{Code: api.Code(e.Code), Msg: e.Msg}
	}
	return errors.New(e.Msg)
}
