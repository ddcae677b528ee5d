package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSrunOptions exercises srun's per-task options inside one allocation:
// -o/-e patterns, --multi-prog, -K, -W, --input, --mpi, --bcast, a
// forwarded signal, and --bcast from outside an allocation.
func TestSrunOptions(t *testing.T) {
	t.Parallel()
	c := startUp(t, 2, "--cpus", "2")
	conf := filepath.Join(c.dir, "multi.conf")
	if err := os.WriteFile(conf, []byte("# ranks and programs\n0 echo first %t\n1-2 echo rest %t %o\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(c.dir, "prog.sh")
	writeScript(t, prog, "#!/bin/sh\necho bcast-ran-from $0 step $SLURM_STEP_ID\n")
	tools := filepath.Join(c.dir, "tools")
	bcastDir := filepath.Join(c.dir, "bc")
	for _, d := range []string{tools, bcastDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeScript(t, filepath.Join(tools, "mytool"), "#!/bin/sh\necho tool-ran-from $0\n")
	dest := filepath.Join(c.dir, "copied-prog")
	script := filepath.Join(c.dir, "opts.sh")
	writeScript(t, script, `#!/bin/bash
srun -n2 -N2 -o out-%j-%t-%N-%n-%s.txt -e err-%t.txt bash -c 'echo o$SLURM_PROCID; echo e$SLURM_PROCID >&2'
echo "files $?"
srun -n3 --multi-prog `+conf+` | sort
t0=$SECONDS
srun -K -n2 -N2 bash -c 'if [ $SLURM_PROCID = 0 ]; then exit 3; fi; sleep 60'
echo "K status $? after $((SECONDS-t0))s"
t0=$SECONDS
srun -W 1 -n2 -N2 bash -c 'if [ $SLURM_PROCID = 0 ]; then exit 0; fi; sleep 60'
echo "W status $? after $((SECONDS-t0))s"
echo x | srun --input=all -n2 -N2 cat | sort | tr '\n' ' '; echo
echo y | srun --input=none -n1 -N1 cat; echo "none status $?"
srun --mpi=none -n1 -N1 true; echo "mpi none $?"
srun --mpi=pmix -n1 -N1 true 2>mpi.err; echo "mpi pmix $?"
srun --bcast=`+dest+` -n2 -N2 `+prog+` | sort
PATH=`+tools+`:$PATH srun --bcast=`+bcastDir+`/ -n2 -N2 mytool | sort
srun --bcast -n1 -N1 ./prog.sh
before=$(srun -n1 -N1 printenv SLURM_STEP_ID)
srun --bcast=/nonexistent-dir/x -n1 -N1 ./prog.sh; echo "bad dest $?"
srun --bcast -n1 -N1 no-such-program-here; echo "bad program $?"
after=$(srun -n1 -N1 printenv SLURM_STEP_ID)
echo "steps between: $((after-before))"
t0=$SECONDS
srun -t 0:02 -n1 -N1 sleep 30; echo "step time status $? after $((SECONDS-t0))s"
`)
	out, errOut, code := c.run("salloc", "-N2", "-n4", script)
	if code != 0 {
		t.Fatalf("salloc: %d\n%s\n%s", code, out, errOut)
	}
	id := ""
	for _, l := range strings.Split(errOut, "\n") {
		if v, ok := strings.CutPrefix(l, "salloc: Granted job allocation "); ok {
			id = v
		}
	}
	for rank, node := range []string{c.node(1), c.node(2)} {
		r := fmt.Sprint(rank)
		// %j job, %t rank, %N node name, %n node index in the step, %s step
		if got := readFileOr(filepath.Join(c.dir, "out-"+id+"-"+r+"-"+node+"-"+r+"-0.txt")); got != "o"+r+"\n" {
			t.Errorf("-o pattern, task %s: %q", r, got)
		}
		if got := readFileOr(filepath.Join(c.dir, "err-"+r+".txt")); got != "e"+r+"\n" {
			t.Errorf("-e pattern, task %s: %q", r, got)
		}
	}
	defaultDest := filepath.Join(c.dir, "slurm_bcast_"+id+"_prog.sh")
	toolDest := filepath.Join(bcastDir, "slurm_bcast_"+id+"_mytool")
	for _, want := range []string{
		"files 0\n",
		"first 0\nrest 1 0\nrest 2 1\n",
		"x x \n",
		"none status 0\n",
		"mpi none 0\n",
		"mpi pmix 1\n",
		"bcast-ran-from " + dest + " step 7\nbcast-ran-from " + dest + " step 7\n",
		"tool-ran-from " + toolDest + "\ntool-ran-from " + toolDest + "\n",
		"bcast-ran-from " + defaultDest + " step 9\n",
		"bad dest 1\n",
		"bad program 1\n",
		"steps between: 1\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s\nstderr:\n%s", want, out, errOut)
		}
	}
	// A step's own --time ends it (2 s here: Drover keeps seconds) with
	// slurmstepd's line, not the allocation.
	if m := regexp.MustCompile(`step time status 143 after (\d+)s`).FindStringSubmatch(out); m == nil || atoi(m[1]) > 15 ||
		!strings.Contains(errOut, "CANCELLED AT") || !strings.Contains(errOut, "DUE TO TIME LIMIT") {
		t.Errorf("step time limit: %q\nstderr:\n%s", m, errOut)
	}
	if strings.Contains(out, "o0\n") || strings.Contains(errOut, "e0\n") {
		t.Errorf("-o/-e output was also streamed: %q %q", out, errOut)
	}
	// The step ends soon after the first failure (-K) or exit (-W). As
	// Slurm's, srun's status is then the killed task's 128+SIGTERM: a
	// signal outranks any exit code.
	for _, prefix := range []string{"K status 143 after ", "W status 143 after "} {
		i := strings.Index(out, prefix)
		if i < 0 {
			t.Errorf("no %q line: %s", prefix, out)
			continue
		}
		line := out[i:]
		line = line[:strings.IndexByte(line, '\n')]
		var secs int
		if _, err := fmt.Sscanf(line[strings.LastIndex(line, " ")+1:], "%ds", &secs); err != nil || secs > 20 {
			t.Errorf("%s: the step was not cut short (%v)", line, err)
		}
	}
	for _, want := range []string{
		"srun: Terminating StepId=" + id + ".2\n",
		"srun: error: " + c.node(1) + ": task 0: Exited with exit code 3\n",
		"srun: First task exited 1s ago\n",
		"srun: Terminating StepId=" + id + ".3\n",
		"srun: error: Can not execute no-such-program-here\n",
		"srun: error: Failed to broadcast '" + prog + "'. Step launch aborted.\n",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if b := readFileOr(filepath.Join(c.dir, "mpi.err")); !strings.Contains(b, "pmix") {
		t.Errorf("--mpi=pmix message: %q", b)
	}
	// The copies are the program, executable by the job's user only.
	for _, p := range []string{dest, defaultDest, toolDest} {
		st, err := os.Stat(p)
		if err != nil || st.Mode().Perm() != 0o700 {
			t.Errorf("broadcast copy %s: %v %v", p, st, err)
		}
	}
	if got := readFileOr(dest); got != readFileOr(prog) {
		t.Errorf("the copy differs from the program: %q", got)
	}

	// Outside an allocation the copy waits for the allocation.
	tmpDest := fmt.Sprintf("/tmp/drover-e2e-bcast-%d-%d", os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() { os.Remove(tmpDest) })
	out, errOut, code = c.run("srun", "--bcast="+tmpDest, "-N2", prog)
	if code != 0 || strings.Count(out, "bcast-ran-from "+tmpDest+" step 0\n") != 2 {
		t.Errorf("srun --bcast outside an allocation: %d %q %q", code, out, errOut)
	}
	if got := readFileOr(tmpDest); got != readFileOr(prog) {
		t.Errorf("%s after srun --bcast: %q", tmpDest, got)
	}

	// A signal sent to srun reaches the tasks.
	srun := exec.Command(filepath.Join(binDir, "srun"), "bash", "-c", `trap "echo got-usr1; exit 0" USR1; echo ready; while :; do sleep 0.1; done`)
	srun.Dir, srun.Env = c.dir, c.env()
	var sout syncBuffer
	srun.Stdout = &sout
	if err := srun.Start(); err != nil {
		t.Fatal(err)
	}
	defer srun.Process.Kill()
	c.waitFor("the task", 30*time.Second, func() bool { return strings.Contains(sout.String(), "ready") })
	_ = srun.Process.Signal(syscall.SIGUSR1)
	done := make(chan error, 1)
	go func() { done <- srun.Wait() }()
	select {
	case err := <-done:
		if err != nil || !strings.Contains(sout.String(), "got-usr1") {
			t.Errorf("SIGUSR1 to srun: %v %q", err, sout.String())
		}
	case <-time.After(20 * time.Second):
		t.Errorf("srun did not end after SIGUSR1: %q", sout.String())
	}
}
