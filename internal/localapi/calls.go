package localapi

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/acctmgr"
	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/localwire"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/wire"
)

// handler answers one call: body is its argument; a stream sends its
// chunks with send and returns nil after the last.
type handler func(s *Server, ctx context.Context, body []byte, send func(any) error) (any, error)

// streams are the calls that answer in chunks; each is the last call on
// its connection, and is not timed in sdiag (an agent's or a watch's
// length says nothing about the controller), as on gRPC.
var streams = map[string]bool{"WatchJobs": true, "AcctJobs": true}

// arg decodes a call's argument.
func arg[T any](body []byte) (T, error) {
	var v T
	if len(body) == 0 {
		return v, nil
	}
	err := localwire.Decode(body, &v)
	return v, err
}

// call runs one request and writes its answer; false ends the connection.
func (s *Server) call(ctx context.Context, c net.Conn, id *api.Identity, req *localwire.Request) bool {
	h := calls[req.Method]
	if h == nil {
		_ = s.answer(c, &localwire.Answer{Err: &localwire.Error{Kind: "api", Code: int(api.CodeInvalid),
			Msg: "unknown call " + req.Method + " (the controller is older than the commands?)"}})
		return true
	}
	if !streams[req.Method] {
		// The call's answer is built and held until written: counted
		// per user (MaxUserCalls). A stream's chunks are small, and a
		// watch lasts as long as the job it waits for.
		if !s.mem.enter(id.UID, time.Now().Add(s.lim.IO)) {
			s.log.Warn("local call refused: the user has its most calls answering at once",
				"uid", id.UID, "call", req.Method, "bound", MaxUserCalls)
			return s.answer(c, &localwire.Answer{Err: localwire.ToError(api.ErrTryAgain)}) == nil
		}
		defer s.mem.leave(id.UID)
	}
	t0 := time.Now()
	var sendErr error
	var sending time.Duration // in chunks' writes: the client's pace, not the controller's work
	send := func(v any) error {
		t := time.Now()
		sendErr = s.body(c, &localwire.Answer{More: true}, v)
		sending += time.Since(t)
		return sendErr
	}
	if streams[req.Method] {
		// The client sends nothing while a stream runs: a read that
		// returns means it left, and the stream stops.
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			var b [1]byte
			_, _ = c.Read(b[:])
			cancel()
		}()
	}
	res, err := calls[req.Method](s, ctx, req.Body, send)
	if !streams[req.Method] {
		// As a single answer's write, a listing's chunks' are not timed.
		s.stats.Record(req.Method, id, time.Since(t0)-sending)
	}
	if sendErr != nil {
		return false
	}
	if werr := s.body(c, &localwire.Answer{Err: localwire.ToError(err)}, res); werr != nil {
		return false
	}
	return !streams[req.Method]
}

// parts are a body already in the compact form, in pieces.
type parts [][]byte

// body writes answer a with v as its body.
func (s *Server) body(c net.Conn, a *localwire.Answer, v any) error {
	if p, ok := v.(parts); ok {
		return s.answerParts(c, a, p)
	}
	if v != nil {
		b, err := localwire.Encode(v)
		if err != nil && a.Err == nil {
			a.Err = localwire.ToError(err)
		}
		a.Body = b
	}
	return s.answer(c, a)
}

var calls map[string]handler

