package localapi

import (
	"testing"

	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/localwire"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/wire"
	"github.com/drover-hpc/drover/internal/wiretest"
)

// over is what the local client reads of an answer.
func over[T any](t *testing.T, v any) T {
	t.Helper()
	b, err := localwire.Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := localwire.DecodeAnswer(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestJobsLookTheSameOverBothTransports: a job listed over the local
// socket is the job the gRPC adapter would show, field for field — the
// same cut of secrets and long strings, the same display state and start
// time — whatever fields the model grows.
func TestJobsLookTheSameOverBothTransports(t *testing.T) {
	for _, state := range []model.JobState{model.JobPending, model.JobRunning} {
		j := wiretest.Filled[model.Job]()
		j.State, j.Completing = state, false
		j.Spec.KillInvalidDep = 1
		for _, c := range []struct {
			name string
			q    api.JobQuery
			grpc func() *model.Job
		}{
			{"listing", api.JobQuery{}, func() *model.Job { return wire.JobFromPB(wire.JobToPB(j, wire.Listing)) }},
			{"summary", api.JobQuery{Summary: true}, func() *model.Job {
				return wire.JobsFromListing(wire.SummaryListing([]*model.Job{j}, 0, false))[0]
			}},
			{"summary with steps", api.JobQuery{Summary: true, WithSteps: true}, func() *model.Job {
				return wire.JobsFromListing(wire.SummaryListing([]*model.Job{j}, 0, true))[0]
			}},
		} {
			want := c.grpc()
			b, _ := localwire.Encode(listing([]*model.Job{j}, 0, c.q))
			var l localwire.JobList
			if err := localwire.DecodeAnswer(b, &l); err != nil {
				t.Fatal(err)
			}
			local, err := l.API()
			if err != nil {
				t.Fatal(err)
			}
			for form, got := range map[string]*model.Job{"local": local.Jobs[0]} {
				if d := wiretest.Diff(want, got); len(d) > 0 {
					t.Errorf("%v job, %s, %s: fields differ from gRPC's: %v", state, c.name, form, d)
				}
				if d := wiretest.Diff(want.Spec, got.Spec); len(d) > 0 {
					t.Errorf("%v job, %s, %s: spec fields differ from gRPC's: %v", state, c.name, form, d)
				}
				if len(want.Steps) != len(got.Steps) {
					t.Errorf("%v job, %s, %s: %d steps, gRPC %d", state, c.name, form, len(got.Steps), len(want.Steps))
				} else if len(want.Steps) > 0 {
					if d := wiretest.Diff(want.Steps[0], got.Steps[0]); len(d) > 0 {
						t.Errorf("%v job, %s, %s: step fields differ from gRPC's: %v", state, c.name, form, d)
					}
				}
			}
		}
	}
}

func TestNodesLookTheSameOverBothTransports(t *testing.T) {
	n := wiretest.Filled[model.Node]()
	want := wire.NodeFromPB(wire.NodeToPB(n))
	got := over[*model.Node](t, viewNode(n))
	if d := wiretest.Diff(want, got); len(d) > 0 {
		t.Errorf("node fields differ from gRPC's: %v", d)
	}
	p := wiretest.Filled[model.Partition]()
	if d := wiretest.Diff(wire.PartitionFromPB(wire.PartitionToPB(p)), over[*model.Partition](t, p)); len(d) > 0 {
		t.Errorf("partition fields differ from gRPC's: %v", d)
	}
}
