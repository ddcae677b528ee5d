package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/acctmgr"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/auth/grpcauth"
	"github.com/drover-hpc/drover/internal/grpcapi/leaderstatus"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/wire"
)

// Options says how to reach the controller.
type Options struct {
	Socket string // Unix socket path; preferred when it exists
	Addr   string // host:port of the TCP API
	Token  string // cluster or user token for TCP
	// CAFile is the cluster CA certificate (PEM) that the TCP port's
	// certificate must chain to.
	CAFile string
	// Backups are the TCP addresses of the other controllers (slurm.conf's
	// later SlurmctldHost lines), tried in order when the ones before them
	// cannot be reached.
	Backups []string
}

// Client implements the one API (api.Service, api.JoinTokens) over gRPC:
// it turns api's requests into protobuf messages and status codes back
// into api's errors.
type Client struct {
	o      Options
	dialed string // the TCP address of conn; "" when it is the Unix socket
	conn   *grpc.ClientConn
	api    pb.DroverClient
	// fallbacks are tried in order when conn's controller cannot be
	// reached: Addr after the socket, then the backups.
	fallbacks []string

	mu     sync.Mutex
	others map[string]*grpc.ClientConn // leaders that followers named, by address
}

var (
	_ api.Service    = (*Client)(nil)
	_ api.JoinTokens = (*Client)(nil)
)

// dialTimeout bounds each TCP connection attempt, so that a controller
// that is down (or a leader a follower named that is unreachable) costs
// seconds, not the call's whole deadline.
const dialTimeout = 10 * time.Second

func baseOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256 << 20)),
		// Large windows: a 10,000-job listing is a few MB, and HTTP/2's
		// default 64 KiB window would turn it into dozens of round trips.
		grpc.WithInitialWindowSize(8 << 20), grpc.WithInitialConnWindowSize(16 << 20)}
}

// Dial connects lazily (the first call connects).
func Dial(o Options) (*Client, error) {
	if o.Socket != "" {
		if _, err := os.Stat(o.Socket); err == nil || o.Addr == "" {
			sock := o.Socket
			opts := append(baseOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()),
				grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
					var d net.Dialer
					return d.DialContext(ctx, "unix", sock)
				}))
			conn, err := grpc.NewClient("unix://"+sock, opts...)
			if err != nil {
				return nil, err
			}
			c := &Client{o: o, conn: conn, api: pb.NewDroverClient(conn), fallbacks: o.Backups}
			if o.Addr != "" {
				c.fallbacks = append([]string{o.Addr}, o.Backups...)
			}
			return c, nil
		}
	}
	if o.Addr == "" {
		return nil, api.ErrNoController
	}
	conn, err := dialTCP(o, o.Addr)
	if err != nil {
		return nil, err
	}
	return &Client{o: o, dialed: o.Addr, conn: conn, api: pb.NewDroverClient(conn), fallbacks: o.Backups}, nil
}

// dialTCP connects (lazily) to a controller's TCP API at addr with the
// client's credentials: the cluster CA to verify it and the token, if any,
// to name the caller.
func dialTCP(o Options, addr string) (*grpc.ClientConn, error) {
	pemData, err := os.ReadFile(o.CAFile)
	if err != nil {
		return nil, fmt.Errorf("%w (no cluster CA to verify %s: %v; set DROVER_CA)", api.ErrNoController, addr, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemData) {
		return nil, fmt.Errorf("%w (no certificate in %s)", api.ErrNoController, o.CAFile)
	}
	opts := append(baseOptions(),
		grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS13})),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			d := net.Dialer{Timeout: dialTimeout}
			return d.DialContext(ctx, "tcp", addr)
		}))
	if o.Token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(grpcauth.TokenCreds(o.Token)))
	}
	return grpc.NewClient("passthrough:///"+addr, opts...)
}

// Close releases the connections.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for addr, conn := range c.others {
		conn.Close()
		delete(c.others, addr)
	}
	return c.conn.Close()
}

