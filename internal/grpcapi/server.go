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
	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/auth/grpcauth"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/nodeproto"
	"github.com/drover-hpc/drover/internal/rpcstats"
	"github.com/drover-hpc/drover/internal/wire"
)

// Backend is what the gRPC services call: the one API, join tokens, and
// node joining (which authenticates by the token it carries).
type Backend interface {
	api.Service
	api.JoinTokens
	Join(tokenID, secret, node string, csr []byte) (certPEM, caPEM []byte, conf string, err error)
}

// Server implements pb.DroverServer and pb.AgentServiceServer.
type Server struct {
	pb.UnimplementedDroverServer
	pb.UnimplementedAgentServiceServer
	svc      Backend
	nodes    nodeproto.Controller
	verifier *grpcauth.Verifier
	rpc      *rpcstats.Stats
	unproven *grpcauth.Probation
	answers  *userAnswers // nil: unbounded
}

// NewGRPC builds a gRPC server carrying both services, with peer-credential
// authentication on Unix sockets. Its calls are counted in stats, which
// the other adapters share (nil: counters of its own).
func NewGRPC(svc Backend, nodes nodeproto.Controller, v *grpcauth.Verifier, tcpTLS credentials.TransportCredentials, lim Limits, stats *rpcstats.Stats) *grpc.Server {
	if stats == nil {
		stats = rpcstats.New()
	}
	s := &Server{svc: svc, nodes: nodes, verifier: v, rpc: stats, unproven: lim.Probation,
		answers: newUserAnswers(lim.UserAnswers, lim.Handshake, lim.Exempt)}
	creds := grpcauth.PeerCreds{TLS: tcpTLS}
	if s.answers != nil {
		creds.Wrap = s.answers.wrap
	}
	opts := append([]grpc.ServerOption{grpc.Creds(creds), grpc.MaxRecvMsgSize(64 << 20), grpc.MaxSendMsgSize(256 << 20),
		grpc.InitialWindowSize(8 << 20), grpc.InitialConnWindowSize(16 << 20), grpc.WriteBufferSize(256 << 10),
		grpc.UnaryInterceptor(s.unary), grpc.StreamInterceptor(s.stream)}, lim.ServerOptions()...)
	g := grpc.NewServer(opts...)
	pb.RegisterDroverServer(g, s)
	pb.RegisterAgentServiceServer(g, s)
	return g
}

// identify establishes the caller from the connection (Unix peer
// credentials, node certificate, cluster token) and hands it to the
// service as a plain value; an unverified caller goes on anonymous, and
// the service refuses what needs a caller.
func (s *Server) identify(ctx context.Context) (context.Context, *api.Identity) {
	id, err := s.verifier.Identify(ctx)
	if err != nil {
		return ctx, nil
	}
	s.unproven.Proven(ctx)
	return api.WithIdentity(ctx, id), id
}

// identified is a server stream whose context carries the caller.
type identified struct {
	grpc.ServerStream
	ctx context.Context
}

func (s identified) Context() context.Context { return s.ctx }

func (s *Server) stream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	ctx, _ := s.identify(ss.Context())
	return h(srv, identified{&firstRecv{ServerStream: ss}, ctx})
}

