package agent

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/units"
)

// ReasonDiskFull is the drain reason of a node whose spool or temporary
// filesystem is (nearly) full.
const ReasonDiskFull = "disk full"

// diskCheckEvery is how often the built-in disk check runs.
const diskCheckEvery = 15 * time.Second

// healthLoop runs the node's health checks until ctx ends: the built-in
// disk check always, HealthCheckProgram every HealthCheckInterval when
// configured. A failing check drains the node with its reason; once every
// check passes again, the drain this agent caused is lifted (an admin's
// drain, with another reason, stays).
func (a *Agent) healthLoop(ctx context.Context) {
	every := time.Duration(0)
	var lastProg time.Time
	progReason := ""
	tick := time.NewTicker(diskCheckEvery)
	defer tick.Stop()
	for {
		// Read each round: scontrol reconfigure may set, change or
		// remove the program.
		cfg := a.conf()
		prog, progEvery := cfg.HealthCheckProgram, cfg.HealthCheckInterval
		if e := healthEvery(prog, progEvery); e != every {
			every = e
			tick.Reset(every)
		}
		if prog == "" {
			progReason = ""
		}
		reason := a.diskCheck()
		if prog != "" && progEvery > 0 && time.Since(lastProg) >= progEvery && a.healthStateMatches() {
			lastProg = time.Now()
			progReason = a.runHealthProgram(ctx, prog)
		}
		if reason == "" {
			reason = progReason
		}
		a.setHealth(reason)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// healthEvery is how often the loop wakes: for the disk check, and for
// the program when it runs more often.
func healthEvery(prog string, progEvery time.Duration) time.Duration {
	if prog != "" && progEvery > 0 {
		return min(diskCheckEvery, progEvery)
	}
	return diskCheckEvery
}

// healthStateMatches applies HealthCheckNodeState: the program runs only
// on nodes in one of the listed states (ANY, the default: always; IDLE or
// NONDRAINED_IDLE: no job here; ALLOC: every CPU in use; MIXED: some).
// CYCLE, which staggers the runs over the cluster, runs them as ANY.
func (a *Agent) healthStateMatches() bool {
	want := strings.ToUpper(a.conf().HealthCheckNodeState)
	if want == "" {
		return true
	}
	used := 0
	a.mu.Lock()
	for _, j := range a.jobs {
		j.mu.Lock()
		used += cpusOn(j.model, a.node)
		j.mu.Unlock()
	}
	a.mu.Unlock()
	total := 0
	if nc, ok := a.conf().Node(a.node); ok {
		total = nc.CPUs
	}
	for _, s := range strings.Split(want, ",") {
		switch strings.TrimSpace(s) {
		case "ANY", "CYCLE":
			return true
		case "IDLE", "NONDRAINED_IDLE":
			if used == 0 {
				return true
			}
		case "ALLOC":
			if used > 0 && used >= total {
				return true
			}
		case "MIXED":
			if used > 0 && used < total {
				return true
			}
		}
	}
	return false
}

// setHealth reports the first verdict and every change ("" = healthy).
// The first matters too: a node drained by an earlier agent's check is
// lifted when this agent's first check passes.
func (a *Agent) setHealth(reason string) {
	a.mu.Lock()
	prev, known := a.unhealthy, a.healthKnown
	a.unhealthy, a.healthKnown = reason, true
	a.mu.Unlock()
	switch {
	case known && reason == prev:
	case reason != "":
		a.log.Warn("node unhealthy: draining", "reason", reason)
		a.report(healthMsg(reason))
	default:
		if known {
			a.log.Info("node healthy again", "was", prev)
		} else {
			a.log.Info("node healthy")
		}
		a.report(healthMsg(""))
	}
}

func healthMsg(reason string) *pb.AgentMessage {
	return &pb.AgentMessage{Msg: &pb.AgentMessage_Health{Health: &pb.NodeHealth{Healthy: reason == "", Reason: reason}}}
}

// drainSelf drains the node for a failure only an administrator can clear
// (scontrol update State=RESUME): the health checks never lift it.
func (a *Agent) drainSelf(reason string) {
	a.report(&pb.AgentMessage{Msg: &pb.AgentMessage_Health{Health: &pb.NodeHealth{Reason: reason, Sticky: true}}})
}

// resendHealth repeats the last verdict, healthy or not, to a controller
// met anew: the controller drains or lifts its health drain by it, and a
// verdict sent while the stream was down is not lost.
func (a *Agent) resendHealth() {
	a.mu.Lock()
	reason, known := a.unhealthy, a.healthKnown
	a.mu.Unlock()
	if known {
		a.report(healthMsg(reason))
	}
}

// diskCheck returns ReasonDiskFull when the spool's or the temporary
// directory's filesystem has less free space than the threshold:
// DroverMinFreeSpace in slurm.conf (a size, "512M"), else 1 GiB or 2% of
// the filesystem, whichever is less; or fewer free inodes than
// minFreeInodes.
func (a *Agent) diskCheck() string {
	fixed := int64(-1)
	if v, ok := a.conf().Get("DroverMinFreeSpace"); ok {
		if mib, err := units.ParseMemMiB(v); err == nil {
			fixed = mib << 20
		}
	}
	for _, dir := range []string{a.spool, os.TempDir()} {
		var st unix.Statfs_t
		if err := unix.Statfs(dir, &st); err != nil {
			continue
		}
		size := int64(st.Blocks) * st.Bsize
		free := int64(st.Bavail) * st.Bsize
		limit := fixed
		if limit < 0 {
			limit = min(1<<30, size/50)
		}
		if free < limit {
			return ReasonDiskFull
		}
		// Out of inodes, writes fail with ENOSPC as surely as out of
		// blocks: each job takes a few in the spool (its directory, the
		// script, the supervisor's files). Filesystems that allocate
		// inodes as needed report none (Files 0) and are skipped.
		if st.Files > 0 && st.Ffree < min(minFreeInodes, st.Files/50) {
			return ReasonDiskFull
		}
	}
	return ""
}

// minFreeInodes is the free inodes below which a filesystem is full
// (2% of its inodes if that is less).
const minFreeInodes = 4096

// runHealthProgram runs HealthCheckProgram as root; a non-zero exit (or
// no exit within a minute) is a failure whose reason is the first line the
// program printed, or a line saying how it ended.
func (a *Agent) runHealthProgram(ctx context.Context, prog string) string {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog)
	cmd.Env = append(os.Environ(), "SLURMD_NODENAME="+a.node, "SLURM_CONF="+a.absConf())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err == nil {
		return ""
	}
	if line, _, _ := strings.Cut(strings.TrimSpace(out.String()), "\n"); line != "" {
		return clipReason(line)
	}
	if ctx.Err() != nil {
		return "HealthCheckProgram timed out"
	}
	return clipReason(fmt.Sprintf("HealthCheckProgram failed: %v", err))
}

func clipReason(s string) string {
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}