// change makes a call that changes state. A follower refuses it, naming
// the leader; when that is another controller than the one dialled, the
// call is made there once more, over TCP with this client's credentials
// (the way Slurm's commands move on to the next SlurmctldHost). One
// redirect at most: a second refusal, or one naming the controller
// already asked, is returned as it is, so controllers that disagree
// about the leader cannot bounce a command between them. Reads need none
// of this: any controller serves them from its own state.
func change[Q, R any](ctx context.Context, c *Client, call func(pb.DroverClient, context.Context, Q, ...grpc.CallOption) (R, error), req Q) (R, error) {
	var r R
	asked, err := c.reach(ctx, func(d pb.DroverClient) (err error) {
		r, err = call(d, ctx, req)
		return err
	})
	leader, ok := leaderstatus.Leader(err)
	if !ok || leader == "" {
		return r, err
	}
	addr := c.leaderAddr(leader)
	if addr == asked {
		return r, err
	}
	there, derr := c.connTo(addr)
	if derr != nil {
		return r, err
	}
	r2, err2 := call(there, ctx, req)
	if err2 != nil && errors.Is(fromStatus(err2), api.ErrNoController) {
		// The leader cannot be reached: the follower's words, which name
		// it, say more than "unable to contact".
		return r, err
	}
	return r2, err2
}

// read makes a call that only reads: any controller that can be reached
// answers it.
func read[Q, R any](ctx context.Context, c *Client, call func(pb.DroverClient, context.Context, Q, ...grpc.CallOption) (R, error), req Q) (R, error) {
	var r R
	_, err := c.reach(ctx, func(d pb.DroverClient) (err error) {
		r, err = call(d, ctx, req)
		return err
	})
	return r, err
}

// reach runs fn on the controller dialled and, while the one asked cannot
// be reached, on each fallback in turn, the way Slurm's commands try the
// SlurmctldHost lines in order. Only a failure to connect moves on (the
// call never left, so nothing is done twice); each try is one dial bounded
// by dialTimeout, and ctx bounds them all. It returns the address that
// answered ("" for the Unix socket) and fn's error.
func (c *Client) reach(ctx context.Context, fn func(pb.DroverClient) error) (string, error) {
	addr, err := c.dialed, fn(c.api)
	for _, next := range c.fallbacks {
		if !errors.Is(fromStatus(err), api.ErrNoController) || ctx.Err() != nil {
			break
		}
		stub, derr := c.connTo(next)
		if derr != nil {
			break
		}
		addr, err = next, fn(stub)
	}
	return addr, err
}

// leaderAddr completes a leader's address with the port of the TCP API
// when it names only a host.
func (c *Client) leaderAddr(leader string) string {
	if _, _, err := net.SplitHostPort(leader); err == nil {
		return leader
	}
	if _, port, err := net.SplitHostPort(c.o.Addr); err == nil {
		return net.JoinHostPort(leader, port)
	}
	return leader
}

// connTo returns a stub for the controller at addr, dialling it the
// first time (a client kept for several calls, like srun's, reuses it).
func (c *Client) connTo(addr string) (pb.DroverClient, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if conn := c.others[addr]; conn != nil {
		return pb.NewDroverClient(conn), nil
	}
	conn, err := dialTCP(c.o, addr)
	if err != nil {
		return nil, err
	}
	if c.others == nil {
		c.others = map[string]*grpc.ClientConn{}
	}
	c.others[addr] = conn
	return pb.NewDroverClient(conn), nil
}

// fromStatus turns a gRPC error into one whose text is Slurm's message.
func fromStatus(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	switch st.Code() {
	case codes.Unavailable:
		if leader, ok := leaderstatus.Leader(err); ok {
			return &api.NotLeaderError{Leader: leader}
		}
		if st.Message() == "" || isConnErr(st.Message()) {
			return api.ErrNoController
		}
		if st.Message() == api.ErrTryAgain.Error() {
			return api.ErrTryAgain
		}
	case codes.DeadlineExceeded:
		return errors.New("Socket timed out on send/recv operation")
	case codes.FailedPrecondition:
		if st.Message() == api.ErrStepBusy.Error() {
			return api.ErrStepBusy
		}
	}
	return errors.New(st.Message())
}

func isConnErr(msg string) bool {
	for _, s := range []string{"connection error", "connect:", "no such file", "connection refused", "name resolver"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

func callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, 60*time.Second)
}

