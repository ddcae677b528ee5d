package grpcapi

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/acctmgr"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/auth"
	"github.com/drover-hpc/drover/internal/controller"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/service"
	"github.com/drover-hpc/drover/internal/wire"
)

// Server implements pb.DroverServer and pb.AgentServiceServer.
type Server struct {
	pb.UnimplementedDroverServer
	pb.UnimplementedAgentServiceServer
	svc      *service.Service
	ctl      *controller.Controller
	verifier *auth.Verifier
	host     string
	rpc      *rpcStats
}

// NewGRPC builds a gRPC server carrying both services, with peer-credential
// authentication on Unix sockets.
func NewGRPC(svc *service.Service, ctl *controller.Controller, v *auth.Verifier, host string, tcpTLS credentials.TransportCredentials, lim Limits) *grpc.Server {
	s := &Server{svc: svc, ctl: ctl, verifier: v, host: host, rpc: newRPCStats()}
	opts := append([]grpc.ServerOption{grpc.Creds(auth.PeerCreds{TLS: tcpTLS}), grpc.MaxRecvMsgSize(64 << 20), grpc.MaxSendMsgSize(256 << 20),
		grpc.InitialWindowSize(8 << 20), grpc.InitialConnWindowSize(16 << 20), grpc.WriteBufferSize(256 << 10),
		grpc.UnaryInterceptor(s.unary)}, lim.ServerOptions()...)
	g := grpc.NewServer(opts...)
	pb.RegisterDroverServer(g, s)
	pb.RegisterAgentServiceServer(g, s)
	return g
}

func toStatus(err error) error {
	if err == nil {
		return nil
	}
	if nl, ok := service.IsNotLeader(err); ok {
		return notLeaderStatus(nl)
	}
	if e, ok := service.IsError(err); ok {
		code := codes.InvalidArgument
		switch e.Code {
		case service.CodeDenied:
			code = codes.PermissionDenied
		case service.CodeNotFound:
			code = codes.NotFound
		case service.CodeUnavailable:
			code = codes.Unavailable
		case service.CodeBusy:
			code = codes.FailedPrecondition
		}
		return status.Error(code, e.Msg)
	}
	if errors.Is(err, context.Canceled) {
		return status.Error(codes.Canceled, err.Error())
	}
	return status.Error(codes.Internal, err.Error())
}

func (s *Server) SubmitJob(ctx context.Context, r *pb.SubmitJobRequest) (*pb.SubmitJobResponse, error) {
	id, err := s.svc.SubmitJob(ctx, wire.SpecFromPB(r.Spec))
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.SubmitJobResponse{JobId: uint32(id)}, nil
}

func jobIDs(ids []uint32) []model.JobID {
	out := make([]model.JobID, len(ids))
	for i, v := range ids {
		out[i] = model.JobID(v)
	}
	return out
}

func jobsToPB(jobs []*model.Job, d wire.Detail) []*pb.Job {
	out := make([]*pb.Job, len(jobs))
	for i, j := range jobs {
		out[i] = wire.JobToPB(j, d)
	}
	return out
}

