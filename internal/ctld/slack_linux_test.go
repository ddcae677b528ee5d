package ctld

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// slackChild makes this test binary, run by TestUseTimerSlack, call
// UseTimerSlack and print the process id and the slack of every thread.
const slackChild = "DROVER_TEST_SLACK_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(slackChild) != "" {
		pid := os.Getpid()
		UseTimerSlack(os.Getenv)
		// Every thread's, the runtime's monitor among them.
		tasks, _ := os.ReadDir("/proc/self/task")
		slack := map[string]bool{}
		for _, task := range tasks {
			b, err := os.ReadFile("/proc/" + task.Name() + "/timerslack_ns") // per thread: /proc/TID
			if err == nil {
				slack[strings.TrimSpace(string(b))] = true
			}
		}
		fmt.Printf("pid %d %d slack %s", pid, os.Getpid(), strings.Join(slices.Collect(maps.Keys(slack)), ","))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The controller's process runs again with the slack on all its threads,
// under the same id, or keeps what it has when that is enough or
// DROVER_CTLD_TIMERSLACK=0.
func TestUseTimerSlack(t *testing.T) {
	runtime.LockOSThread()
	inherited, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	runtime.UnlockOSThread()
	if err != nil {
		t.Skipf("PR_GET_TIMERSLACK: %v", err)
	}
	for _, c := range []struct {
		env  string
		want int
	}{
		{"", max(inherited, int(time.Millisecond))},
		{"DROVER_CTLD_TIMERSLACK=3ms", max(inherited, int(3*time.Millisecond))},
		{"DROVER_CTLD_TIMERSLACK=0", inherited},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), slackChild+"=1")
		if c.env != "" {
			cmd.Env = append(cmd.Env, c.env)
		}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%q: child: %v (%s)", c.env, err, out)
		}
		f := strings.Fields(string(out))
		if len(f) != 5 || f[1] != f[2] {
			t.Fatalf("%q: child printed %q, want its process id twice (an exec keeps it)", c.env, out)
		}
		if f[4] != strconv.Itoa(c.want) {
			t.Errorf("%q: the threads' slack is %s ns, want %d on every one", c.env, f[4], c.want)
		}
	}
}

func TestTimerSlackSetting(t *testing.T) {
	for v, want := range map[string]time.Duration{"": time.Millisecond, "250us": 250 * time.Microsecond, "0": 0, "-1ms": 0, "x": 0} {
		d, ok := timerSlack(v)
		if d != want || ok != (want > 0) {
			t.Errorf("timerSlack(%q) = %v, %v; want %v", v, d, ok, want)
		}
	}
}