// SubmitJob commits a job and returns its id.
func (c *Client) SubmitJob(ctx context.Context, spec *model.JobSpec) (model.JobID, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	r, err := change(ctx, c, pb.DroverClient.SubmitJob, &pb.SubmitJobRequest{Spec: wire.SpecToPB(spec)})
	if err != nil {
		return 0, fromStatus(err)
	}
	return model.JobID(r.JobId), nil
}

func ids32(ids []model.JobID) []uint32 {
	out := make([]uint32, len(ids))
	for i, v := range ids {
		out[i] = uint32(v)
	}
	return out
}

// ListJobs lists jobs without their scripts and environments.
func (c *Client) ListJobs(ctx context.Context, q api.JobQuery) (*api.JobList, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	var out *api.JobList
	_, err := c.reach(ctx, func(d pb.DroverClient) (err error) {
		out, err = listJobs(ctx, d, q)
		return err
	})
	return out, err
}

// WatchJobs streams the jobs on each change until fn returns false.
func (c *Client) WatchJobs(ctx context.Context, ids []model.JobID, fn func([]*model.Job) bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.api.WatchJobs(ctx, &pb.WatchJobsRequest{Ids: ids32(ids)})
	if err != nil {
		return fromStatus(err)
	}
	for {
		r, err := stream.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fromStatus(err)
		}
		if !fn(wire.JobsFromListing(r)) {
			return nil
		}
	}
}

// ListNodes lists every node.
func (c *Client) ListNodes(ctx context.Context) ([]*model.Node, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	r, err := read(ctx, c, pb.DroverClient.ListNodes, &pb.ListNodesRequest{})
	if err != nil {
		return nil, fromStatus(err)
	}
	out := make([]*model.Node, len(r.Nodes))
	for i, n := range r.Nodes {
		out[i] = wire.NodeFromPB(n)
	}
	return out, nil
}

// ListPartitions lists every partition.
func (c *Client) ListPartitions(ctx context.Context) ([]*model.Partition, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	r, err := read(ctx, c, pb.DroverClient.ListPartitions, &pb.ListPartitionsRequest{})
	if err != nil {
		return nil, fromStatus(err)
	}
	out := make([]*model.Partition, len(r.Partitions))
	for i, p := range r.Partitions {
		out[i] = wire.PartitionFromPB(p)
	}
	return out, nil
}

func selToPB(sel api.JobSelection) *pb.JobSelection {
	out := &pb.JobSelection{User: sel.User, Uid: sel.UID, Name: sel.Name, Partition: sel.Partition,
		Nodes: sel.Nodes, Account: sel.Account, Qos: sel.QOS}
	for _, s := range sel.States {
		out.States = append(out.States, uint32(s))
	}
	for _, t := range sel.Targets {
		pt := &pb.JobTarget{Id: uint32(t.ID), Raw: t.Raw, HasTasks: t.Tasks != nil, HasStep: t.HasStep, Step: int32(t.Step)}
		for _, v := range t.Tasks {
			pt.Tasks = append(pt.Tasks, int32(v))
		}
		out.Targets = append(out.Targets, pt)
	}
	return out
}

func results(r *pb.JobResultsResponse, err error) ([]api.JobResult, error) {
	if err != nil {
		return nil, fromStatus(err)
	}
	out := make([]api.JobResult, len(r.Results))
	for i, x := range r.Results {
		out[i] = api.JobResult{Job: x.Job, Error: x.Error}
	}
	return out, nil
}

// Signal cancels or signals jobs.
func (c *Client) Signal(ctx context.Context, sel api.JobSelection, sig api.SignalRequest) ([]api.JobResult, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	return results(change(ctx, c, pb.DroverClient.SignalJobs, &pb.SignalJobsRequest{Selection: selToPB(sel), Signal: int32(sig.Signal), BatchOnly: sig.BatchOnly, Full: sig.Full}))
}

// Control holds, releases or requeues jobs.
func (c *Client) Control(ctx context.Context, sel api.JobSelection, action string) ([]api.JobResult, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	return results(change(ctx, c, pb.DroverClient.ControlJobs, &pb.ControlJobsRequest{Selection: selToPB(sel), Action: action}))
}

// UpdateJob changes job fields.
func (c *Client) UpdateJob(ctx context.Context, sel api.JobSelection, fields map[string]string) ([]api.JobResult, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	return results(change(ctx, c, pb.DroverClient.UpdateJob, &pb.UpdateJobRequest{Selection: selToPB(sel), Fields: fields}))
}

