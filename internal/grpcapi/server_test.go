package grpcapi

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc/peer"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/auth/grpcauth"
	"github.com/drover-hpc/drover/internal/clock"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/service"
	"github.com/drover-hpc/drover/internal/state"
)

// direct commits straight to an FSM.
type direct struct {
	f     *fsm.FSM
	index uint64
}

func (d *direct) Apply(t fsm.Type, body any) (any, error) {
	data, err := fsm.Encode(t, body)
	if err != nil {
		return nil, err
	}
	d.index++
	res := d.f.Apply(d.index, data)
	if err, ok := res.(error); ok {
		return nil, err
	}
	return res, nil
}

// quiet is a Notifier that does nothing: these tests run no nodes.
type quiet struct{ service.Notifier }

func (quiet) Kick() {}

// as is the context a local caller's call reaches the handlers with: the
// adapter has put the caller's identity in it.
func as(uid uint32) context.Context {
	ctx := peer.NewContext(context.Background(), &peer.Peer{
		Addr: &net.UnixAddr{Name: "@", Net: "unix"}, AuthInfo: grpcauth.PeerInfo{Local: true, UID: uid, GID: uid},
	})
	ctx, _ = (&Server{verifier: grpcauth.NewVerifier("tok")}).identify(ctx)
	return ctx
}

// A job's batch script and environment reach only its owner and
// operators, even through a raw API client asking for the full spec.
func TestListJobsFullSpecOnlyForOwner(t *testing.T) {
	store := state.New(1)
	d := &direct{f: fsm.New(store, nil)}
	st := &service.Settings{
		ClusterName: "c", MaxArraySize: 1001, FirstJobID: 1, KillWait: 30, SlurmdTimeout: 300, MinJobAge: 300,
		Nodes: []*model.Node{{Name: "n1", CPUs: 4, Memory: 8000}},
		Partitions: []*model.Partition{{Name: "debug", Nodes: []string{"n1"}, Default: true, MaxTime: model.Unlimited,
			DefaultTime: model.Unset, MaxNodes: model.Unlimited}},
	}
	svc := service.New(nil, store, d, clock.NewFake(time.Unix(1000, 0)), quiet{}, st)
	if err := svc.InstallConfig(st); err != nil {
		t.Fatal(err)
	}
	spec := &model.JobSpec{Script: "#!/bin/sh\necho secret-script\n", Env: []string{"API_TOKEN=hunter2"}, WorkDir: "/tmp",
		TimeLimit: model.Unset, TimeMin: model.Unset, MinNodes: model.Unset, MaxNodes: model.Unset, NTasks: model.Unset,
		CPUsPerTask: model.Unset, TasksPerNode: model.Unset, MemPerNode: model.Unset, MemPerCPU: model.Unset}
	if _, err := svc.SubmitJob(as(1000), spec); err != nil {
		t.Fatal(err)
	}
	srv := &Server{svc: svc}
	for _, c := range []struct {
		uid  uint32
		full bool
	}{{1000, true}, {0, true}, {1001, false}} {
		r, err := srv.ListJobs(as(c.uid), &pb.ListJobsRequest{})
		if err != nil || len(r.Jobs) != 1 || r.Jobs[0].Spec == nil {
			t.Fatalf("uid %d: %v %v", c.uid, r, err)
		}
		s := r.Jobs[0].Spec
		if got := s.Script != "" || len(s.Env) > 0; got != c.full {
			t.Errorf("uid %d sees script/env: %v, want %v (script %q env %q)", c.uid, got, c.full, s.Script, s.Env)
		}
		if s.WorkDir != "/tmp" {
			t.Errorf("uid %d: the rest of the spec is missing: %+v", c.uid, s)
		}
	}
}
