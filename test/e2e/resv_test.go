package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// squeueField is one squeue -o field of a job ("" when gone).
func (c *cluster) squeueField(id, field string) string {
	out, _, _ := c.run("squeue", "-h", "-t", "all", "-j", id, "-o", field)
	return strings.TrimSpace(out)
}

// TestReservations drives advance reservations through the real
// binaries: scontrol create/show/update/delete, sinfo -T and node states,
// --reservation and #SBATCH --reservation, a job outside the reservation
// kept off its node, the admin-only and access checks, a controller
// restart, and a window's end timing out the job running in it.
func TestReservations(t *testing.T) {
	t.Parallel()
	c := startUp(t, 2, "--cpus", "2")
	node1, node2 := c.node(1), c.node(2)
	u := testUser(t, "drovere2e")

	// Only operators create reservations.
	_, errOut, code := c.runAs(u, "", "scontrol", "create", "reservation", "ReservationName=x",
		"StartTime=now", "Duration=10", "Nodes="+node1, "Users=root")
	if code != 1 || !strings.Contains(errOut, "Error creating the reservation: Access/permission denied") {
		t.Errorf("non-admin create: exit %d, %q", code, errOut)
	}
	// Bad input: a clear error, exit 1, nothing created.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"Duration=garbage", "Nodes=" + node1}, "Invalid duration Duration=garbage.  No reservation created."},
		{[]string{"Duration=10", "Nodes=nosuch9"}, "Error creating the reservation: Invalid node name specified"},
	} {
		args := append([]string{"create", "reservation", "ReservationName=bad", "StartTime=now", "Users=root"}, tc.args...)
		if _, errOut, code := c.run("scontrol", args...); code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("scontrol %v: exit %d, %q, want %q", args, code, errOut, tc.want)
		}
	}
	if out := c.must("scontrol", "show", "reservation"); out != "No reservations in the system\n" {
		t.Fatalf("after refused creates: %q", out)
	}

	out := c.must("scontrol", "create", "reservation", "ReservationName=maint", "StartTime=now",
		"Duration=30", "Nodes="+node1, "Users=root", "Flags=MAINT")
	if out != "Reservation created: maint\n" {
		t.Errorf("create printed %q", out)
	}
	show := c.must("scontrol", "show", "reservation", "maint")
	for _, want := range []string{"ReservationName=maint ", "Duration=00:30:00", c.named("Nodes=node1 NodeCnt=1 CoreCnt=2 Features=(null) PartitionName=(null) Flags=MAINT,SPEC_NODES"),
		"TRES=cpu=2", "Users=root Groups=(null) Accounts=(null) Licenses=(null) State=ACTIVE", "MaxStartDelay=(null)"} {
		if !strings.Contains(show, want) {
			t.Errorf("show reservation lacks %q:\n%s", want, show)
		}
	}
	// Two plain reservations may not share a node at the same time (a
	// MAINT or OVERLAP one may, as in Slurm).
	c.must("scontrol", "create", "reservation", "ReservationName=lab", "StartTime=now+1hour",
		"Duration=10", "Nodes="+node2, "Accounts=physics")
	if _, errOut, code := c.run("scontrol", "create", "reservation", "ReservationName=dup", "StartTime=now+1hour",
		"Duration=10", c.named("Nodes=node[1-2]"), "Users=root"); code != 1 || !strings.Contains(errOut, "Requested reservation overlaps with another reservation") {
		t.Errorf("overlapping create: exit %d, %q", code, errOut)
	}
	if out := c.must("scontrol", "show", "-o", "reservation", "lab"); !strings.Contains(out, "State=INACTIVE") || !strings.Contains(out, "Accounts=physics ") {
		t.Errorf("future reservation: %s", out)
	}
	c.must("scontrol", "delete", "reservation", "lab")
	if out := c.must("sinfo", "-T"); !strings.Contains(out, "RESV_NAME") || !regexpMatch(`maint\s+ACTIVE\s+\S+\s+\S+\s+00:30:00\s+`+node1, out) {
		t.Errorf("sinfo -T:\n%s", out)
	}
	if out := c.must("sinfo", "-h", "-N", "-o", "%N %t"); !strings.Contains(out, node1+" maint") || !strings.Contains(out, node2+" idle") {
		t.Errorf("sinfo node states:\n%s", out)
	}

	// A job without the reservation runs on the other node; one that
	// names the reserved node waits for the maintenance.
	outside := c.sbatch("-o", "/dev/null", "--wrap", "sleep 300")
	c.waitState(outside, "RUNNING", 30*time.Second)
	if n := c.jobField(outside, "NodeList"); n != node2 {
		t.Errorf("job outside the reservation ran on %q", n)
	}
	pinned := c.sbatch("-w", node1, "-o", "/dev/null", "--wrap", "true")
	c.waitFor("the pinned job's maintenance reason", 30*time.Second, func() bool {
		return c.squeueField(pinned, "%r") == "ReqNodeNotAvail, Reserved for maintenance"
	})

	// #SBATCH --reservation runs on the reserved node.
	script := filepath.Join(c.dir, "in.sh")
	os.WriteFile(script, []byte("#!/bin/sh\n#SBATCH --reservation=maint\necho resv=$SLURM_JOB_RESERVATION\nsleep 300\n"), 0o755)
	in := c.sbatch("-o", filepath.Join(c.dir, "in.out"), script)
	c.waitState(in, "RUNNING", 30*time.Second)
	if n, v := c.jobField(in, "NodeList"), c.squeueField(in, "%v"); n != node1 || v != "maint" {
		t.Errorf("job in the reservation: NodeList=%q reservation=%q", n, v)
	}
	c.waitFor("the job's SLURM_JOB_RESERVATION", 10*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(c.dir, "in.out"))
		return strings.Contains(string(b), "resv=maint")
	})

	// srun --reservation runs there too (its own job, the CPU left on node1).
	if out := c.must("srun", "--reservation=maint", "-n1", "sh", "-c", "echo $SLURMD_NODENAME"); strings.TrimSpace(out) != node1 {
		t.Errorf("srun --reservation ran on %q", out)
	}

	// A user the reservation does not name is refused at submission. The
	// srun's job (the next id) may still be completing: wait until it is
	// gone so that the listing below changes only if a refusal queued one.
	inID, _ := strconv.Atoi(in)
	c.waitFor("srun's job to leave squeue", 30*time.Second, func() bool {
		out, _, _ := c.run("squeue", "-h", "-o", "%i")
		return !slices.Contains(strings.Fields(out), strconv.Itoa(inID+1))
	})
	before := c.must("squeue", "-h", "-o", "%i")
	if _, errOut, code := c.runAs(u, "", "sbatch", "--reservation=maint", "-o", "/dev/null", "--wrap", "true"); code != 1 ||
		!strings.Contains(errOut, "Access denied to requested reservation") {
		t.Errorf("sbatch --reservation by a user not in it: exit %d, %q", code, errOut)
	}
	if _, errOut, code := c.run("sbatch", "--reservation=nosuch", "--wrap", "true"); code != 1 ||
		!strings.Contains(errOut, "Requested reservation is invalid") {
		t.Errorf("sbatch --reservation=nosuch: exit %d, %q", code, errOut)
	}
	if after := c.must("squeue", "-h", "-o", "%i"); after != before {
		t.Errorf("refused submissions queued jobs: %q → %q", before, after)
	}
	c.must("scontrol", "update", "ReservationName=maint", "Users+=drovere2e")
	if out := c.must("scontrol", "show", "reservation", "maint"); !strings.Contains(out, "Users=root,drovere2e ") {
		t.Errorf("after Users+=: %s", out)
	}

	// The reservation is replicated state: it survives a controller restart.
	ctl := c.pidOf("controller")
	if ctl == 0 {
		t.Fatal("no controller process found")
	}
	if err := syscall.Kill(ctl, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.waitFor("a new controller", 30*time.Second, func() bool {
		p := c.pidOf("controller")
		if p == 0 || p == ctl {
			return false
		}
		_, _, code := c.run("sinfo", "-h")
		return code == 0
	})
	if out := c.must("scontrol", "show", "-o", "reservation"); !strings.Contains(out, "ReservationName=maint ") ||
		!strings.Contains(out, "Users=root,drovere2e ") || !strings.Contains(out, "State=ACTIVE") {
		t.Errorf("after the controller's restart: %q", out)
	}

	// A window's end times out the job running in it and removes the
	// reservation. Node2 is busy: without IGNORE_JOBS that is refused.
	if _, errOut, code := c.run("scontrol", "create", "reservation", "ReservationName=short", "StartTime=now",
		"Duration=0:08", "Nodes="+node2, "Users=root"); code != 1 || !strings.Contains(errOut, "Requested nodes are busy") {
		t.Errorf("reservation over a running job: exit %d, %q", code, errOut)
	}
	c.must("scontrol", "create", "reservation", "ReservationName=short", "StartTime=now",
		"Duration=0:08", "Nodes="+node2, "Users=root", "Flags=IGNORE_JOBS")
	short := c.sbatch("--reservation=short", "-o", "/dev/null", "--wrap", "sleep 300")
	c.waitState(short, "RUNNING", 30*time.Second)
	c.waitState(short, "TIMEOUT", 30*time.Second)
	if out, _, code := c.run("scontrol", "show", "reservation", "short"); code != 1 || out != "Reservation short not found\n" {
		t.Errorf("after its window: exit %d, %q", code, out)
	}
	if st := c.jobField(outside, "JobState"); st != "RUNNING" {
		t.Errorf("the job outside the ended reservation: %s", st)
	}

	// Delete: refused while jobs use it, then done; the waiting job runs.
	if _, errOut, code := c.run("scontrol", "delete", "reservation", "maint"); code != 1 ||
		!strings.Contains(errOut, "Requested reservation is in use") {
		t.Errorf("delete in use: exit %d, %q", code, errOut)
	}
	c.must("scancel", in, outside)
	c.waitFor("the reservation to be deleted", 30*time.Second, func() bool {
		_, _, code := c.run("scontrol", "delete", "ReservationName=maint")
		return code == 0
	})
	if out := c.must("scontrol", "show", "reservation"); out != "No reservations in the system\n" {
		t.Errorf("after delete: %q", out)
	}
	c.waitState(pinned, "COMPLETED", 30*time.Second)
}

func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }
