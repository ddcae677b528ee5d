package fsm

import (
	"encoding/json"
	"fmt"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/state"
)

// published renders what readers of a snapshot see: its jobs, nodes,
// partitions and reservations. A snapshot, once published, is read by
// the scheduler, the API and the agents' streams without a lock, so no
// later command may change it (model values are copied on write); the
// harness compares a snapshot's rendering before and after each command.
func published(s *state.Snapshot) map[string]string {
	out := map[string]string{}
	put := func(key string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			b = []byte(err.Error())
		}
		out[key] = string(b)
	}
	s.EachJob(func(j *model.Job) bool {
		put(fmt.Sprintf("job %d", j.ID), j)
		return true
	})
	for _, n := range s.Nodes() {
		put("node "+n.Name, n)
	}
	for _, p := range s.Partitions() {
		put("partition "+p.Name, p)
	}
	for _, r := range s.Reservations() {
		put("reservation "+r.Name, r)
	}
	return out
}

// mutated names what of a snapshot rendered before changed since.
func mutated(s *state.Snapshot, before map[string]string) []string {
	var out []string
	after := published(s)
	for k, v := range before {
		if after[k] != v {
			out = append(out, k)
		}
	}
	return out
}
