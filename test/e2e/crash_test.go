package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestControllerKill9LosesNoJob kills the controller with SIGKILL while
// clients submit, restarts it, and checks that every acknowledged job is
// there and that job ids are not reused.
func TestControllerKill9LosesNoJob(t *testing.T) {
	dir := worldDir(t)
	conf := filepath.Join(dir, "slurm.conf")
	port := freePort(t)
	os.WriteFile(conf, []byte(fmt.Sprintf(`ClusterName=crash
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=%d
StateSaveLocation=%s/state
SlurmdSpoolDir=%s/spool
NodeName=n1 CPUs=1 RealMemory=1000 State=UNKNOWN
PartitionName=p Nodes=n1 Default=YES State=DOWN
`, port, dir, dir)), 0o644)
	c := &cluster{t: t, dir: dir, conf: conf}
	startCtl := func() *exec.Cmd {
		cmd := exec.Command(filepath.Join(binDir, "drover"), "controller", "-f", conf)
		var log bytes.Buffer
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		c.waitFor("controller", 30*time.Second, func() bool {
			_, _, code := c.run("scontrol", "ping")
			return code == 0
		})
		return cmd
	}
	ctl := startCtl()

	var mu sync.Mutex
	var acked []int
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				out, _, code := c.run("sbatch", "--parsable", "-o", "/dev/null", "--wrap", "true")
				if code == 0 {
					if id, err := strconv.Atoi(strings.TrimSpace(out)); err == nil {
						mu.Lock()
						acked = append(acked, id)
						mu.Unlock()
					}
				}
			}
		}()
	}
	time.Sleep(1500 * time.Millisecond) // let submissions flow before the crash
	_ = ctl.Process.Signal(syscall.SIGKILL)
	_ = ctl.Wait()
	close(stop)
	wg.Wait()
	if len(acked) == 0 {
		t.Fatal("no submission was acknowledged")
	}

	ctl = startCtl()
	defer func() { _ = ctl.Process.Signal(syscall.SIGTERM); _ = ctl.Wait() }()
	out := c.must("squeue", "-h", "-t", "all", "-o", "%i")
	have := map[int]bool{}
	for _, f := range strings.Fields(out) {
		n, _ := strconv.Atoi(f)
		have[n] = true
	}
	sort.Ints(acked)
	for _, id := range acked {
		if !have[id] {
			t.Errorf("acknowledged job %d lost after kill -9", id)
		}
	}
	next, _, code := c.run("sbatch", "--parsable", "-o", "/dev/null", "--wrap", "true")
	n, _ := strconv.Atoi(strings.TrimSpace(next))
	if code != 0 || n <= acked[len(acked)-1] {
		t.Errorf("job id after restart %q (exit %d) reuses an id ≤ %d", next, code, acked[len(acked)-1])
	}
	t.Logf("%d acknowledged submissions survived kill -9", len(acked))
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := netListen()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return portOf(l)
}
