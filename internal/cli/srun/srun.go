// Package srun is the srun command. Outside an allocation it asks for one,
// runs the command on the allocated node, streams the task's stdout and
// stderr back live (the node dials srun, as slurmstepd does), forwards
// stdin, and exits with the task's status.
package srun

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/jobspec"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/stepio"
)

// LaunchHost is the address nodes use to reach this srun; the dispatcher
// sets it from the controller's address (the interface that routes there).
var LaunchHost = "127.0.0.1"

// Run is the srun entry point.
func Run(ctx context.Context, env *cli.Env, args []string) int {
	opts, code, done := cli.ParseJob(env, jobspec.Srun, args)
	if done {
		return code
	}
	if len(opts.Spec.Argv) == 0 {
		env.Errorf("No command given to execute.")
		return env.ExitError()
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(LaunchHost, "0"))
	if err != nil {
		env.Errorf("unable to listen for task I/O: %v", err)
		return env.ExitError()
	}
	defer ln.Close()
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	opts.Spec.IOAddr, opts.Spec.IOKey = ln.Addr().String(), hex.EncodeToString(key)

	c, err := env.Client()
	if err != nil {
		env.Errorf("Unable to allocate resources: %v", err)
		return env.ExitError()
	}
	id, err := c.SubmitJob(ctx, opts.Spec)
	if err != nil {
		env.Errorf("Unable to allocate resources: %v", err)
		return env.ExitError()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	go func() {
		select {
		case <-sigs:
			env.Infof("Job step aborted: Waiting up to %d seconds for job step to finish.", 32)
			_, _ = c.Signal(context.Background(), cli.JobSelection{UID: -1, Targets: []cli.JobTarget{{ID: id, Raw: fmt.Sprint(id)}}}, cli.SignalRequest{})
		case <-ctx.Done():
		}
	}()

	type exit struct {
		code, sig int
		msg       string
	}
	exitc := make(chan exit, 1)
	go func() {
		conn, err := acceptTask(ln, opts.Spec.IOKey)
		if err != nil {
			return
		}
		defer conn.Close()
		go pumpStdin(env.Stdin, conn)
		for {
			t, p, err := conn.Recv()
			if err != nil {
				return
			}
			switch t {
			case stepio.Stdout:
				_, _ = env.Stdout.Write(p)
			case stepio.Stderr:
				_, _ = env.Stderr.Write(p)
			case stepio.Exit:
				code, sig, msg := stepio.ParseExit(p)
				exitc <- exit{code, sig, msg}
				return
			}
		}
	}()

	// Watch the job: announce waiting, and notice an end that never
	// reached us through the I/O stream (cancel before start, node lost).
	queued := false
	var final *model.Job
	endc := make(chan struct{})
	go func() {
		defer close(endc)
		_ = c.WatchJobs(ctx, []model.JobID{id}, func(jobs []*model.Job) bool {
			if len(jobs) == 0 {
				return false
			}
			j := jobs[0]
			switch {
			case j.State == model.JobPending && !queued:
				queued = true
				env.Infof("job %d queued and waiting for resources", id)
			case j.State == model.JobRunning && queued:
				queued = false
				env.Infof("job %d has been allocated resources", id)
			case j.Finished():
				final = j
				return false
			}
			return true
		})
	}()

	node := ""
	select {
	case e := <-exitc:
		if j := lastJob(ctx, c, id); j != nil {
			node = j.BatchHost()
		}
		return report(env, node, e.code, e.sig, e.msg)
	case <-endc:
		// The job ended; give a late exit frame a moment to arrive.
		select {
		case e := <-exitc:
			if final != nil {
				node = final.BatchHost()
			}
			return report(env, node, e.code, e.sig, e.msg)
		case <-time.After(2 * time.Second):
		}
		if final != nil {
			st, _ := final.DisplayState()
			env.Errorf("Job %d ended %s before its task reported (reason %s)", id, st, final.Reason)
		}
		return env.ExitError()
	}
}

func lastJob(ctx context.Context, c cli.Client, id model.JobID) *model.Job {
	l, err := c.ListJobs(ctx, cli.JobQuery{IDs: []model.JobID{id}})
	if err != nil || len(l.Jobs) == 0 {
		return nil
	}
	return l.Jobs[0]
}

func acceptTask(ln net.Listener, key string) (*stepio.Conn, error) {
	for {
		raw, err := ln.Accept()
		if err != nil {
			return nil, err
		}
		conn, _, err := stepio.Accept(raw, key)
		if err != nil {
			raw.Close()
			continue
		}
		return conn, nil
	}
}

func pumpStdin(r io.Reader, conn *stepio.Conn) {
	if r == nil {
		_ = conn.Send(stepio.StdinEOF, nil)
		return
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if conn.Send(stepio.Stdin, buf[:n]) != nil {
				return
			}
		}
		if err != nil {
			_ = conn.Send(stepio.StdinEOF, nil)
			return
		}
	}
}

// report prints Slurm's task-failure line and returns srun's status.
func report(env *cli.Env, node string, code, sig int, msg string) int {
	switch {
	case msg != "":
		env.Errorf("%s: task 0: %s", node, msg)
		return max(code, 1)
	case sig != 0:
		env.Errorf("%s: task 0: %s", node, signalName(sig))
		return 128 + sig
	case code != 0:
		env.Errorf("%s: task 0: Exited with exit code %d", node, code)
	}
	return code
}

func signalName(sig int) string {
	switch syscall.Signal(sig) {
	case syscall.SIGKILL:
		return "Killed"
	case syscall.SIGTERM:
		return "Terminated"
	case syscall.SIGSEGV:
		return "Segmentation fault"
	}
	return syscall.Signal(sig).String()
}