func init() {
	calls = map[string]handler{
		"SubmitJob": func(s *Server, ctx context.Context, b []byte, _ func(any) error) (any, error) {
			spec, err := arg[*model.JobSpec](b)
			if err != nil {
				return nil, err
			}
			if spec == nil {
				spec = &model.JobSpec{}
			}
			id, err := s.svc.SubmitJob(ctx, spec)
			return localwire.JobID{ID: id}, err
		},
		"ListJobs": func(s *Server, ctx context.Context, b []byte, send func(any) error) (any, error) {
			a, err := arg[localwire.ListQuery](b)
			if err != nil {
				return nil, err
			}
			q := a.Q
			q.WithSpec = false // scripts and environments never travel in a listing
			l, err := s.svc.ListJobs(ctx, q)
			if err != nil {
				return nil, err
			}
			if q.Summary && !q.WithSteps {
				// squeue's listing: in chunks, which the command reads
				// while the next arrive.
				_, err := s.lists.listing(l.Jobs, l.Now, len(q.IDs) == 0, func(p ...[]byte) error { return send(parts(p)) })
				return nil, err
			}
			return listing(l.Jobs, l.Now, q), nil
		},
		"WatchJobs": func(s *Server, ctx context.Context, b []byte, send func(any) error) (any, error) {
			a, err := arg[localwire.ListQuery](b)
			if err != nil {
				return nil, err
			}
			err = s.svc.WatchJobs(ctx, a.IDs, func(jobs []*model.Job) bool {
				return send(listing(jobs, 0, api.JobQuery{Summary: true, WithSteps: true})) == nil
			})
			return nil, err
		},
		"ListNodes": func(s *Server, ctx context.Context, _ []byte, _ func(any) error) (any, error) {
			nodes, err := s.svc.ListNodes(ctx)
			if err != nil {
				return nil, err
			}
			out := make([]*model.Node, len(nodes))
			for i, n := range nodes {
				out[i] = viewNode(n)
			}
			return out, nil
		},
		"ListPartitions": func(s *Server, ctx context.Context, _ []byte, _ func(any) error) (any, error) {
			return s.svc.ListPartitions(ctx)
		},
		"SignalJobs": func(s *Server, ctx context.Context, b []byte, _ func(any) error) (any, error) {
			a, err := arg[localwire.Selection](b)
			if err != nil {
				return nil, err
			}
			return s.svc.Signal(ctx, a.Sel, a.Sig)
		},
		"ControlJobs": func(s *Server, ctx context.Context, b []byte, _ func(any) error) (any, error) {
			a, err := arg[localwire.Selection](b)
			if err != nil {
				return nil, err
			}
			return s.svc.Control(ctx, a.Sel, a.Action)
		},
		"UpdateJob": func(s *Server, ctx context.Context, b []byte, _ func(any) error) (any, error) {
			a, err := arg[localwire.Selection](b)
			if err != nil {
				return nil, err
			}
			return s.svc.UpdateJob(ctx, a.Sel, a.Fields)
		},
		"UpdateNodes": func(s *Server, ctx context.Context, b []byte, _ func(any) error) (any, error) {
			a, err := arg[localwire.NodeUpdate](b)
			if err != nil {
				return nil, err
			}
			return nil, s.svc.UpdateNodes(ctx, a.Nodes, a.Fields)
		},
		"Ping": func(s *Server, ctx context.Context, _ []byte, _ func(any) error) (any, error) {
			return s.svc.Ping(ctx)
		},
		"GetConfig": func(s *Server, ctx context.Context, _ []byte, _ func(any) error) (any, error) {
			return s.svc.Config(ctx)
		},
		"Reconfigure": func(s *Server, ctx context.Context, _ []byte, _ func(any) error) (any, error) {
			return nil, s.svc.Reconfigure(ctx)
		},
		"CreateStep": func(s *Server, ctx context.Context, b []byte, _ func(any) error) (any, error) {
			a, err := arg[localwire.StepCreate](b)
			if err != nil {
				return nil, err
			}
			if a.Spec == nil {
				a.Spec = &model.StepSpec{}
			}
			j, st, err := s.svc.CreateStep(ctx, a.Job, a.Spec)
			if err != nil {
				return nil, err
			}
			return localwire.StepCreated{Job: viewJob(j, wire.Listing), Step: viewStep(st)}, nil
		},
		"CompleteJob": func(s *Server, ctx context.Context, b []byte, _ func(any) error) (any, error) {
			a, err := arg[localwire.JobEnd](b)
			if err != nil {
				return nil, err
			}
			return nil, s.svc.CompleteJob(ctx, a.Job, a.ExitCode, a.Signal)
		},
		"AttachStep": func(s *Server, ctx context.Context, b []byte, _ func(any) error) (any, error) {
			a, err := arg[localwire.Attach](b)
			if err != nil {
				return nil, err
			}
			st, err := s.svc.AttachStep(ctx, a.Job, a.Step, a.Addr, a.Key)
			if err != nil {
				return nil, err
			}
			return viewStep(st), nil
		},
		"Broadcast": func(s *Server, ctx context.Context, b []byte, _ func(any) error) (any, error) {
			a, err := arg[api.BroadcastRequest](b)
			if err != nil {
				return nil, err
			}
			return s.svc.Broadcast(ctx, a)
		},
		"StepStats": func(s *Server, ctx context.Context, b []byte, _ func(any) error) (any, error) {
			a, err := arg[localwire.StatsQuery](b)
			if err != nil {
				return nil, err
			}
			stats, failed, err := s.svc.StepStats(ctx, a.Job, a.Step, a.HasStep)
			return localwire.Stats{Stats: stats, Failed: failed}, err
		},
		"AcctJobs": func(s *Server, ctx context.Context, b []byte, send func(any) error) (any, error) {
			q, err := arg[acct.Query](b)
			if err != nil {
				return nil, err
			}
			return nil, s.svc.AcctJobs(ctx, q, func(jobs []*acct.Job) error { return send(jobs) })
		},
		"GetAcctDB": func(s *Server, ctx context.Context, _ []byte, _ func(any) error) (any, error) {
			return s.svc.AcctDB(ctx)
		},
		"ModifyAcctDB": func(s *Server, ctx context.Context, b []byte, _ func(any) error) (any, error) {
			a, err := arg[localwire.AcctChange](b)
			if err != nil {
				return nil, err
			}
			if a.Req == nil {
				return nil, &api.Error{Code: api.CodeInvalid, Msg: "malformed request: no change"}
			}
			text, err := s.svc.AcctModify(ctx, a.Req, a.Commit)
			var warn *acctmgr.Warning
			if err != nil && !errors.As(err, &warn) {
				return nil, err
			}
			return localwire.Text{Text: text}, err
		},
		"Diag": func(s *Server, ctx context.Context, b []byte, _ func(any) error) (any, error) {
			a, err := arg[localwire.Reset](b)
			if err != nil {
				return nil, err
			}
			d, err := s.svc.Diag(ctx, a.Reset)
			if err != nil {
				return nil, err
			}
			if a.Reset {
				s.stats.Reset()
			}
			d.RPCByType, d.RPCByUser = s.stats.Snapshot()
			return d, nil
		},
		"Priorities": func(s *Server, ctx context.Context, _ []byte, _ func(any) error) (any, error) {
			p, err := s.svc.Priorities(ctx)
			if err != nil {
				return nil, err
			}
			return p, nil
		},
		"ReservationCommand": func(s *Server, ctx context.Context, b []byte, _ func(any) error) (any, error) {
			a, err := arg[*model.ResvRequest](b)
			if err != nil {
				return nil, err
			}
			if a == nil {
				a = &model.ResvRequest{}
			}
			name, err := s.svc.ReservationCommand(ctx, a)
			return localwire.Text{Text: name}, err
		},
		"ListReservations": func(s *Server, ctx context.Context, _ []byte, _ func(any) error) (any, error) {
			list, now, err := s.svc.ListReservations(ctx)
			return localwire.Reservations{List: list, Now: now}, err
		},
		"CreateJoinToken": func(s *Server, ctx context.Context, b []byte, _ func(any) error) (any, error) {
			a, err := arg[api.TokenSpec](b)
			if err != nil {
				return nil, err
			}
			tok, exp, err := s.svc.CreateJoinToken(ctx, a)
			return localwire.TokenMade{Token: tok, Expires: exp}, err
		},
		"ListJoinTokens": func(s *Server, ctx context.Context, _ []byte, _ func(any) error) (any, error) {
			toks, err := s.svc.ListJoinTokens(ctx)
			if err != nil {
				return nil, err
			}
			// No secrets' hashes; Uses is the bound in force.
			out := make([]*model.JoinToken, len(toks))
			for i, t := range toks {
				out[i] = &model.JoinToken{ID: t.ID, Nodes: t.Nodes, Uses: t.MaxUses(), Joined: t.Joined, Expires: t.Expires,
					Created: t.Created, CreatedBy: t.CreatedBy}
			}
			return out, nil
		},
		"DeleteJoinToken": func(s *Server, ctx context.Context, b []byte, _ func(any) error) (any, error) {
			a, err := arg[localwire.Text](b)
			if err != nil {
				return nil, err
			}
			return nil, s.svc.DeleteJoinToken(ctx, a.Text)
		},
	}
}
