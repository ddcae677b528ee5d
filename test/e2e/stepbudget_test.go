package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStepExecBudget: a job's running steps hold at most 16 MiB of argv
// and environment in the controller. --overlap steps have no CPU bound, so
// a user running many sruns with a large environment gets the next one
// refused with Slurm's step-limit words instead of growing the controller;
// once they end, a new step runs again.
func TestStepExecBudget(t *testing.T) {
	t.Parallel()
	c := startUp(t, 1, "--cpus", "2")
	script := filepath.Join(c.dir, "budget.sh")
	// Fifteen 100 kB variables: ~1.5 MB a step, so eleven steps fit in
	// 16 MiB and a twelfth does not.
	writeScript(t, script, `#!/bin/bash
#SBATCH -o budget-%j.out -e budget-%j.err
v=$(head -c 100000 /dev/zero | tr '\0' x)
for i in $(seq 1 15); do export BIG$i=$v; done
for i in $(seq 1 11); do
	srun --overlap -n1 bash -c 'while [ ! -e release-$SLURM_JOB_ID ]; do sleep 0.5; done' &
done
for try in $(seq 1 1200); do
	n=$(squeue -h -s -j $SLURM_JOB_ID -o %i | grep -c '\.[0-9]')
	[ "$n" -ge 11 ] && break
	sleep 0.1
done
echo "running $n"
srun --overlap -n1 echo twelfth-ran
echo "twelfth status $?"
touch release-$SLURM_JOB_ID
wait
srun --overlap -n1 echo after-ok
`)
	id := c.sbatch(script)
	c.waitState(id, "COMPLETED", 180*time.Second)
	out := readFile(t, filepath.Join(c.dir, "budget-"+id+".out"))
	errOut := readFile(t, filepath.Join(c.dir, "budget-"+id+".err"))
	for _, want := range []string{"running 11\n", "twelfth status 1\n", "after-ok\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s\nstderr:\n%s", want, out, tail(errOut, 2000))
		}
	}
	if strings.Contains(out, "twelfth-ran") || !strings.Contains(errOut, "Step limit reached for this job") {
		t.Errorf("the twelfth step was not refused with the step-limit words:\nstdout:\n%s\nstderr:\n%s", out, tail(errOut, 2000))
	}
}
