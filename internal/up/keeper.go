package up

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"
)

// keeper runs one daemon of the cluster (the controller or an agent) and
// starts it again when it dies, as an init system would: after 1 s, then
// twice as long each time it dies again soon, up to maxBackoff; a daemon
// that stayed up for healthyAfter starts over at 1 s. Every restart is
// said on out, with how the daemon ended.
type keeper struct {
	name  string
	start func() (*child, error)
	out   io.Writer

	mu  sync.Mutex
	cur *child
}

const (
	minBackoff   = time.Second
	maxBackoff   = 30 * time.Second
	healthyAfter = time.Minute
)

// run keeps the daemon up until ctx ends; first is the child already
// started.
func (k *keeper) run(ctx context.Context, first *child) {
	c := first
	backoff := minBackoff
	for {
		k.mu.Lock()
		k.cur = c
		k.mu.Unlock()
		began := time.Now()
		select {
		case <-ctx.Done():
			return
		case <-c.done:
		}
		if ctx.Err() != nil {
			return
		}
		if time.Since(began) >= healthyAfter {
			backoff = minBackoff
		}
		fmt.Fprintf(k.out, "drover: %s exited (%s); restarting in %s\n", k.name, c.cmd.ProcessState, backoff)
		for {
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			backoff = min(2*backoff, maxBackoff)
			next, err := k.start()
			if err == nil {
				c = next
				fmt.Fprintf(k.out, "drover: %s restarted (pid %d)\n", k.name, next.cmd.Process.Pid)
				break
			}
			fmt.Fprintf(k.out, "drover: cannot restart %s: %v; trying again in %s\n", k.name, err, backoff)
		}
	}
}

// stop ends the current process (SIGTERM, then SIGKILL after grace).
func (k *keeper) stop(grace time.Duration) {
	k.mu.Lock()
	c := k.cur
	k.mu.Unlock()
	if c != nil {
		c.stop(grace)
	}
}