func (s *Server) ListJobs(ctx context.Context, r *pb.ListJobsRequest) (*pb.ListJobsResponse, error) {
	jobs, now, err := s.svc.ListJobs(ctx, jobIDs(r.Ids), r.IncludeFinished)
	if err != nil {
		return nil, toStatus(err)
	}
	switch {
	case r.Summary:
		return wire.SummaryListing(jobs, now, r.WithSteps), nil
	case r.WithoutSpec:
		return &pb.ListJobsResponse{Jobs: jobsToPB(jobs, wire.Listing), Now: now}, nil
	}
	// The full spec carries the batch script and the environment (tokens,
	// passwords): only the owner's and an operator's.
	full, err := s.svc.SpecVisible(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	out := make([]*pb.Job, len(jobs))
	for i, j := range jobs {
		d := wire.Listing
		if full(j) {
			d = wire.Full
		}
		out[i] = wire.JobToPB(j, d)
	}
	return &pb.ListJobsResponse{Jobs: out, Now: now}, nil
}

func (s *Server) WatchJobs(r *pb.WatchJobsRequest, stream pb.Drover_WatchJobsServer) error {
	var sendErr error
	err := s.svc.WatchJobs(stream.Context(), jobIDs(r.Ids), func(jobs []*model.Job, now int64) bool {
		sendErr = stream.Send(wire.SummaryListing(jobs, now, true))
		return sendErr == nil
	})
	if sendErr != nil {
		return sendErr
	}
	return toStatus(err)
}

func (s *Server) ListNodes(ctx context.Context, _ *pb.ListNodesRequest) (*pb.ListNodesResponse, error) {
	nodes, err := s.svc.ListNodes(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	out := &pb.ListNodesResponse{}
	for _, n := range nodes {
		out.Nodes = append(out.Nodes, wire.NodeToPB(n))
	}
	return out, nil
}

func (s *Server) ListPartitions(ctx context.Context, _ *pb.ListPartitionsRequest) (*pb.ListPartitionsResponse, error) {
	parts, err := s.svc.ListPartitions(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	out := &pb.ListPartitionsResponse{}
	for _, p := range parts {
		out.Partitions = append(out.Partitions, wire.PartitionToPB(p))
	}
	return out, nil
}

func selectionFromPB(sel *pb.JobSelection) service.Selection {
	out := service.Selection{UID: -1}
	if sel == nil {
		return out
	}
	out.User, out.UID, out.Name, out.Partition = sel.User, sel.Uid, sel.Name, sel.Partition
	out.Nodes, out.Account, out.QOS = sel.Nodes, sel.Account, sel.Qos
	for _, st := range sel.States {
		out.States = append(out.States, model.JobState(st))
	}
	for _, t := range sel.Targets {
		tg := service.Target{ID: model.JobID(t.Id), Raw: t.Raw, HasStep: t.HasStep, Step: model.StepID(t.Step)}
		if t.HasTasks {
			tg.Tasks = make([]int, len(t.Tasks))
			for i, v := range t.Tasks {
				tg.Tasks[i] = int(v)
			}
		}
		out.Targets = append(out.Targets, tg)
	}
	return out
}

func resultsToPB(rs []service.Result, err error) (*pb.JobResultsResponse, error) {
	if err != nil {
		return nil, toStatus(err)
	}
	out := &pb.JobResultsResponse{}
	for _, r := range rs {
		out.Results = append(out.Results, &pb.JobResult{Job: r.Job, Error: r.Error})
	}
	return out, nil
}

func (s *Server) SignalJobs(ctx context.Context, r *pb.SignalJobsRequest) (*pb.JobResultsResponse, error) {
	scope := service.ScopeSteps
	switch {
	case r.BatchOnly:
		scope = service.ScopeBatch
	case r.Full:
		scope = service.ScopeFull
	}
	return resultsToPB(s.svc.Signal(ctx, selectionFromPB(r.Selection), int(r.Signal), scope))
}

func (s *Server) ControlJobs(ctx context.Context, r *pb.ControlJobsRequest) (*pb.JobResultsResponse, error) {
	return resultsToPB(s.svc.Control(ctx, selectionFromPB(r.Selection), r.Action))
}

func (s *Server) UpdateJob(ctx context.Context, r *pb.UpdateJobRequest) (*pb.JobResultsResponse, error) {
	return resultsToPB(s.svc.UpdateJob(ctx, selectionFromPB(r.Selection), r.Fields))
}

func (s *Server) UpdateNodes(ctx context.Context, r *pb.UpdateNodesRequest) (*pb.UpdateNodesResponse, error) {
	if err := s.svc.UpdateNodes(ctx, r.Nodes, r.Fields); err != nil {
		return nil, toStatus(err)
	}
	return &pb.UpdateNodesResponse{}, nil
}

func (s *Server) Ping(ctx context.Context, _ *pb.PingRequest) (*pb.PingResponse, error) {
	if _, err := s.svc.Identify(ctx); err != nil {
		return nil, toStatus(err)
	}
	return &pb.PingResponse{Controllers: []*pb.ControllerStatus{{Host: s.host, Primary: true, Up: true, Leader: true}}}, nil
}

func (s *Server) GetConfig(ctx context.Context, _ *pb.GetConfigRequest) (*pb.GetConfigResponse, error) {
	if _, err := s.svc.Identify(ctx); err != nil {
		return nil, toStatus(err)
	}
	out := &pb.GetConfigResponse{}
	for _, kv := range s.svc.Settings().Config {
		out.Items = append(out.Items, &pb.KV{Key: kv[0], Value: kv[1]})
	}
	return out, nil
}

func (s *Server) Reconfigure(ctx context.Context, _ *pb.ReconfigureRequest) (*pb.ReconfigureResponse, error) {
	if err := s.svc.Reconfigure(ctx); err != nil {
		return nil, toStatus(err)
	}
	return &pb.ReconfigureResponse{}, nil
}

func (s *Server) Connect(stream pb.AgentService_ConnectServer) error {
	id, err := s.verifier.Identify(stream.Context())
	if err != nil || (!id.Cluster && id.Node == "") {
		return status.Error(codes.PermissionDenied, "Access/permission denied")
	}
	addr := ""
	if p, ok := peer.FromContext(stream.Context()); ok {
		if host, _, err := net.SplitHostPort(p.Addr.String()); err == nil {
			addr = host
		}
	}
	if err := s.ctl.ServeAgent(stream, addr, id.Node); err != nil {
		return status.Error(codes.Aborted, err.Error())
	}
	return nil
}

func (s *Server) CreateStep(ctx context.Context, r *pb.CreateStepRequest) (*pb.CreateStepResponse, error) {
	j, st, err := s.svc.CreateStep(ctx, model.JobID(r.JobId), wire.StepSpecFromPB(r.Spec))
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.CreateStepResponse{Job: wire.JobToPB(j, wire.Listing), Step: wire.StepToPB(st, false)}, nil
}

func (s *Server) CompleteJob(ctx context.Context, r *pb.CompleteJobRequest) (*pb.CompleteJobResponse, error) {
	if err := s.svc.CompleteJob(ctx, model.JobID(r.JobId), int(r.ExitCode), int(r.Signal)); err != nil {
		return nil, toStatus(err)
	}
	return &pb.CompleteJobResponse{}, nil
}

func (s *Server) AttachStep(ctx context.Context, r *pb.AttachStepRequest) (*pb.AttachStepResponse, error) {
	st, err := s.svc.AttachStep(ctx, model.JobID(r.JobId), model.StepID(r.StepId), r.IoAddr, r.IoKey)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.AttachStepResponse{Step: wire.StepToPB(st, false)}, nil
}

func (s *Server) Broadcast(ctx context.Context, r *pb.BroadcastRequest) (*pb.BroadcastResponse, error) {
	nodes, err := s.svc.Broadcast(ctx, model.JobID(r.JobId), service.FetchRequest{
		Addr: r.IoAddr, Key: r.IoKey, Dest: r.Dest, Mode: r.Mode, Force: r.Force, MTime: r.Mtime,
	})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.BroadcastResponse{Nodes: nodes}, nil
}

// StepStats answers sstat.
func (s *Server) StepStats(ctx context.Context, r *pb.StepStatsRequest) (*pb.StepStatsResponse, error) {
	stats, failed, err := s.svc.StepStats(ctx, model.JobID(r.JobId), model.StepID(r.StepId), r.HasStep)
	if err != nil {
		return nil, toStatus(err)
	}
	out := &pb.StepStatsResponse{Errors: failed}
	for _, st := range stats {
		ps := &pb.StepStat{JobId: uint32(st.Job), StepId: int32(st.Step), Node: st.Node, Ntasks: int32(st.NTasks),
			Usage: wire.UsageToPB(&st.Usage)}
		for _, p := range st.Pids {
			ps.Pids = append(ps.Pids, int32(p))
		}
		out.Steps = append(out.Steps, ps)
	}
	return out, nil
}

func (s *Server) CreateJoinToken(ctx context.Context, r *pb.CreateJoinTokenRequest) (*pb.CreateJoinTokenResponse, error) {
	tok, exp, err := s.svc.CreateJoinToken(ctx, service.TokenSpec{TTL: time.Duration(r.TtlSeconds) * time.Second, Nodes: r.Nodes, Uses: int(r.Uses)})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.CreateJoinTokenResponse{Token: tok, Expires: exp}, nil
}

func (s *Server) ListJoinTokens(ctx context.Context, _ *pb.ListJoinTokensRequest) (*pb.ListJoinTokensResponse, error) {
	toks, err := s.svc.ListJoinTokens(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	out := &pb.ListJoinTokensResponse{}
	for _, t := range toks {
		out.Tokens = append(out.Tokens, &pb.JoinTokenInfo{Id: t.ID, Nodes: t.Nodes, Uses: int32(t.MaxUses()), Joined: t.Joined,
			Expires: t.Expires, Created: t.Created, CreatedBy: t.CreatedBy})
	}
	return out, nil
}

func (s *Server) DeleteJoinToken(ctx context.Context, r *pb.DeleteJoinTokenRequest) (*pb.DeleteJoinTokenResponse, error) {
	if err := s.svc.DeleteJoinToken(ctx, r.Id); err != nil {
		return nil, toStatus(err)
	}
	return &pb.DeleteJoinTokenResponse{}, nil
}

func (s *Server) Join(_ context.Context, r *pb.JoinRequest) (*pb.JoinResponse, error) {
	cert, ca, conf, err := s.svc.Join(r.TokenId, r.Secret, r.Node, r.Csr)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.JoinResponse{CertPem: cert, CaPem: ca, SlurmConf: conf}, nil
}

// AcctJobs streams accounting records (sacct).
func (s *Server) AcctJobs(r *pb.AcctJobsRequest, stream pb.Drover_AcctJobsServer) error {
	return toStatus(s.svc.AcctJobs(stream.Context(), wire.AcctQueryFromPB(r), func(jobs []*acct.Job) error {
		out := &pb.AcctJobsResponse{Jobs: make([]*pb.AcctJob, len(jobs))}
		for i, j := range jobs {
			out.Jobs[i] = wire.AcctJobToPB(j)
		}
		return stream.Send(out)
	}))
}

// GetAcctDB answers sacctmgr list/show.
func (s *Server) GetAcctDB(ctx context.Context, _ *pb.GetAcctDBRequest) (*pb.GetAcctDBResponse, error) {
	db, err := s.svc.AcctDB(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	b, err := json.Marshal(db)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.GetAcctDBResponse{DbJson: b}, nil
}

// ModifyAcctDB answers sacctmgr add/modify/delete.
func (s *Server) ModifyAcctDB(ctx context.Context, r *pb.ModifyAcctDBRequest) (*pb.ModifyAcctDBResponse, error) {
	var req acctmgr.Request
	if err := json.Unmarshal(r.RequestJson, &req); err != nil {
		return nil, status.Error(codes.InvalidArgument, "malformed request: "+err.Error())
	}
	text, err := s.svc.AcctModify(ctx, &req, r.Commit)
	var warn *acctmgr.Warning
	if errors.As(err, &warn) {
		return &pb.ModifyAcctDBResponse{Text: text, Warning: warn.Text}, nil
	}
	if err != nil {
		return &pb.ModifyAcctDBResponse{Text: text}, toStatus(err)
	}
	return &pb.ModifyAcctDBResponse{Text: text}, nil
}
