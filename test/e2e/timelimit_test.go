package e2e

import (
	"os"
	"testing"
	"time"
)

// TestUpdateTimeLimitRunning: scontrol update TimeLimit= on a running job
// reaches its node: a raised limit lets it finish, a lowered one ends it
// TIMEOUT.
func TestUpdateTimeLimitRunning(t *testing.T) {
	t.Parallel()
	c := startUp(t, 1)
	raised := c.sbatch("-t", "0:04", "-o", os.DevNull, "--wrap", "sleep 7")
	lowered := c.sbatch("-t", "5:00", "-o", os.DevNull, "--wrap", "sleep 120")
	c.waitState(raised, "RUNNING", 30*time.Second)
	c.waitState(lowered, "RUNNING", 30*time.Second)
	c.must("scontrol", "update", "JobId="+raised, "TimeLimit=1:00")
	c.must("scontrol", "update", "JobId="+lowered, "TimeLimit=0:03")
	c.waitState(lowered, "TIMEOUT", 30*time.Second)
	c.waitState(raised, "COMPLETED", 30*time.Second)
}