func toStatus(err error) error {
	if err == nil {
		return nil
	}
	if nl, ok := api.IsNotLeader(err); ok {
		return notLeaderStatus(nl)
	}
	if e, ok := api.IsError(err); ok {
		code := codes.InvalidArgument
		switch e.Code {
		case api.CodeDenied:
			code = codes.PermissionDenied
		case api.CodeNotFound:
			code = codes.NotFound
		case api.CodeUnavailable:
			code = codes.Unavailable
		case api.CodeBusy:
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
	// The full spec carries the batch script and the environment (tokens,
	// passwords): the service keeps them for the owner and operators.
	full := !r.Summary && !r.WithoutSpec
	l, err := s.svc.ListJobs(ctx, api.JobQuery{IDs: jobIDs(r.Ids), IncludeAll: r.IncludeFinished, Summary: r.Summary,
		WithSteps: r.WithSteps, WithSpec: full})
	if err != nil {
		return nil, toStatus(err)
	}
	switch {
	case r.Summary:
		return wire.SummaryListing(l.Jobs, l.Now, r.WithSteps), nil
	case r.WithoutSpec:
		return &pb.ListJobsResponse{Jobs: jobsToPB(l.Jobs, wire.Listing), Now: l.Now}, nil
	}
	return &pb.ListJobsResponse{Jobs: jobsToPB(l.Jobs, wire.Full), Now: l.Now}, nil
}

func (s *Server) WatchJobs(r *pb.WatchJobsRequest, stream pb.Drover_WatchJobsServer) error {
	var sendErr error
	err := s.svc.WatchJobs(stream.Context(), jobIDs(r.Ids), func(jobs []*model.Job) bool {
		sendErr = stream.Send(wire.SummaryListing(jobs, 0, true))
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

func selectionFromPB(sel *pb.JobSelection) api.JobSelection {
	out := api.JobSelection{UID: -1}
	if sel == nil {
		return out
	}
	out.User, out.UID, out.Name, out.Partition = sel.User, sel.Uid, sel.Name, sel.Partition
	out.Nodes, out.Account, out.QOS = sel.Nodes, sel.Account, sel.Qos
	for _, st := range sel.States {
		out.States = append(out.States, model.JobState(st))
	}
	for _, t := range sel.Targets {
		tg := api.JobTarget{ID: model.JobID(t.Id), Raw: t.Raw, HasStep: t.HasStep, Step: model.StepID(t.Step)}
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

func resultsToPB(rs []api.JobResult, err error) (*pb.JobResultsResponse, error) {
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
	return resultsToPB(s.svc.Signal(ctx, selectionFromPB(r.Selection), api.SignalRequest{Signal: int(r.Signal), BatchOnly: r.BatchOnly, Full: r.Full}))
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
	r, err := s.svc.Ping(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	out := &pb.PingResponse{}
	for _, c := range r.Controllers {
		out.Controllers = append(out.Controllers, &pb.ControllerStatus{Host: c.Host, Primary: c.Primary, Up: c.Up, Leader: c.Leader})
	}
	return out, nil
}

func (s *Server) GetConfig(ctx context.Context, _ *pb.GetConfigRequest) (*pb.GetConfigResponse, error) {
	kvs, err := s.svc.Config(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	out := &pb.GetConfigResponse{}
	for _, kv := range kvs {
		out.Items = append(out.Items, &pb.KV{Key: kv.Key, Value: kv.Value})
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
	if err := nodeproto.Serve(s.nodes, stream, addr, id.Node); err != nil {
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
	nodes, err := s.svc.Broadcast(ctx, api.BroadcastRequest{
		Job: model.JobID(r.JobId), Addr: r.IoAddr, Key: r.IoKey, Dest: r.Dest, Mode: r.Mode, Force: r.Force, MTime: r.Mtime,
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
	tok, exp, err := s.svc.CreateJoinToken(ctx, api.TokenSpec{TTL: time.Duration(r.TtlSeconds) * time.Second, Nodes: r.Nodes, Uses: int(r.Uses)})
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

func (s *Server) Join(ctx context.Context, r *pb.JoinRequest) (*pb.JoinResponse, error) {
	cert, ca, conf, err := s.svc.Join(r.TokenId, r.Secret, r.Node, r.Csr)
	if err != nil {
		return nil, toStatus(err)
	}
	s.unproven.Proven(ctx)
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

// ReservationCommand answers scontrol create/update/delete reservation.
func (s *Server) ReservationCommand(ctx context.Context, r *pb.ReservationCommandRequest) (*pb.ReservationCommandResponse, error) {
	var req model.ResvRequest
	if err := json.Unmarshal(r.RequestJson, &req); err != nil {
		return nil, status.Error(codes.InvalidArgument, "malformed request: "+err.Error())
	}
	name, err := s.svc.ReservationCommand(ctx, &req)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.ReservationCommandResponse{Name: name}, nil
}

// ListReservations answers scontrol show reservation and sinfo -T.
func (s *Server) ListReservations(ctx context.Context, _ *pb.ListReservationsRequest) (*pb.ListReservationsResponse, error) {
	list, now, err := s.svc.ListReservations(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	b, err := json.Marshal(list)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.ListReservationsResponse{ReservationsJson: b, Now: now}, nil
}
