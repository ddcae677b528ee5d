package grpcapi

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/auth/grpcauth"
	"github.com/drover-hpc/drover/internal/clock"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/service"
	"github.com/drover-hpc/drover/internal/state"
	"github.com/drover-hpc/drover/internal/wire"
)

// BenchmarkSubmitNewConnection: one held submission per new connection on
// the Unix socket, as each sbatch process makes it (server and client in
// this process, the FSM without Raft: what the gRPC transport costs both
// sides; compare CPU of the test binary). NumStreamWorkers(8), tried to
// spare each call's goroutine its stack growth, did not lower it.
func BenchmarkSubmitNewConnection(b *testing.B) {
	store := state.New(1)
	st := &service.Settings{
		ClusterName: "c", MaxArraySize: 1001, FirstJobID: 1, KillWait: 30, SlurmdTimeout: 300, MinJobAge: 300,
		Nodes: []*model.Node{{Name: "n1", CPUs: 4, Memory: 8000}},
		Partitions: []*model.Partition{{Name: "debug", Nodes: []string{"n1"}, Default: true, MaxTime: model.Unlimited,
			DefaultTime: model.Unset, MaxNodes: model.Unlimited}},
	}
	svc := service.New(nil, store, &direct{f: fsm.New(store, nil)}, clock.NewFake(time.Unix(1000, 0)), quiet{}, st)
	if err := svc.InstallConfig(st); err != nil {
		b.Fatal(err)
	}
	sock := filepath.Join(b.TempDir(), "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	g := NewGRPC(svc, nil, grpcauth.NewVerifier("tok"), nil, Limits{}, nil)
	go g.Serve(l)
	defer g.Stop()
	env := make([]string, 41)
	for i := range env {
		env[i] = fmt.Sprintf("VAR_%02d=/usr/local/share/some/longer/value/%d:/usr/bin:/bin", i, i)
	}
	spec := wire.SpecToPB(&model.JobSpec{Name: "held", Script: "#!/bin/sh\ntrue\n", WorkDir: "/tmp", Hold: true, Env: env,
		TimeLimit: model.Unset, TimeMin: model.Unset, MinNodes: model.Unset, MaxNodes: model.Unset, NTasks: model.Unset,
		CPUsPerTask: model.Unset, TasksPerNode: model.Unset, MemPerNode: model.Unset, MemPerCPU: model.Unset})
	b.ResetTimer()
	for range b.N {
		cc, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := pb.NewDroverClient(cc).SubmitJob(context.Background(), &pb.SubmitJobRequest{Spec: spec}); err != nil {
			b.Fatal(err)
		}
		cc.Close()
	}
}
