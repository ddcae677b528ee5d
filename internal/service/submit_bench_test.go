package service

import (
	"fmt"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/clock"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/state"
)

// BenchmarkSubmitHeldNodes: the service's CPU for one held submission
// (admission, feasibility, the FSM apply; no Raft or transport) in a
// partition of 1, 1,000 and 10,000 idle nodes. The feasibility check
// once built the partition's whole cluster per submission: 2 ms at
// 1,000 nodes, 8-17 ms at 10,000.
func BenchmarkSubmitHeldNodes(b *testing.B) {
	for _, n := range []int{1, 1000, 10000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			store := state.New(1)
			d := &direct{f: fsm.New(store, nil)}
			st := &Settings{ClusterName: "c", MaxArraySize: 1001, FirstJobID: 1, KillWait: 30, SlurmdTimeout: 300,
				MinJobAge: 300, MaxJobCount: 1 << 30}
			var names []string
			for i := range n {
				name := fmt.Sprintf("n%d", i)
				names = append(names, name)
				st.Nodes = append(st.Nodes, &model.Node{Name: name, CPUs: 64, Memory: 16000})
			}
			st.Partitions = []*model.Partition{{Name: "p", Nodes: names, Default: true, MaxTime: model.Unlimited,
				DefaultTime: model.Unset, MaxNodes: model.Unlimited}}
			svc := New(nil, store, d, clock.NewFake(time.Unix(1000, 0)), &notes{}, st)
			if err := svc.InstallConfig(st); err != nil {
				b.Fatal(err)
			}
			for _, name := range names {
				if _, err := d.Apply(fsm.TypeNodeRegister, &fsm.NodeRegister{Node: name, CPUs: 64, Memory: 16000, Now: 1000}); err != nil {
					b.Fatal(err)
				}
			}
			ctx := as(1000)
			b.ResetTimer()
			for range b.N {
				sp := spec()
				sp.Hold = true
				if _, err := svc.SubmitJob(ctx, sp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