// UpdateNodes changes node state.
func (c *Client) UpdateNodes(ctx context.Context, nodes []string, fields map[string]string) error {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	_, err := change(ctx, c, pb.DroverClient.UpdateNodes, &pb.UpdateNodesRequest{Nodes: nodes, Fields: fields})
	return fromStatus(err)
}

// Ping asks the controller how it is.
func (c *Client) Ping(ctx context.Context) (*api.PingResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	r, err := read(ctx, c, pb.DroverClient.Ping, &pb.PingRequest{})
	if err != nil {
		return nil, fromStatus(err)
	}
	out := &api.PingResult{}
	for _, s := range r.Controllers {
		out.Controllers = append(out.Controllers, api.ControllerStatus{Host: s.Host, Primary: s.Primary, Up: s.Up, Leader: s.Leader})
	}
	return out, nil
}

// Config returns the running configuration.
func (c *Client) Config(ctx context.Context) ([]api.KV, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	r, err := read(ctx, c, pb.DroverClient.GetConfig, &pb.GetConfigRequest{})
	if err != nil {
		return nil, fromStatus(err)
	}
	out := make([]api.KV, len(r.Items))
	for i, kv := range r.Items {
		out[i] = api.KV{Key: kv.Key, Value: kv.Value}
	}
	return out, nil
}

// Reconfigure asks the controller to re-read slurm.conf.
func (c *Client) Reconfigure(ctx context.Context) error {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	_, err := change(ctx, c, pb.DroverClient.Reconfigure, &pb.ReconfigureRequest{})
	return fromStatus(err)
}

// AddrOf joins a host and port.
func AddrOf(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }

// CreateStep starts a step in a running job.
func (c *Client) CreateStep(ctx context.Context, job model.JobID, spec *model.StepSpec) (*model.Job, *model.Step, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	r, err := change(ctx, c, pb.DroverClient.CreateStep, &pb.CreateStepRequest{JobId: uint32(job), Spec: wire.StepSpecToPB(spec)})
	if err != nil {
		return nil, nil, fromStatus(err)
	}
	return wire.JobFromPB(r.Job), wire.StepFromPB(r.Step), nil
}

// CompleteJob releases an allocation.
func (c *Client) CompleteJob(ctx context.Context, job model.JobID, exitCode, signal int) error {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	_, err := change(ctx, c, pb.DroverClient.CompleteJob, &pb.CompleteJobRequest{JobId: uint32(job), ExitCode: int32(exitCode), Signal: int32(signal)})
	return fromStatus(err)
}

// AttachStep makes a running step's nodes dial addr.
func (c *Client) AttachStep(ctx context.Context, job model.JobID, step model.StepID, addr, key string) (*model.Step, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	r, err := change(ctx, c, pb.DroverClient.AttachStep, &pb.AttachStepRequest{JobId: uint32(job), StepId: int32(step), IoAddr: addr, IoKey: key})
	if err != nil {
		return nil, fromStatus(err)
	}
	return wire.StepFromPB(r.Step), nil
}

// Broadcast makes the job's nodes fetch a file.
func (c *Client) Broadcast(ctx context.Context, req api.BroadcastRequest) ([]string, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	r, err := change(ctx, c, pb.DroverClient.Broadcast, &pb.BroadcastRequest{JobId: uint32(req.Job), IoAddr: req.Addr, IoKey: req.Key,
		Dest: req.Dest, Mode: req.Mode, Force: req.Force, Mtime: req.MTime, Size: req.Size})
	if err != nil {
		return nil, fromStatus(err)
	}
	return r.Nodes, nil
}

// StepStats asks the job's nodes for its running steps' usage (sstat).
func (c *Client) StepStats(ctx context.Context, job model.JobID, step model.StepID, hasStep bool) ([]api.StepStat, []string, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	r, err := read(ctx, c, pb.DroverClient.StepStats, &pb.StepStatsRequest{JobId: uint32(job), StepId: int32(step), HasStep: hasStep})
	if err != nil {
		return nil, nil, fromStatus(err)
	}
	out := make([]api.StepStat, 0, len(r.Steps))
	for _, s := range r.Steps {
		st := api.StepStat{Job: model.JobID(s.JobId), Step: model.StepID(s.StepId), Node: s.Node, NTasks: int(s.Ntasks)}
		for _, p := range s.Pids {
			st.Pids = append(st.Pids, int(p))
		}
		if u := wire.UsageFromPB(s.Usage); u != nil {
			st.Usage = *u
		}
		out = append(out, st)
	}
	return out, r.Errors, nil
}

