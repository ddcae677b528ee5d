package grpcapi

import (
	"context"
	"path"
	"sort"
	"sync"
	"time"

	"google.golang.org/grpc"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/auth"
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

// unary identifies the caller and times every unary call. Streams are
// left out of the times: an agent's stream lasts as long as the agent,
// which says nothing about the controller.
func (s *Server) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	t0 := time.Now()
	ctx, id := s.identify(ctx)
	resp, err := h(ctx, req)
	s.rpc.record(path.Base(info.FullMethod), id, time.Since(t0))
	return resp, err
}

// Diag answers sdiag: the service's figures and this adapter's RPC counts.
func (s *Server) Diag(ctx context.Context, r *pb.DiagRequest) (*pb.DiagResponse, error) {
	d, err := s.svc.Diag(ctx, r.ResetStats)
	if err != nil {
		return nil, toStatus(err)
	}
	if r.ResetStats {
		s.rpc.reset()
	}
	out := &pb.DiagResponse{
		Now: d.Now, Since: d.Since, ServerThreads: int32(d.ServerThreads),
		AcctBacklog: int32(d.AcctBacklog), AcctError: d.AcctError, AcctDisabled: d.AcctDisabled,
		JobsSubmitted: d.JobsSubmitted, JobsStarted: d.JobsStarted, JobsCompleted: d.JobsCompleted,
		JobsCanceled: d.JobsCanceled, JobsFailed: d.JobsFailed, JobsPending: int32(d.JobsPending), JobsRunning: int32(d.JobsRunning),
		SchedLastUs: d.SchedLast, SchedMaxUs: d.SchedMax, SchedCycles: d.SchedCycles,
		SchedTotalUs: d.SchedTotal, SchedDepthSum: d.SchedDepthSum, SchedLastQueue: int32(d.SchedLastQueue),
		SchedSince: d.SchedSince,
	}
	out.RpcByType, out.RpcByUser = s.rpc.snapshot()
	return out, nil
}

// Priorities answers sprio and sshare.
func (s *Server) Priorities(ctx context.Context, _ *pb.PrioritiesRequest) (*pb.PrioritiesResponse, error) {
	r, err := s.svc.Priorities(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	out := &pb.PrioritiesResponse{Multifactor: r.Multifactor, FairTree: r.FairTree, Weights: &pb.PriorityWeights{
		Age: r.WAge, Fairshare: r.WFairShare, Jobsize: r.WJobSize, Partition: r.WPart, Qos: r.WQOS, Tres: r.WTRES}}
	for _, j := range r.Jobs {
		pj := &pb.JobPriority{JobId: j.JobID, DisplayId: j.ID, Partition: j.Partition, User: j.User,
			Uid: j.UID, Priority: j.Priority, Age: j.Age, Fairshare: j.FairShare, Jobsize: j.JobSize, PartitionFactor: j.Part,
			Qos: j.QOS, Nice: int32(j.Nice)}
		for _, t := range j.TRES {
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
