package grpcapi

import (
	"context"
	"path"
	"runtime"
	"sort"
	"sync"
	"time"

	"google.golang.org/grpc"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/auth"
	"github.com/drover-hpc/drover/internal/model"
)

// rpcStats counts calls by method and by caller (sdiag's "Remote
// Procedure Call statistics").
type rpcStats struct {
	mu     sync.Mutex
	byType map[string]*pb.RPCStat
	byUser map[uint32]*pb.RPCStat
}

func newRPCStats() *rpcStats {
	return &rpcStats{byType: map[string]*pb.RPCStat{}, byUser: map[uint32]*pb.RPCStat{}}
}

func (r *rpcStats) record(method string, id *auth.Identity, d time.Duration) {
	us := d.Microseconds()
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.byType[method]
	if m == nil {
		m = &pb.RPCStat{Name: method}
		r.byType[method] = m
	}
	m.Count++
	m.TotalUs += us
	if id != nil {
		u := r.byUser[id.UID]
		if u == nil {
			u = &pb.RPCStat{Name: id.User, Uid: id.UID}
			r.byUser[id.UID] = u
		}
		u.Count++
		u.TotalUs += us
	}
}

func (r *rpcStats) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byType, r.byUser = map[string]*pb.RPCStat{}, map[uint32]*pb.RPCStat{}
}

// snapshot lists the counters, most called first as sdiag sorts them.
func (r *rpcStats) snapshot() (byType, byUser []*pb.RPCStat) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.byType {
		byType = append(byType, &pb.RPCStat{Name: m.Name, Count: m.Count, TotalUs: m.TotalUs})
	}
	for _, u := range r.byUser {
		byUser = append(byUser, &pb.RPCStat{Name: u.Name, Uid: u.Uid, Count: u.Count, TotalUs: u.TotalUs})
	}
	order := func(s []*pb.RPCStat) {
		sort.Slice(s, func(a, b int) bool {
			if s[a].Count != s[b].Count {
				return s[a].Count > s[b].Count
			}
			return s[a].Name < s[b].Name
		})
	}
	order(byType)
	order(byUser)
	return byType, byUser
}

// unary times every unary call. Streams are left out: an agent's stream
// lasts as long as the agent, which says nothing about the controller.
func (s *Server) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	t0 := time.Now()
	resp, err := h(ctx, req)
	id, _ := s.verifier.Identify(ctx)
	s.rpc.record(path.Base(info.FullMethod), id, time.Since(t0))
	return resp, err
}

// Diag answers sdiag.
func (s *Server) Diag(ctx context.Context, r *pb.DiagRequest) (*pb.DiagResponse, error) {
	if r.ResetStats {
		if err := s.svc.ResetStats(ctx); err != nil {
			return nil, toStatus(err)
		}
		s.rpc.reset()
		s.ctl.ResetSchedStats()
	}
	snap := s.svc.Snapshot()
	st := snap.Stats()
	acct := s.ctl.AcctStatus()
	sched := s.ctl.SchedStats()
	out := &pb.DiagResponse{
		Now: time.Now().Unix(), Since: st.Since, ServerThreads: int32(runtime.NumGoroutine()),
		AcctBacklog: int32(acct.Backlog), AcctError: acct.LastError, AcctDisabled: !s.svc.AccountingEnabled(),
		JobsSubmitted: st.Submitted, JobsStarted: st.Started, JobsCompleted: st.Completed,
		JobsCanceled: st.Canceled, JobsFailed: st.Failed,
		SchedLastUs: sched.Last.Microseconds(), SchedMaxUs: sched.Max.Microseconds(), SchedCycles: sched.Cycles,
		SchedTotalUs: sched.Total.Microseconds(), SchedDepthSum: sched.DepthSum, SchedLastQueue: int32(sched.LastQueue),
		SchedSince: sched.Started.Unix(),
	}
	if out.Since == 0 {
		out.Since = sched.Started.Unix()
	}
	snap.EachActive(func(j *model.Job) bool {
		switch j.State {
		case model.JobPending:
			out.JobsPending++
		case model.JobRunning:
			out.JobsRunning++
		}
		return true
	})
	out.RpcByType, out.RpcByUser = s.rpc.snapshot()
	return out, nil
}

// Priorities answers sprio and sshare.
func (s *Server) Priorities(ctx context.Context, _ *pb.PrioritiesRequest) (*pb.PrioritiesResponse, error) {
	r, err := s.svc.Priorities(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	w := r.Weights
	out := &pb.PrioritiesResponse{Multifactor: r.Multifactor, FairTree: r.FairTree, Weights: &pb.PriorityWeights{
		Age: w.Age, Fairshare: w.FairShare, Jobsize: w.JobSize, Partition: w.Partition, Qos: w.QOS, Tres: r.WeightTRES}}
	for _, jp := range r.Jobs {
		j, f := jp.Job, jp.Factors
		pj := &pb.JobPriority{JobId: uint32(j.ID), DisplayId: j.DisplayID(), Partition: j.Partition, User: j.UserName,
			Uid: j.UserID, Priority: f.Priority, Age: f.Age, Fairshare: f.FairShare, Jobsize: f.JobSize, PartitionFactor: f.Partition,
			Qos: f.QOS, Nice: int32(f.Nice)}
		for _, t := range f.TRES {
			pj.Tres = append(pj.Tres, &pb.TRESFactor{Name: t.Name, Factor: t.Factor, Weighted: t.Weighted})
		}
		out.Jobs = append(out.Jobs, pj)
	}
	for _, sr := range r.Shares {
		out.Shares = append(out.Shares, &pb.ShareRow{Account: sr.Account, User: sr.User, Depth: int32(sr.Depth), RawShares: int32(sr.RawShares),
			NormShares: sr.NormShares, RawUsage: sr.RawUsage, EffectvUsage: sr.EffUsage, Fairshare: sr.FairShare,
			NormUsage: sr.NormUsage, LevelFs: sr.LevelFS})
	}
	return out, nil
}
