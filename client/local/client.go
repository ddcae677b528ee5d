// Package local is the lean client of the controller on this machine: the
// one API (api.Service) over the controller's Unix socket with the local
// protocol (internal/localwire), so that the Slurm commands link neither
// gRPC nor protobuf. The kernel tells the controller who calls. Remote
// controllers, TLS and tokens are package client's (gRPC).
package local

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/acctmgr"
	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/localwire"
	"github.com/drover-hpc/drover/internal/model"
)

// Client implements api.Service and api.JoinTokens. It keeps one idle
// connection for the next call; calls made at the same time each get
// their own.
type Client struct {
	socket string
	// Fallback, when set, is called before a call returns an error that
	// another transport could get past — a follower's refusal naming the
	// leader, or no controller at the socket — with nothing done: the
	// commands then run again over gRPC, which follows the leader and
	// tries the other controllers.
	Fallback func(error)

	mu        sync.Mutex
	idle      net.Conn
	idleSince time.Time
	// changed: a change went through; from then on Fallback is not
	// called (running the command again would repeat it).
	changed bool
}

// reads are the calls that change nothing.
var reads = map[string]bool{"ListJobs": true, "WatchJobs": true, "ListNodes": true, "ListPartitions": true, "Ping": true,
	"GetConfig": true, "StepStats": true, "AcctJobs": true, "GetAcctDB": true, "Priorities": true,
	"ListReservations": true, "ListJoinTokens": true}

// maxIdle is how long a connection is kept for the next call: below the
// controller's smallest idle timeout (1 s), so that a kept connection is
// never one the controller is closing while a call goes out on it — a
// call whose answer is lost could not be told from one never made.
const maxIdle = 500 * time.Millisecond

var (
	_ api.Service    = (*Client)(nil)
	_ api.JoinTokens = (*Client)(nil)
)

// Timeout bounds a call that has no deadline of its own (as the gRPC
// client's; a watch has none), and the connection's set-up.
const Timeout = 60 * time.Second

// Dial returns a client of the controller listening on socket; it
// connects on the first call.
func Dial(socket string) *Client { return &Client{socket: socket} }

// Close releases the idle connection.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.idle != nil {
		c.idle.Close()
		c.idle = nil
	}
	return nil
}

// conn returns the idle connection (reused) or a new one, connected by
// dl (none if zero; Timeout at most) unless ctx ends first.
func (c *Client) conn(ctx context.Context, dl time.Time) (conn net.Conn, reused bool, err error) {
	c.mu.Lock()
	conn, since := c.idle, c.idleSince
	c.idle = nil
	c.mu.Unlock()
	if conn != nil && time.Since(since) < maxIdle {
		return conn, true, nil
	}
	if conn != nil {
		conn.Close()
	}
	if dl.IsZero() || time.Until(dl) > Timeout {
		dl = time.Now().Add(Timeout)
	}
	conn, err = dialFD(c.socket, dl, ctx.Done())
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		return nil, false, api.ErrNoController
	}
	return conn, false, nil
}

func (c *Client) release(conn net.Conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.idle == nil {
		c.idle, c.idleSince = conn, time.Now()
		return
	}
	conn.Close()
}

// streams are the calls that answer until the caller stops them: no
// deadline of their own, and their connection is not reused. (A summary
// listing answers in chunks too, but ends.)
var streams = map[string]bool{"WatchJobs": true, "AcctJobs": true}

// call makes one call and decodes its answer into out (nil: none). The
// chunks of an answer in several go to chunk.
func (c *Client) call(ctx context.Context, method string, arg, out any, chunk func([]byte) error) error {
	stream := streams[method]
	// The connection keeps the deadline itself (poll's timeout), so a
	// call without one needs no timer: a command's first timer starts
	// the runtime's poller, which nothing else here uses.
	dl, ok := ctx.Deadline()
	if !ok && !stream {
		dl = time.Now().Add(Timeout)
	}
	// The buffers are sized for a usual call (a submission with its
	// script and environment is 1-3 KB): grown from nothing, encoding one
	// took about twenty allocations, and in a process that lives for a
	// few milliseconds their fresh heap pages cost more than the copying.
	req := localwire.Request{Method: method}
	if arg != nil {
		req.Body = localwire.AppendCompact(make([]byte, 0, 4<<10), arg)
	}
	msg := localwire.AppendCompact(make([]byte, 0, len(req.Body)+len(method)+24), &req)
	conn, reused, err := c.conn(ctx, dl)
	if err == nil {
		err = c.exchange(ctx, dl, conn, msg, reused, stream, out, chunk)
		if errors.Is(err, errStale) {
			// The kept connection was closed by the controller (it is
			// restarting) before this call could be written: nothing
			// was done, so the call goes once more on a new one.
			if conn, _, err = c.conn(ctx, dl); err == nil {
				err = c.exchange(ctx, dl, conn, msg, false, stream, out, chunk)
			}
		}
	}
	return c.answerErr(method, err)
}

