package raftnode

import (
	"fmt"
	"testing"

	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
)

// BenchmarkApplySubmitShellSpec: one sequential held submission as sbatch
// sends it from a login shell (41 environment variables, a wrapped script):
// the commit, its fsync and the FSM's apply. Compare CPU (user+sys of the
// test binary), the wall is the fsync's.
func BenchmarkApplySubmitShellSpec(b *testing.B) {
	n, _ := open(b, b.TempDir())
	defer n.Close()
	env := make([]string, 41)
	for i := range env {
		env[i] = fmt.Sprintf("VAR_%02d=/usr/local/share/some/longer/value/%d:/usr/bin:/bin", i, i)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := &model.JobSpec{Name: "held", Script: "#!/bin/sh\n# This script was created by sbatch --wrap.\n\ntrue\n",
			WorkDir: "/home/u", TimeLimit: model.Unset, MinNodes: model.Unset, NTasks: model.Unset, CPUsPerTask: model.Unset,
			MemPerNode: model.Unset, Hold: true, Env: append([]string(nil), env...), SubmitLine: "sbatch -H -J held --wrap=true -o /dev/null",
			StdOut: "/dev/null"}
		if _, err := n.Apply(fsm.TypeSubmit, &fsm.Submit{Spec: s, UID: 1000, GID: 1000, User: "u", Partition: "p", Now: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
