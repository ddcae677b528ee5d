package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAdmissionLimits: what one user may send is bounded, with Slurm's
// words, and the privileged options are refused to users.
func TestAdmissionLimits(t *testing.T) {
	t.Parallel()
	u := testUser(t, "drovere2e")
	c := startUp(t, 1, "--conf", "SchedulerParameters=max_script_size=2000", "--conf", "MaxStepCount=3")
	tooLong := "Batch job submission failed: Pathname of a file, directory or other parameter too long"
	script := filepath.Join(u.HomeDir, "big.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"+strings.Repeat("#", 2000)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"long name", []string{"-H", "-J", strings.Repeat("n", 1025), "--wrap=true"}, 1, tooLong},
		// (one argument of exec is at most 128 KiB)
		{"100 kB comment", []string{"-H", "--comment=" + strings.Repeat("c", 100<<10), "--wrap=true"}, 1, tooLong},
		{"long output path", []string{"-H", "-o", "/tmp/" + strings.Repeat("p", 4100), "--wrap=true"}, 1, tooLong},
		{"script over max_script_size", []string{"-H", script}, 1, tooLong},
		{"uid", []string{"--uid=0", "--wrap=true"}, 255, "sbatch: error: --uid only permitted by root user"},
		{"gid", []string{"--gid=0", "--wrap=true"}, 255, "sbatch: error: --gid only permitted by root user"},
		{"negative nice", []string{"--nice=-5", "--wrap=true"}, 1, "Batch job submission failed: Invalid --nice value"},
	} {
		_, errOut, code := c.runAs(u, "", "sbatch", tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", tc.name, code, tail(errOut, 300), tc.code, tc.want)
		}
	}
	// Nothing of the refused jobs got in, and the queue still answers.
	if out := c.must("squeue", "-h", "-o", "%i"); strings.TrimSpace(out) != "" {
		t.Errorf("refused jobs are queued: %q", out)
	}
	// At 1024 characters a name is fine; root may set a negative nice.
	name := strings.Repeat("n", 1024)
	id := c.sbatch("-H", "-J", name, "--nice=-5", "--wrap=true")
	if got := c.jobField(id, "JobName"); got != name {
		t.Errorf("1024-character name came back as %d characters", len(got))
	}
	_, errOut, code := c.run("scontrol", "update", "JobId="+id, "Comment="+strings.Repeat("c", 1025))
	if code == 0 || !strings.Contains(errOut, "Pathname of a file, directory or other parameter too long") {
		t.Errorf("scontrol update with a long comment: exit %d %q", code, errOut)
	}
	c.must("scancel", id)

	// MaxStepCount=3: the fourth step of a job is refused.
	out := c.sbatch("-o", "steps-%j.out", "--wrap", "for i in 1 2 3 4; do srun -n1 true && echo ok$i; done; true")
	c.waitState(out, "COMPLETED", 60*time.Second)
	got := readFile(t, filepath.Join(c.dir, "steps-"+out+".out"))
	if !strings.Contains(got, "ok3") || strings.Contains(got, "ok4") || !strings.Contains(got, "Step limit reached for this job") {
		t.Errorf("steps past MaxStepCount=3:\n%s", got)
	}
}

// TestMaxJobCountRetry: past MaxJobCount a submission is refused for now,
// and sbatch waits and retries as Slurm's does until room comes back.
func TestMaxJobCountRetry(t *testing.T) {
	t.Parallel()
	c := startUp(t, 1, "--conf", "MaxJobCount=2", "--conf", "MinJobAge=1")
	a := c.sbatch("-H", "--wrap=true")
	c.sbatch("-H", "--wrap=true")
	done := make(chan [3]string, 1)
	go func() {
		out, errOut, code := c.run("sbatch", "-H", "--wrap=true")
		done <- [3]string{out, errOut, string(rune('0' + code))}
	}()
	c.waitFor("the job count to reach MaxJobCount", 10*time.Second, func() bool {
		out, _, _ := c.run("squeue", "-h", "-o", "%i")
		return len(strings.Fields(out)) == 2
	})
	// Free a place: the cancelled job leaves memory after MinJobAge.
	c.must("scancel", a)
	r := <-done
	if r[2] != "0" || !submittedRe.MatchString(r[0]) {
		t.Fatalf("retrying sbatch: exit %s, stdout %q, stderr %q", r[2], r[0], r[1])
	}
	if !strings.Contains(r[1], "sbatch: error: Slurm temporarily unable to accept job, sleeping and retrying") {
		t.Errorf("sbatch did not say it was retrying: %q", r[1])
	}
}