// errLost is a connection lost after the call was sent; its words are
// ErrNoController's, as over gRPC.
var errLost = errors.New(api.ErrNoController.Error())

// errStale is a kept connection that turned out closed.
var errStale = errors.New("stale connection")

// exchange sends msg on conn and reads the answer by dl (none if zero);
// it owns conn.
func (c *Client) exchange(ctx context.Context, dl time.Time, conn net.Conn, msg []byte, reused, stream bool, out any, chunk func([]byte) error) error {
	_ = conn.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	var w io.Writer = conn
	if !reused {
		// The preface goes with the call, in one write (one read for
		// the controller).
		// Room for the frame too: prefaced appends it to the preface.
		pre := append(make([]byte, 0, localwire.PrefaceLen+4+len(msg)), localwire.Preface()...)
		w = &prefaced{Conn: conn, pre: pre}
	}
	if err := localwire.WriteFrame(w, msg); err != nil {
		if !reused {
			// A controller of another build answers the preface and
			// closes: the call then cannot be written, but the refusal
			// (which sends this command to gRPC) is waiting to be read.
			if b, rerr := localwire.ReadFrame(conn, localwire.MaxAnswer); rerr == nil {
				var a localwire.Answer
				if localwire.DecodeAnswer(b, &a) == nil && a.Err != nil && a.Err.Kind == "build" {
					conn.Close()
					return a.Err.Err()
				}
			}
		}
		conn.Close()
		if reused {
			return errStale
		}
		return api.ErrNoController
	}
	for {
		b, err := localwire.ReadFrame(conn, localwire.MaxAnswer)
		if err != nil {
			conn.Close()
			switch {
			case ctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded):
				if errors.Is(ctx.Err(), context.Canceled) {
					return ctx.Err()
				}
				return errors.New("Socket timed out on send/recv operation")
			case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
				// The call left: it may have been done, so this is not
				// ErrNoController, which says nothing was (Fallback).
				return errLost
			}
			return err
		}
		var a localwire.Answer
		if err := localwire.DecodeAnswer(b, &a); err != nil {
			conn.Close()
			return err
		}
		if a.More {
			if chunk == nil {
				conn.Close()
				return errors.New("malformed answer: a stream's chunk to a call that is none")
			}
			if err := chunk(a.Body); err != nil {
				conn.Close()
				return err
			}
			continue
		}
		if out != nil && len(a.Body) > 0 {
			if err := localwire.DecodeAnswer(a.Body, out); err != nil {
				conn.Close()
				return err
			}
		}
		// Kept for the next call only if the context's end cannot reach
		// it any more (stop reports false once the deadline was cut).
		if !stream && stop() {
			_ = conn.SetDeadline(time.Time{})
			c.release(conn)
		} else {
			conn.Close()
		}
		if a.Err != nil {
			return a.Err.Err()
		}
		return nil
	}
}

// answerErr hands a follower's refusal naming the leader, a failure to
// reach the controller or a controller of another build to Fallback
// first.
// Only while no change went through: running the command again must not
// repeat one.
func (c *Client) answerErr(method string, err error) error {
	nl, notLeader := api.IsNotLeader(err)
	refused := (notLeader && nl.Leader != "") || errors.Is(err, api.ErrNoController) || errors.Is(err, localwire.ErrOtherBuild)
	c.mu.Lock()
	changed := c.changed
	if !reads[method] && !refused && !notLeader {
		c.changed = true
	}
	c.mu.Unlock()
	if refused && !changed && c.Fallback != nil {
		c.Fallback(err)
	}
	return err
}

// SubmitJob commits a job and returns its id.
func (c *Client) SubmitJob(ctx context.Context, spec *model.JobSpec) (model.JobID, error) {
	var r localwire.JobID
	err := c.call(ctx, "SubmitJob", spec, &r, nil)
	return r.ID, err
}

// ListJobs lists jobs without their scripts and environments.
func (c *Client) ListJobs(ctx context.Context, q api.JobQuery) (*api.JobList, error) {
	q.WithSpec = false // never over a transport: see api.JobQuery
	// A summary listing comes in chunks: each is read as soon as it is
	// here, while the next arrive, up to one per CPU at once.
	type part struct {
		l   localwire.JobList
		err error
	}
	var (
		parts []*part
		wg    sync.WaitGroup
		slots = make(chan struct{}, runtime.GOMAXPROCS(0))
	)
	chunk := func(b []byte) error {
		p := &part{}
		parts = append(parts, p)
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			p.err = localwire.DecodeAnswer(b, &p.l)
		}()
		return nil
	}
	var r localwire.JobList
	err := c.call(ctx, "ListJobs", localwire.ListQuery{Q: q}, &r, chunk)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if len(parts) == 0 {
		return r.API()
	}
	out := &api.JobList{}
	for i, p := range parts {
		if p.err != nil {
			return nil, p.err
		}
		l, err := p.l.API()
		if err != nil {
			return nil, err
		}
		if i == 0 {
			out.Jobs, out.Now = make([]*model.Job, 0, len(l.Jobs)*len(parts)), l.Now
		}
		out.Jobs = append(out.Jobs, l.Jobs...)
	}
	return out, nil
}

