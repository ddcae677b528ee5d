package slurmconf

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestScriptAndHealthKeys(t *testing.T) {
	c := mustParse(t, `SlurmctldHost=h
NodeName=n1
PartitionName=p Nodes=n1
Prolog=/etc/prolog
Epilog=/etc/epilog
TaskProlog=/etc/tp
TaskEpilog=/etc/te
PrologFlags=Alloc,Contain,NoHold
PrologEpilogTimeout=30
HealthCheckProgram=/usr/sbin/nhc
HealthCheckInterval=300
HealthCheckNodeState=IDLE,CYCLE
GresTypes=gpu,mps,shard
`, nil)
	if c.Prolog != "/etc/prolog" || c.Epilog != "/etc/epilog" || c.TaskProlog != "/etc/tp" || c.TaskEpilog != "/etc/te" ||
		!reflect.DeepEqual(c.PrologFlags, []string{"alloc", "contain", "nohold"}) || c.PrologEpilogTimeout != 30*time.Second ||
		c.HealthCheckProgram != "/usr/sbin/nhc" || c.HealthCheckInterval != 300*time.Second ||
		c.HealthCheckNodeState != "IDLE,CYCLE" || !reflect.DeepEqual(c.GresTypes, []string{"gpu", "mps", "shard"}) {
		t.Errorf("typed keys: %+v", c)
	}
	for _, w := range c.Warnings {
		if strings.Contains(w, "unknown") {
			t.Errorf("warning %q", w)
		}
	}
	// Defaults: no scripts, no timeout, no health check, ANY state.
	d := mustParse(t, "SlurmctldHost=h\n", nil)
	if d.Prolog != "" || d.PrologFlags != nil || d.PrologEpilogTimeout != 0 || d.HealthCheckInterval != 0 ||
		d.HealthCheckNodeState != "ANY" || d.GresTypes != nil {
		t.Errorf("defaults: %+v", d)
	}
	w := mustParse(t, "ClusterName=c SlurmctldHost=h\nPrologFlags=Alloc,Sometimes\nHealthCheckNodeState=BUSY\n", nil)
	want := []string{`/etc/slurm/slurm.conf:2: PrologFlags: unknown flag "sometimes"`,
		`/etc/slurm/slurm.conf:3: HealthCheckNodeState: unknown state "BUSY"`}
	if !reflect.DeepEqual(w.Warnings, want) {
		t.Errorf("warnings %q", w.Warnings)
	}
	for _, bad := range []string{"HealthCheckInterval=soon", "HealthCheckInterval=-5", "PrologEpilogTimeout=1m", "PrologEpilogTimeout="} {
		_, err := parse(t, "SlurmctldHost=h\n"+bad+"\n", nil)
		if err == nil || !strings.HasPrefix(err.Error(), "/etc/slurm/slurm.conf:2: invalid ") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
