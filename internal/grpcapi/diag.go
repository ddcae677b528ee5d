package grpcapi

import (
	"context"
	"path"
	"time"

	"google.golang.org/grpc"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/api"
)

// unary identifies the caller and times every unary call. Streams are
// left out of the times: an agent's stream lasts as long as the agent,
// which says nothing about the controller.
func (s *Server) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	t0 := time.Now()
	requestRead(ctx) // decoded: the request's buffer is free
	ctx, id := s.identify(ctx)
	c := s.answers.conn(ctx)
	if c != nil {
		if err := s.answers.wait(ctx, c); err != nil {
			return nil, err
		}
	}
	resp, err := h(ctx, req)
	if c != nil {
		s.answers.charge(c, resp)
	}
	s.rpc.Record(path.Base(info.FullMethod), id, time.Since(t0))
	return resp, err
}

// Diag answers sdiag: the service's figures and this adapter's RPC counts.
func (s *Server) Diag(ctx context.Context, r *pb.DiagRequest) (*pb.DiagResponse, error) {
	d, err := s.svc.Diag(ctx, r.ResetStats)
	if err != nil {
		return nil, toStatus(err)
	}
	if r.ResetStats {
		s.rpc.Reset()
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
	byType, byUser := s.rpc.Snapshot()
	out.RpcByType, out.RpcByUser = rpcToPB(byType), rpcToPB(byUser)
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

func rpcToPB(in []api.RPCStat) []*pb.RPCStat {
	out := make([]*pb.RPCStat, len(in))
	for i, r := range in {
		out[i] = &pb.RPCStat{Name: r.Name, Uid: r.UID, Count: r.Count, TotalUs: r.TotalUs}
	}
	return out
}