// WatchJobs streams the jobs on each change until fn returns false.
func (c *Client) WatchJobs(ctx context.Context, ids []model.JobID, fn func([]*model.Job) bool) error {
	stopped := errors.New("stopped")
	err := c.call(ctx, "WatchJobs", localwire.ListQuery{IDs: ids}, nil, func(b []byte) error {
		var l localwire.JobList
		if err := localwire.DecodeAnswer(b, &l); err != nil {
			return err
		}
		jobs, err := l.API()
		if err != nil {
			return err
		}
		if !fn(jobs.Jobs) {
			return stopped
		}
		return nil
	})
	if errors.Is(err, stopped) {
		return nil
	}
	return err
}

// ListNodes lists every node.
func (c *Client) ListNodes(ctx context.Context) ([]*model.Node, error) {
	var r []*model.Node
	err := c.call(ctx, "ListNodes", nil, &r, nil)
	return r, err
}

// ListPartitions lists every partition.
func (c *Client) ListPartitions(ctx context.Context) ([]*model.Partition, error) {
	var r []*model.Partition
	err := c.call(ctx, "ListPartitions", nil, &r, nil)
	return r, err
}

// Signal cancels or signals jobs.
func (c *Client) Signal(ctx context.Context, sel api.JobSelection, sig api.SignalRequest) ([]api.JobResult, error) {
	var r []api.JobResult
	err := c.call(ctx, "SignalJobs", localwire.Selection{Sel: sel, Sig: sig}, &r, nil)
	return r, err
}

// Control holds, releases or requeues jobs.
func (c *Client) Control(ctx context.Context, sel api.JobSelection, action string) ([]api.JobResult, error) {
	var r []api.JobResult
	err := c.call(ctx, "ControlJobs", localwire.Selection{Sel: sel, Action: action}, &r, nil)
	return r, err
}

// UpdateJob changes job fields.
func (c *Client) UpdateJob(ctx context.Context, sel api.JobSelection, fields map[string]string) ([]api.JobResult, error) {
	var r []api.JobResult
	err := c.call(ctx, "UpdateJob", localwire.Selection{Sel: sel, Fields: fields}, &r, nil)
	return r, err
}

// UpdateNodes changes node state.
func (c *Client) UpdateNodes(ctx context.Context, nodes []string, fields map[string]string) error {
	return c.call(ctx, "UpdateNodes", localwire.NodeUpdate{Nodes: nodes, Fields: fields}, nil, nil)
}

// Ping asks the controller how it is (within 5 s, as over gRPC).
func (c *Client) Ping(ctx context.Context) (*api.PingResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var r api.PingResult
	if err := c.call(ctx, "Ping", nil, &r, nil); err != nil {
		return nil, err
	}
	return &r, nil
}

// Config returns the running configuration.
func (c *Client) Config(ctx context.Context) ([]api.KV, error) {
	var r []api.KV
	err := c.call(ctx, "GetConfig", nil, &r, nil)
	return r, err
}

// Reconfigure asks the controller to re-read slurm.conf.
func (c *Client) Reconfigure(ctx context.Context) error {
	return c.call(ctx, "Reconfigure", nil, nil, nil)
}

// CreateStep starts a step in a running job.
func (c *Client) CreateStep(ctx context.Context, job model.JobID, spec *model.StepSpec) (*model.Job, *model.Step, error) {
	var r localwire.StepCreated
	if err := c.call(ctx, "CreateStep", localwire.StepCreate{Job: job, Spec: spec}, &r, nil); err != nil {
		return nil, nil, err
	}
	if r.Job != nil && r.Job.Spec == nil {
		r.Job.Spec = &model.JobSpec{} // as the gRPC client's
	}
	return r.Job, r.Step, nil
}

// CompleteJob releases an allocation.
func (c *Client) CompleteJob(ctx context.Context, job model.JobID, exitCode, signal int) error {
	return c.call(ctx, "CompleteJob", localwire.JobEnd{Job: job, ExitCode: exitCode, Signal: signal}, nil, nil)
}