// TestUmaskCarried: output files and tasks get the submitter's umask
// (SLURM_UMASK), as in Slurm, not the node's.
func TestUmaskCarried(t *testing.T) {
	t.Parallel()
	u := testUser(t, "drovere2e")
	c := startUp(t, 1)
	out, errOut, code := c.runAs(u, "", "/bin/sh", "-c", "umask 077; sbatch -o um-%j.out --wrap 'umask; echo $SLURM_UMASK; srun -o um-step-%j.out sh -c umask'")
	if code != 0 {
		t.Fatalf("sbatch under umask 077: %d %s", code, errOut)
	}
	id := submittedRe.FindStringSubmatch(out)[1]
	c.waitState(id, "COMPLETED", 60*time.Second)
	for _, f := range []string{"um-" + id + ".out", "um-step-" + id + ".out"} {
		st, err := os.Stat(filepath.Join(u.HomeDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s created %v under umask 077", f, st.Mode().Perm())
		}
	}
	if got := readFile(t, filepath.Join(u.HomeDir, "um-"+id+".out")); got != "0077\n0077\n" {
		t.Errorf("batch script saw umask/SLURM_UMASK %q", got)
	}
	if got := readFile(t, filepath.Join(u.HomeDir, "um-step-"+id+".out")); got != "0077\n" {
		t.Errorf("step saw umask %q", got)
	}
	// srun on its own (an interactive job) carries it too.
	out, errOut, code = c.runAs(u, "", "/bin/sh", "-c", "umask 027; srun sh -c umask")
	if code != 0 || strings.TrimSpace(out) != "0027" {
		t.Errorf("srun under umask 027: %d %q %q", code, out, errOut)
	}
}

// TestStatePermissions: the controller's state (scripts, environments,
// accounting, keys) is not readable by other users, while they can still
// reach the socket and use every command.
func TestStatePermissions(t *testing.T) {
	t.Parallel()
	u := testUser(t, "drovere2e")
	c := startUp(t, 1)
	c.sbatch("-o", "/dev/null", "--wrap", "true")
	state := filepath.Join(c.dir, "state")
	for path, want := range map[string]os.FileMode{
		state: 0o711, filepath.Join(state, "accounting.db"): 0o600, filepath.Join(state, "raft"): 0o700,
		filepath.Join(state, "ca", "ca.key"): 0o600, filepath.Join(state, "ca", "ca.crt"): 0o644,
	} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s: %v, want %v", path, st.Mode().Perm(), want)
		}
	}
	if _, errOut, code := c.runAs(u, "", "/bin/cat", filepath.Join(state, "accounting.db")); code == 0 {
		t.Errorf("a user read accounting.db")
	} else if !strings.Contains(errOut, "Permission denied") {
		t.Errorf("cat accounting.db as a user: %q", errOut)
	}
	if _, errOut, code := c.runAs(u, "", "squeue"); code != 0 {
		t.Errorf("squeue as a user: %d %s", code, errOut)
	}
}

// TestConnectionLimits: connections that never speak are dropped after
// MessageTimeout, one user cannot hold more than the per-user cap, and
// other users keep working meanwhile.
func TestConnectionLimits(t *testing.T) {
	t.Parallel()
	u := testUser(t, "drovere2e")
	c := startUp(t, 1, "--conf", "MessageTimeout=2", "--conf", "DroverMaxConnsPerUser=20")
	sock := filepath.Join(c.dir, "state", "drover.sock")
	// As the user: open 30 silent connections; count those closed at
	// once (over the cap) and those closed after the handshake deadline.
	script := `use IO::Socket::UNIX; use IO::Select;
my @s; for (1..30) { my $c = IO::Socket::UNIX->new(Peer => $ARGV[0]) or die "connect: $!"; push @s, $c; }
sub closed { my $n = 0; for my $c (@s) { my $sel = IO::Select->new($c); if ($sel->can_read(0)) { my $b; my $r = sysread($c, $b, 4096); $n++ if defined $r && $r == 0; } } return $n; }
select(undef, undef, undef, 0.5); print "early=", closed(), "\n";
my $rc = system($ARGV[1], "-h"); print "own_sinfo=", ($rc == 0 ? 0 : 1), "\n";
select(undef, undef, undef, 3); print "late=", closed(), "\n";`
	done := make(chan string, 1)
	go func() {
		out, errOut, _ := c.runAs(u, "", "/usr/bin/perl", "-e", script, sock, filepath.Join(binDir, "sinfo"))
		done <- out + errOut
	}()
	// While the user holds them, root and other users are served.
	c.waitFor("root's sinfo while a user holds connections", 10*time.Second, func() bool {
		_, _, code := c.run("sinfo", "-h")
		return code == 0
	})
	out := <-done
	if !strings.Contains(out, "early=10\n") {
		t.Errorf("connections over the per-user cap of 20 were not refused: %q", out)
	}
	if !strings.Contains(out, "own_sinfo=1\n") {
		t.Errorf("the user's own sinfo at the cap should fail: %q", out)
	}
	// closed() reads each socket; those already at EOF stay so.
	if !strings.Contains(out, "late=30\n") {
		t.Errorf("silent connections were not dropped after MessageTimeout=2: %q", out)
	}
	if _, errOut, code := c.runAs(u, "", "sinfo", "-h"); code != 0 {
		t.Errorf("the user's sinfo once the connections are gone: %d %s", code, errOut)
	}
}
