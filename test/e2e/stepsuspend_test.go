package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestStepSuspendedInSacct: an srun step that runs through a suspension
// shows it in sacct (Suspended) and leaves it out of its Elapsed, as
// Slurm's sacct does for step rows.
func TestStepSuspendedInSacct(t *testing.T) {
	t.Parallel()
	c := startUp(t, 1)
	id := c.sbatch("-o", "/dev/null", "--wrap", "srun sleep 4")
	c.waitFor("step 0 to run", 30*time.Second, func() bool {
		out, _, _ := c.run("squeue", "-h", "-s", "-j", id, "-o", "%i")
		return strings.Contains(out, id+".0")
	})
	c.must("scontrol", "suspend", id)
	start := time.Now()
	// The suspension itself is what is measured.
	c.waitFor("three seconds of suspension", 10*time.Second, func() bool { return time.Since(start) >= 3*time.Second })
	c.must("scontrol", "resume", id)
	c.waitState(id, "COMPLETED", 30*time.Second)
	var row []string
	c.waitFor("step 0's row in sacct", 20*time.Second, func() bool {
		out, _, _ := c.run("sacct", "-n", "-P", "-j", id, "-o", "JobID,ElapsedRaw,Suspended,Start,End")
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Split(l, "|"); len(f) == 5 && f[0] == id+".0" && f[4] != "Unknown" {
				row = f
				return true
			}
		}
		return false
	})
	susp := secsOf(row[2])
	elapsed, _ := strconv.Atoi(row[1])
	s, _ := time.ParseInLocation("2006-01-02T15:04:05", row[3], time.Local)
	e, _ := time.ParseInLocation("2006-01-02T15:04:05", row[4], time.Local)
	if wall := int(e.Sub(s).Seconds()); susp < 2 || elapsed != wall-susp {
		t.Errorf("step 0: ElapsedRaw %d, Suspended %s, over %d s of wall time", elapsed, row[2], wall)
	}
}
