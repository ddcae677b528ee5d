package e2e

import (
	"strings"
	"testing"
)

// TestLocalAndGRPCTransportsAgree: on the controller's machine the
// commands speak the local protocol (client/local) by default; they print
// exactly what they print over gRPC, another user is refused the same way
// over both (the kernel names the caller on either), and sdiag counts the
// calls of both in one table.
func TestLocalAndGRPCTransportsAgree(t *testing.T) {
	t.Parallel()
	c := startUp(t, 1)
	out, errOut, code := c.run("sbatch", "--parsable", "-H", "-J", "held", "--wrap", "true")
	if code != 0 {
		t.Fatalf("sbatch: %s", errOut)
	}
	id := strings.TrimSpace(out)
	u := testUser(t, "drovere2e")
	cmds := [][]string{{"squeue"}, {"squeue", "-j", id}, {"sinfo"}, {"scontrol", "show", "job", id},
		{"scontrol", "show", "partition"}, {"sacctmgr", "-P", "list", "account"}, {"sprio"}}
	outs := map[string]map[string]string{}
	for _, tr := range []string{"local", "grpc"} {
		c.extraEnv = []string{"DROVER_TRANSPORT=" + tr}
		outs[tr] = map[string]string{}
		for _, args := range cmds {
			o, e, code := c.run(args[0], args[1:]...)
			outs[tr][strings.Join(args, " ")] = o + e
			if code != 0 && args[0] != "sprio" {
				t.Errorf("%s over %s: exit %d: %s", strings.Join(args, " "), tr, code, e)
			}
		}
		_, e, code := c.runAs(u, "", "scancel", id)
		if code == 0 || !strings.Contains(e, "Access/permission denied") {
			t.Errorf("over %s, another user's scancel of root's job: exit %d, %q", tr, code, e)
		}
		if _, e, code := c.runAs(u, "", "scontrol", "release", id); code == 0 || !strings.Contains(e, "Access/permission denied") {
			t.Errorf("over %s, another user's release of root's job: exit %d, %q", tr, code, e)
		}
	}
	for _, args := range cmds {
		k := strings.Join(args, " ")
		if outs["local"][k] != outs["grpc"][k] {
			t.Errorf("%s differs:\nlocal:\n%s\ngrpc:\n%s", k, outs["local"][k], outs["grpc"][k])
		}
	}
	if !strings.Contains(outs["local"]["squeue -j "+id], "held") {
		t.Errorf("squeue -j %s shows no job:\n%s", id, outs["local"]["squeue -j "+id])
	}
	// Each transport counted its ListJobs in the one table sdiag shows.
	c.extraEnv = nil
	o, e, code := c.run("sdiag")
	if code != 0 || !strings.Contains(o, "ListJobs") || !strings.Contains(o, "SignalJobs") {
		t.Errorf("sdiag: exit %d, %s\n%s", code, e, o)
	}
}