// AttachStep makes a running step's nodes dial addr.
func (c *Client) AttachStep(ctx context.Context, job model.JobID, step model.StepID, addr, key string) (*model.Step, error) {
	var r *model.Step
	err := c.call(ctx, "AttachStep", localwire.Attach{Job: job, Step: step, Addr: addr, Key: key}, &r, nil)
	return r, err
}

// Broadcast makes the job's nodes fetch a file.
func (c *Client) Broadcast(ctx context.Context, req api.BroadcastRequest) ([]string, error) {
	var r []string
	err := c.call(ctx, "Broadcast", req, &r, nil)
	return r, err
}

// StepStats asks the job's nodes for its running steps' usage (sstat).
func (c *Client) StepStats(ctx context.Context, job model.JobID, step model.StepID, hasStep bool) ([]api.StepStat, []string, error) {
	var r localwire.Stats
	if err := c.call(ctx, "StepStats", localwire.StatsQuery{Job: job, Step: step, HasStep: hasStep}, &r, nil); err != nil {
		return nil, nil, err
	}
	return r.Stats, r.Failed, nil
}

// AcctJobs streams job records from the accounting database (sacct).
func (c *Client) AcctJobs(ctx context.Context, q acct.Query, fn func([]*acct.Job) error) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	return c.call(ctx, "AcctJobs", q, nil, func(b []byte) error {
		var jobs []*acct.Job
		if err := localwire.DecodeAnswer(b, &jobs); err != nil {
			return err
		}
		return fn(jobs)
	})
}

// AcctDB returns the accounting configuration (sacctmgr list/show).
func (c *Client) AcctDB(ctx context.Context) (*model.AcctDB, error) {
	var r model.AcctDB
	if err := c.call(ctx, "GetAcctDB", nil, &r, nil); err != nil {
		return nil, err
	}
	return &r, nil
}

// AcctModify applies a sacctmgr change (or only describes it).
func (c *Client) AcctModify(ctx context.Context, req *acctmgr.Request, commit bool) (string, error) {
	var r localwire.Text
	err := c.call(ctx, "ModifyAcctDB", localwire.AcctChange{Req: req, Commit: commit}, &r, nil)
	var warn *acctmgr.Warning
	if err != nil && !errors.As(err, &warn) {
		return "", err
	}
	return r.Text, err
}

// Diag returns the controller's statistics (sdiag).
func (c *Client) Diag(ctx context.Context, reset bool) (*api.DiagInfo, error) {
	var r api.DiagInfo
	if err := c.call(ctx, "Diag", localwire.Reset{Reset: reset}, &r, nil); err != nil {
		return nil, err
	}
	return &r, nil
}

// Priorities returns the priority factors and fair-share tree.
func (c *Client) Priorities(ctx context.Context) (*api.PriorityInfo, error) {
	var r api.PriorityInfo
	if err := c.call(ctx, "Priorities", nil, &r, nil); err != nil {
		return nil, err
	}
	return &r, nil
}

// ReservationCommand runs scontrol create/update/delete reservation.
func (c *Client) ReservationCommand(ctx context.Context, req *model.ResvRequest) (string, error) {
	var r localwire.Text
	err := c.call(ctx, "ReservationCommand", req, &r, nil)
	return r.Text, err
}

// ListReservations returns every reservation and the controller's clock.
func (c *Client) ListReservations(ctx context.Context) ([]*model.Reservation, int64, error) {
	var r localwire.Reservations
	err := c.call(ctx, "ListReservations", nil, &r, nil)
	return r.List, r.Now, err
}

// CreateJoinToken makes a join token (admins only).
func (c *Client) CreateJoinToken(ctx context.Context, spec api.TokenSpec) (string, int64, error) {
	var r localwire.TokenMade
	err := c.call(ctx, "CreateJoinToken", spec, &r, nil)
	return r.Token, r.Expires, err
}

// ListJoinTokens lists the join tokens that have not expired.
func (c *Client) ListJoinTokens(ctx context.Context) ([]*model.JoinToken, error) {
	var r []*model.JoinToken
	err := c.call(ctx, "ListJoinTokens", nil, &r, nil)
	return r, err
}

// DeleteJoinToken revokes a join token (admins only).
func (c *Client) DeleteJoinToken(ctx context.Context, id string) error {
	return c.call(ctx, "DeleteJoinToken", localwire.Text{Text: id}, nil, nil)
}

// prefaced is a new connection whose first write carries the preface.
type prefaced struct {
	net.Conn
	pre []byte
}

func (p *prefaced) Write(b []byte) (int, error) {
	if p.pre == nil {
		return p.Conn.Write(b)
	}
	buf := append(p.pre, b...)
	p.pre = nil
	n, err := p.Conn.Write(buf)
	return max(n-(len(buf)-len(b)), 0), err
}
