package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestBackfillAroundMaint: a maintenance reservation that starts in a few
// minutes. A job whose time limit reaches into the window waits for the
// maintenance and backfill plans it for the window's end (squeue --start,
// scontrol StartTime=); a short job that ends before the window starts
// now; a job of the reservation is planned at the window's start.
func TestBackfillAroundMaint(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	c := upWithConf(t, "SchedulerParameters=bf_resolution=1,bf_interval=1\n"+
		"NodeName=node1 NodeAddr=127.0.0.1 CPUs=2 RealMemory=2000\n"+
		"PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n", map[string]string{}, nil)
	c.must("scontrol", "create", "reservation", "ReservationName=maint", "StartTime=now+5minutes",
		"Duration=10", "Nodes=node1", "Users=root", "Flags=MAINT")
	show := c.must("scontrol", "show", "-o", "reservation", "maint")
	m := regexp.MustCompile(`StartTime=(\S+) EndTime=(\S+)`).FindStringSubmatch(show)
	if m == nil {
		t.Fatalf("show reservation: %q", show)
	}
	start, end := m[1], m[2]

	long := c.sbatch("-c2", "--mem=10M", "-t", "10", "-o", "/dev/null", "--wrap", "sleep 300")
	short := c.sbatch("-c2", "--mem=10M", "-t", "2", "-o", "/dev/null", "--wrap", "sleep 300")
	in := c.sbatch("-c1", "--mem=10M", "-t", "1", "--reservation=maint", "-o", "/dev/null", "--wrap", "true")
	c.waitState(short, "RUNNING", 30*time.Second)
	c.waitFor("the 10-minute job's maintenance reason and planned start", 20*time.Second, func() bool {
		return c.squeueField(long, "%r") == "ReqNodeNotAvail, Reserved for maintenance" && c.jobField(long, "StartTime") == end
	})
	c.waitFor("the reservation's job planned at the window's start", 20*time.Second, func() bool {
		return c.jobField(in, "Reason") == "Reservation" && c.jobField(in, "StartTime") == start
	})
	out := c.must("squeue", "--start", "-h", "-o", "%i %S %r")
	lines := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		id, rest, _ := strings.Cut(l, " ")
		lines[id] = rest
	}
	if want := end + " ReqNodeNotAvail, Reserved for maintenance"; lines[long] != want {
		t.Errorf("squeue --start for the 10-minute job: %q, want %q (all: %q)", lines[long], want, out)
	}
	if want := start + " Reservation"; lines[in] != want {
		t.Errorf("squeue --start for the reservation's job: %q, want %q (all: %q)", lines[in], want, out)
	}
	if _, ok := lines[short]; ok {
		t.Errorf("squeue --start lists the running job %s: %q", short, out)
	}
	if st := c.jobField(long, "JobState"); st != "PENDING" {
		t.Errorf("the 10-minute job is %s; it would run into the maintenance window", st)
	}
	c.must("scancel", long, short, in)
}