// CreateJoinToken makes a join token for the nodes a hostlist expression
// (or ALL) names, good for spec.Uses joins (0: one per name); admins only.
func (c *Client) CreateJoinToken(ctx context.Context, spec api.TokenSpec) (string, int64, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	r, err := change(ctx, c, pb.DroverClient.CreateJoinToken, &pb.CreateJoinTokenRequest{TtlSeconds: int64(spec.TTL / time.Second), Nodes: spec.Nodes, Uses: int32(spec.Uses)})
	if err != nil {
		return "", 0, fromStatus(err)
	}
	return r.Token, r.Expires, nil
}

// ListJoinTokens lists the join tokens that have not expired (admins
// only), without their secrets' hashes; Uses is the bound in force.
func (c *Client) ListJoinTokens(ctx context.Context) ([]*model.JoinToken, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	r, err := read(ctx, c, pb.DroverClient.ListJoinTokens, &pb.ListJoinTokensRequest{})
	if err != nil {
		return nil, fromStatus(err)
	}
	out := make([]*model.JoinToken, len(r.Tokens))
	for i, t := range r.Tokens {
		out[i] = &model.JoinToken{ID: t.Id, Nodes: t.Nodes, Uses: int(t.Uses), Joined: t.Joined, Expires: t.Expires, Created: t.Created,
			CreatedBy: t.CreatedBy}
	}
	return out, nil
}

// DeleteJoinToken revokes a join token (admins only).
func (c *Client) DeleteJoinToken(ctx context.Context, id string) error {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	if _, err := change(ctx, c, pb.DroverClient.DeleteJoinToken, &pb.DeleteJoinTokenRequest{Id: id}); err != nil {
		return fromStatus(err)
	}
	return nil
}

// AcctJobs streams job records from the accounting database (sacct) to
// fn, one message's chunk at a time.
func (c *Client) AcctJobs(ctx context.Context, q acct.Query, fn func([]*acct.Job) error) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	stream, err := c.api.AcctJobs(ctx, wire.AcctQueryToPB(q))
	if err != nil {
		return acctError(err)
	}
	for {
		r, err := stream.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return acctError(err)
		}
		jobs := make([]*acct.Job, len(r.Jobs))
		for i, j := range r.Jobs {
			jobs[i] = wire.AcctJobFromPB(j)
		}
		if err := fn(jobs); err != nil {
			return err
		}
	}
}

func acctError(err error) error {
	if st, ok := status.FromError(err); ok && st.Message() == api.ErrAcctDisabled.Error() {
		return api.ErrAcctDisabled
	}
	return fromStatus(err)
}

// AcctDB returns the accounting configuration (sacctmgr list/show).
func (c *Client) AcctDB(ctx context.Context) (*model.AcctDB, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	r, err := read(ctx, c, pb.DroverClient.GetAcctDB, &pb.GetAcctDBRequest{})
	if err != nil {
		return nil, fromStatus(err)
	}
	db := &model.AcctDB{}
	if err := json.Unmarshal(r.DbJson, db); err != nil {
		return nil, fmt.Errorf("malformed accounting configuration: %w", err)
	}
	return db, nil
}

// AcctModify applies a sacctmgr change (or only describes it).
func (c *Client) AcctModify(ctx context.Context, req *acctmgr.Request, commit bool) (string, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	b, err := json.Marshal(req)
	if err != nil {
		return "", err
	}
	r, err := change(ctx, c, pb.DroverClient.ModifyAcctDB, &pb.ModifyAcctDBRequest{RequestJson: b, Commit: commit})
	if err != nil {
		return "", fromStatus(err)
	}
	if r.Warning != "" {
		return r.Text, &acctmgr.Warning{Text: r.Warning}
	}
	return r.Text, nil
}

// Diag returns the controller's statistics (sdiag).
func (c *Client) Diag(ctx context.Context, reset bool) (*api.DiagInfo, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	r, err := read(ctx, c, pb.DroverClient.Diag, &pb.DiagRequest{ResetStats: reset})
	if err != nil {
		return nil, fromStatus(err)
	}
	d := &api.DiagInfo{
		Now: r.Now, Since: r.Since, ServerThreads: int(r.ServerThreads), AcctBacklog: int(r.AcctBacklog),
		AcctError: r.AcctError, AcctDisabled: r.AcctDisabled,
		JobsSubmitted: r.JobsSubmitted, JobsStarted: r.JobsStarted, JobsCompleted: r.JobsCompleted,
		JobsCanceled: r.JobsCanceled, JobsFailed: r.JobsFailed,
		JobsPending: int(r.JobsPending), JobsRunning: int(r.JobsRunning),
		SchedLast: r.SchedLastUs, SchedMax: r.SchedMaxUs, SchedTotal: r.SchedTotalUs,
		SchedCycles: r.SchedCycles, SchedDepthSum: r.SchedDepthSum, SchedLastQueue: int(r.SchedLastQueue),
		SchedSince: r.SchedSince,
	}
	conv := func(in []*pb.RPCStat) []api.RPCStat {
		out := make([]api.RPCStat, len(in))
		for i, s := range in {
			out[i] = api.RPCStat{Name: s.Name, UID: s.Uid, Count: s.Count, TotalUs: s.TotalUs}
		}
		return out
	}
	d.RPCByType, d.RPCByUser = conv(r.RpcByType), conv(r.RpcByUser)
	return d, nil
}

// Priorities returns the priority factors and fair-share tree.
func (c *Client) Priorities(ctx context.Context) (*api.PriorityInfo, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	r, err := read(ctx, c, pb.DroverClient.Priorities, &pb.PrioritiesRequest{})
	if err != nil {
		return nil, fromStatus(err)
	}
	out := &api.PriorityInfo{Multifactor: r.Multifactor, FairTree: r.FairTree}
	if w := r.Weights; w != nil {
		out.WAge, out.WFairShare, out.WJobSize, out.WPart, out.WQOS = w.Age, w.Fairshare, w.Jobsize, w.Partition, w.Qos
		out.WTRES = w.Tres
	}
	for _, j := range r.Jobs {
		jp := api.JobPriority{ID: j.DisplayId, JobID: j.JobId, Partition: j.Partition, User: j.User, UID: j.Uid,
			Priority: j.Priority, Age: j.Age, FairShare: j.Fairshare, JobSize: j.Jobsize, Part: j.PartitionFactor, QOS: j.Qos, Nice: int(j.Nice)}
		for _, t := range j.Tres {
			jp.TRES = append(jp.TRES, api.TRESFactor{Name: t.Name, Factor: t.Factor, Weighted: t.Weighted})
		}
		out.Jobs = append(out.Jobs, jp)
	}
	for _, s := range r.Shares {
		out.Shares = append(out.Shares, api.ShareRow{Account: s.Account, User: s.User, Depth: int(s.Depth), RawShares: int(s.RawShares),
			NormShares: s.NormShares, RawUsage: s.RawUsage, EffUsage: s.EffectvUsage, FairShare: s.Fairshare,
			NormUsage: s.NormUsage, LevelFS: s.LevelFs})
	}
	return out, nil
}

// ReservationCommand runs scontrol create/update/delete reservation and
// returns the reservation's name.
func (c *Client) ReservationCommand(ctx context.Context, req *model.ResvRequest) (string, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	b, err := json.Marshal(req)
	if err != nil {
		return "", err
	}
	r, err := change(ctx, c, pb.DroverClient.ReservationCommand, &pb.ReservationCommandRequest{RequestJson: b})
	if err != nil {
		return "", fromStatus(err)
	}
	return r.Name, nil
}

// ListReservations returns every reservation and the controller's clock.
func (c *Client) ListReservations(ctx context.Context) ([]*model.Reservation, int64, error) {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	r, err := read(ctx, c, pb.DroverClient.ListReservations, &pb.ListReservationsRequest{})
	if err != nil {
		return nil, 0, fromStatus(err)
	}
	var out []*model.Reservation
	if err := json.Unmarshal(r.ReservationsJson, &out); err != nil {
		return nil, 0, fmt.Errorf("malformed reservation list: %w", err)
	}
	return out, r.Now, nil
}
