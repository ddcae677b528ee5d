package localwire

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"

	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/acctmgr"
	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/model"
)

// Job is a job with its spec: the model leaves the spec out of its JSON
// (the store keeps specs apart from jobs), the commands need it.
type Job struct {
	*model.Job
	Spec *model.JobSpec `json:"spec,omitempty"`
}

// Jobs wraps jobs for the wire.
func Jobs(in []*model.Job) []Job {
	out := make([]Job, len(in))
	for i, j := range in {
		out[i] = Job{Job: j, Spec: j.Spec}
	}
	return out
}

// ModelJobs unwraps jobs read off the wire.
func ModelJobs(in []Job) []*model.Job {
	out := make([]*model.Job, len(in))
	for i, j := range in {
		out[i] = j.Model()
	}
	return out
}

// Model is the job with its spec in place.
func (j Job) Model() *model.Job {
	if j.Job == nil {
		return nil
	}
	if j.Spec == nil {
		// Commands read a job's spec without checking (the gRPC client
		// gives every job one, empty when none was sent).
		j.Spec = &model.JobSpec{}
	}
	j.Job.Spec = j.Spec
	return j.Job
}

// Node is a node with the backfill flag the model keeps out of its JSON.
type Node struct {
	*model.Node
	Planned bool `json:"planned,omitempty"`
}

// Model is the node with its flags in place.
func (n Node) Model() *model.Node {
	if n.Node == nil {
		return nil
	}
	n.Node.Planned = n.Planned
	return n.Node
}

// Float is a float64 that may be NaN or infinite (fair-share figures),
// which JSON numbers cannot hold.
type Float float64

func (f Float) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte(`"` + strconv.FormatFloat(v, 'g', -1, 64) + `"`), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

func (f *Float) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(s) >= 2 && s[0] == '"' {
		s = s[1 : len(s)-1]
	}
	v, err := strconv.ParseFloat(s, 64)
	*f = Float(v)
	return err
}

// ShareRow is api.ShareRow with floats that survive JSON.
type ShareRow struct {
	Account, User                             string
	Depth, RawShares                          int
	NormShares, RawUsage, EffUsage, FairShare Float
	NormUsage, LevelFS                        Float
}

// TRESFactor is api.TRESFactor with floats that survive JSON.
type TRESFactor struct {
	Name             string
	Factor, Weighted Float
}

// JobPriority is api.JobPriority with floats that survive JSON.
type JobPriority struct {
	ID                                 string
	JobID                              uint32
	Partition, User                    string
	UID                                uint32
	Priority                           uint32
	Age, FairShare, JobSize, Part, QOS Float
	Nice                               int
	TRES                               []TRESFactor
}

// PriorityInfo is api.PriorityInfo with floats that survive JSON.
type PriorityInfo struct {
	Multifactor, FairTree                   bool
	WAge, WFairShare, WJobSize, WPart, WQOS uint32
	WTRES                                   string
	Jobs                                    []JobPriority
	Shares                                  []ShareRow
}

// Priorities converts for the wire.
func Priorities(p *api.PriorityInfo) *PriorityInfo {
	out := &PriorityInfo{Multifactor: p.Multifactor, FairTree: p.FairTree, WAge: p.WAge, WFairShare: p.WFairShare,
		WJobSize: p.WJobSize, WPart: p.WPart, WQOS: p.WQOS, WTRES: p.WTRES}
	for _, j := range p.Jobs {
		w := JobPriority{ID: j.ID, JobID: j.JobID, Partition: j.Partition, User: j.User, UID: j.UID, Priority: j.Priority,
			Age: Float(j.Age), FairShare: Float(j.FairShare), JobSize: Float(j.JobSize), Part: Float(j.Part), QOS: Float(j.QOS), Nice: j.Nice}
		for _, t := range j.TRES {
			w.TRES = append(w.TRES, TRESFactor{Name: t.Name, Factor: Float(t.Factor), Weighted: Float(t.Weighted)})
		}
		out.Jobs = append(out.Jobs, w)
	}
	for _, s := range p.Shares {
		out.Shares = append(out.Shares, ShareRow{Account: s.Account, User: s.User, Depth: s.Depth, RawShares: s.RawShares,
			NormShares: Float(s.NormShares), RawUsage: Float(s.RawUsage), EffUsage: Float(s.EffUsage), FairShare: Float(s.FairShare),
			NormUsage: Float(s.NormUsage), LevelFS: Float(s.LevelFS)})
	}
	return out
}

// API converts back.
func (p *PriorityInfo) API() *api.PriorityInfo {
	out := &api.PriorityInfo{Multifactor: p.Multifactor, FairTree: p.FairTree, WAge: p.WAge, WFairShare: p.WFairShare,
		WJobSize: p.WJobSize, WPart: p.WPart, WQOS: p.WQOS, WTRES: p.WTRES}
	for _, j := range p.Jobs {
		a := api.JobPriority{ID: j.ID, JobID: j.JobID, Partition: j.Partition, User: j.User, UID: j.UID, Priority: j.Priority,
			Age: float64(j.Age), FairShare: float64(j.FairShare), JobSize: float64(j.JobSize), Part: float64(j.Part), QOS: float64(j.QOS), Nice: j.Nice}
		for _, t := range j.TRES {
			a.TRES = append(a.TRES, api.TRESFactor{Name: t.Name, Factor: float64(t.Factor), Weighted: float64(t.Weighted)})
		}
		out.Jobs = append(out.Jobs, a)
	}
	for _, s := range p.Shares {
		out.Shares = append(out.Shares, api.ShareRow{Account: s.Account, User: s.User, Depth: s.Depth, RawShares: s.RawShares,
			NormShares: float64(s.NormShares), RawUsage: float64(s.RawUsage), EffUsage: float64(s.EffUsage), FairShare: float64(s.FairShare),
			NormUsage: float64(s.NormUsage), LevelFS: float64(s.LevelFS)})
	}
	return out
}

// The arguments and results of the calls whose api signature has more
// than one of either.
type (
	JobID     struct{ ID model.JobID }
	Selection struct {
		Sel    api.JobSelection
		Sig    api.SignalRequest `json:",omitempty"`
		Action string            `json:",omitempty"`
		Fields map[string]string `json:",omitempty"`
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
		Job  Job
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
	AcctChunk = []*acct.Job
)

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

// Raw marshals a body, for answers built by hand.
func Raw(v any) (json.RawMessage, error) { return json.Marshal(v) }

// JobList is a listing on the wire.
type JobList struct {
	Jobs []Job
	Now  int64
}

// API unwraps it.
func (l *JobList) API() *api.JobList {
	return &api.JobList{Jobs: ModelJobs(l.Jobs), Now: l.Now}
}
