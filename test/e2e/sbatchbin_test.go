package e2e

import (
	"regexp"
	"strings"
	"testing"
)

// TestSbatchBinaryIsDroverCliSbatch: sbatch's own binary (drover-sbatch,
// which the sbatch name links to) answers as drover-cli's sbatch did:
// the same output, errors and exit status for help, usage, version, a bad
// option and a missing script, and it submits over either transport (over
// gRPC it hands the command to the binary beside it that speaks gRPC).
func TestSbatchBinaryIsDroverCliSbatch(t *testing.T) {
	t.Parallel()
	c := startUp(t, 1)
	ids := regexp.MustCompile(`[0-9]+`)
	for _, args := range [][]string{{"--version"}, {"--usage"}, {"--help"}, {"--no-such-option"},
		{"/nonexistent/script.sh"}, {"-H", "--wrap", "true", "--time", "bogus"}} {
		o1, e1, code1 := c.run("sbatch", args...)
		o2, e2, code2 := c.run("drover-cli", append([]string{"sbatch"}, args...)...)
		if o1 != o2 || e1 != e2 || code1 != code2 {
			t.Errorf("sbatch %s: exit %d, stdout %q, stderr %q; drover-cli sbatch: exit %d, stdout %q, stderr %q",
				strings.Join(args, " "), code1, o1, e1, code2, o2, e2)
		}
	}
	for _, tr := range []string{"local", "grpc"} {
		c.extraEnv = []string{"DROVER_TRANSPORT=" + tr}
		o, e, code := c.run("sbatch", "-H", "-J", "bin_"+tr, "--wrap", "true")
		if code != 0 || !strings.HasPrefix(o, "Submitted batch job ") {
			t.Fatalf("sbatch over %s: exit %d, stdout %q, stderr %q", tr, code, o, e)
		}
		id := ids.FindString(o)
		c.extraEnv = nil
		if o, e, code := c.run("squeue", "-h", "-j", id, "-o", "%j %T"); code != 0 || strings.TrimSpace(o) != "bin_"+tr+" PENDING" {
			t.Errorf("job %s submitted over %s: squeue exit %d, %q %q", id, tr, code, o, e)
		}
	}
}
