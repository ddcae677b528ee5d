package srun

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/jobspec"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/stepio"
)

// session is one step as srun sees it: the listener the nodes dial, the
// tasks' exits, and the terminal when --pty.
type session struct {
	env   *cli.Env
	c     cli.Client
	opts  *jobspec.Options
	ln    net.Listener
	key   string
	jobID model.JobID
	job   *model.Job
	step  *model.Step

	mu      sync.Mutex
	conns   map[int]*stepio.Conn // by node index in the step's layout
	exits   map[int]taskExit
	outputs map[uint64]*lineBuffer // (task, stream) → pending partial line when labelling
	firstAt time.Time              // first task exit (for -W)
	killed  bool                   // srun asked for the step's end
	ttyFd   int                    // srun's terminal with --pty, else -1
	// sattach's --output-filter/--error-filter: the one task shown, or -1.
	outFilter, errFilter int
}

type taskExit struct {
	code, sig int
	msg       string
}

func newSession(env *cli.Env, c cli.Client, opts *jobspec.Options, jobID model.JobID) (*session, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(env.LaunchHost(), "0"))
	if err != nil {
		return nil, fmt.Errorf("unable to listen for task I/O: %v", err)
	}
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	return &session{env: env, c: c, opts: opts, ln: ln, key: hex.EncodeToString(key), jobID: jobID,
		exits: map[int]taskExit{}, outputs: map[uint64]*lineBuffer{}, conns: map[int]*stepio.Conn{}, ttyFd: -1, outFilter: -1, errFilter: -1}, nil
}

// stepSpec turns srun's options into a step request.
func (s *session) stepSpec(args []string) (*model.StepSpec, error) {
	o, js := s.opts, s.opts.Spec
	spec := &model.StepSpec{
		Name: js.Name, Argv: js.Argv, Env: js.Env, WorkDir: js.WorkDir, NTasks: js.NTasks,
		MinNodes: js.MinNodes, MaxNodes: js.MaxNodes, TasksPerNode: js.TasksPerNode, CPUsPerTask: js.CPUsPerTask,
		NodeList: js.ReqNodes, ExcNodes: js.ExcNodes, Exact: o.Exact, Overlap: o.Overlap,
		IOAddr: s.ln.Addr().String(), IOKey: s.key, StdOut: js.StdOut, StdErr: js.StdErr, StdIn: js.StdIn,
		Input: o.Input, Pty: o.Pty, Label: o.Label, SrunPID: os.Getpid(), SrunHost: s.env.LaunchHost(),
		SubmitLine: js.SubmitLine, TimeLimit: max(js.TimeLimit, 0), GPUs: js.GPUs,
	}
	if d := o.Distribution; d != "" {
		kind, _, _ := cut(d, ":")
		spec.Distribution = model.Distribution(kind)
	}
	if !nameGiven(args) && len(js.Argv) > 0 {
		spec.Name = baseName(js.Argv[0])
	}
	if o.MultiProg {
		data, err := os.ReadFile(js.Argv[0])
		if err != nil {
			return nil, fmt.Errorf("Unable to open multi-prog file %s: %v", js.Argv[0], err)
		}
		n := js.NTasks
		switch {
		case n > 0:
		case js.TasksPerNode > 0 && js.MinNodes > 0:
			n = js.TasksPerNode * js.MinNodes
		case js.MinNodes > 0:
			n = js.MinNodes
		default:
			n = 1
		}
		argv, err := jobspec.ParseMultiProg(data, n)
		if err != nil {
			return nil, err
		}
		spec.TaskArgv, spec.NTasks = argv, n
	}
	return spec, nil
}

// create asks for the step, waiting while the job's other steps hold the
// CPUs it needs.
//
// The first refusal is retried quietly once the job changes: a step that
// just ended on its nodes may not be recorded yet when its srun returns
// and the script's next srun asks (the nodes report a step's end on
// their own stream), and that is no wait worth telling the user about.
func (s *session) create(ctx context.Context, spec *model.StepSpec) error {
	waited, tries := false, 0
	for {
		job, st, err := s.c.CreateStep(ctx, s.jobID, spec)
		if err == nil {
			s.job, s.step = job, st
			if waited {
				s.env.Infof("Step created for StepId=%d.%s", s.jobID, st.ID)
			}
			return nil
		}
		if !errors.Is(err, cli.ErrStepBusy) {
			return err
		}
		tries++
		if !waited && tries > 1 {
			waited = true
			s.env.Infof("Job %d step creation temporarily disabled, retrying (%s)", s.jobID, err)
		}
		if err := s.waitForChange(ctx); err != nil {
			return err
		}
	}
}

// waitForChange returns when the job's steps (or the job) change, or
// after a second at most.
func (s *session) waitForChange(ctx context.Context) error {
	wctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	first := true
	var ended bool
	_ = s.c.WatchJobs(wctx, []model.JobID{s.jobID}, func(jobs []*model.Job) bool {
		if len(jobs) == 0 || jobs[0].Finished() || jobs[0].Completing {
			ended = true
			return false
		}
		if first {
			first = false
			return true
		}
		return false
	})
	if ended {
		return errors.New("Job/step already completing or completed")
	}
	return ctx.Err()
}

// nodeConnected takes a node's I/O connection (replacing the one of an
// agent that restarted) and reads it; allConnected is called once every
// node of the step has one.
func (s *session) nodeConnected(conn *stepio.Conn, node int, allConnected, finish func()) {
	s.mu.Lock()
	old := s.conns[node]
	s.conns[node] = conn
	all := len(s.conns) == len(s.step.Layout)
	s.mu.Unlock()
	if old != nil {
		old.Close()
	}
	if all {
		allConnected()
	}
	go s.readNode(conn, node, finish)
}

// run serves the step's I/O until every task ended, and returns srun's
// exit status.
func (s *session) run(ctx context.Context) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st := s.step
	id := fmt.Sprintf("%d.%s", s.jobID, st.ID)
	restore := s.setupTerminal()
	defer restore()

	done := make(chan struct{})
	var once sync.Once
	finish := func() { once.Do(func() { close(done) }) }
	// Every node dials in once; a node whose agent restarted dials in
	// again (its tasks live on under the node's supervisor) and replaces
	// its old connection. The session ends when every task reported its
	// exit, or the controller says the step or the job is over.
	connected := make(chan struct{})
	var connectedOnce sync.Once
	allConnected := func() { connectedOnce.Do(func() { close(connected) }) }
	go func() {
		for {
			raw, err := s.ln.Accept()
			if err != nil {
				return
			}
			// The handshake runs beside the accept loop: a connection that
			// says nothing (anyone may dial this port) must not hold up
			// the nodes' ones.
			go func() {
				conn, h, err := stepio.Accept(raw, s.key)
				if err != nil || h.Job != uint32(s.jobID) || h.Step != int32(st.ID) || h.Node >= len(st.Layout) {
					raw.Close()
					return
				}
				s.nodeConnected(conn, h.Node, allConnected, finish)
			}()
		}
	}()
	go func() {
		select {
		case <-connected:
			s.sendSize()
			s.pumpStdin()
		case <-done:
		}
	}()
	go func() {
		// The controller's word is only needed when tasks never report
		// (node lost, cancelled before launch): watching from the start
		// would put a listing on the controller in every step's launch.
		select {
		case <-time.After(250 * time.Millisecond):
			s.watchStep(ctx, finish)
		case <-done:
		}
	}()
	go s.handleSignals(ctx, id, done)
	if w := s.opts.WaitSec; w > 0 {
		go s.waitLimit(ctx, id, time.Duration(w)*time.Second, done)
	}
	<-done
	// A step that ended without every task's word (node lost, cancelled
	// before launch) may still have frames in flight: give them a moment.
	if !s.allExited() {
		select {
		case <-time.After(2 * time.Second):
		case <-s.whenAllExited(ctx):
		}
	}
	s.flushLabels()
	return s.report(id)
}

// readNode reads one node's frames.
func (s *session) readNode(conn *stepio.Conn, node int, finish func()) {
	defer conn.Close()
	for {
		t, task, p, err := conn.Recv()
		if err != nil {
			return
		}
		switch t {
		case stepio.Stdout:
			if s.outFilter < 0 || int(task) == s.outFilter {
				s.output(s.env.Stdout, task, 0, p)
			}
		case stepio.Stderr:
			if s.errFilter < 0 || int(task) == s.errFilter {
				s.output(s.env.Stderr, task, 1, p)
			}
		case stepio.Exit:
			code, sig, msg := stepio.ParseExit(p)
			s.mu.Lock()
			s.exits[int(task)] = taskExit{code, sig, msg}
			if s.firstAt.IsZero() {
				s.firstAt = time.Now()
			}
			all := len(s.exits) >= s.step.NTasks
			s.mu.Unlock()
			// -K ends the others' tasks; nothing is left to end once
			// every task has reported.
			if (code != 0 || sig != 0 || msg != "") && s.opts.KillOnBadExit && !all {
				s.killStep(fmt.Sprintf("%d.%s", s.jobID, s.step.ID))
			}
			if all {
				finish()
			}
		}
	}
}

// watchStep ends the session when the controller says the step (or the
// job) is over even though some task never reported.
func (s *session) watchStep(ctx context.Context, finish func()) {
	_ = s.c.WatchJobs(ctx, []model.JobID{s.jobID}, func(jobs []*model.Job) bool {
		if len(jobs) == 0 {
			finish()
			return false
		}
		j := jobs[0]
		if j.Finished() {
			finish()
			return false
		}
		if st := j.Step(s.step.ID); st != nil && st.Finished() {
			finish()
			return false
		}
		return true
	})
}

func (s *session) allExited() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.exits) >= s.step.NTasks
}

func (s *session) whenAllExited(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		for !s.allExited() && ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return ch
}

// connList lists the nodes' current connections.
func (s *session) connList() []*stepio.Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*stepio.Conn, 0, len(s.conns))
	for _, c := range s.conns {
		out = append(out, c)
	}
	return out
}

// pumpStdin copies srun's stdin to the nodes; they give it to the tasks
// --input chose.
func (s *session) pumpStdin() {
	broadcast := func(t byte, p []byte) {
		for _, c := range s.connList() {
			_ = c.Send(t, stepio.AllTasks, p)
		}
	}
	in := s.env.Stdin
	if in == nil || s.opts.Input == "none" || s.opts.Spec.StdIn != "" {
		broadcast(stepio.StdinEOF, nil)
		return
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := in.Read(buf)
		if n > 0 {
			broadcast(stepio.Stdin, buf[:n])
		}
		if err != nil {
			if !s.opts.Pty {
				broadcast(stepio.StdinEOF, nil)
			}
			return
		}
	}
}

// sendSignal forwards a signal to every task. It goes out of band, through
// the controller to the nodes (as Slurm's srun signals the nodes by RPC, not
// through the I/O stream): the stream may be held back behind stdin that a
// task does not read, and a Ctrl-C must not wait for that. The stream is the
// fallback when the controller cannot be asked.
func (s *session) sendSignal(sig syscall.Signal) {
	ctx, cancel := context.WithTimeout(context.Background(), signalTimeout)
	defer cancel()
	res, err := s.c.Signal(ctx, cli.JobSelection{UID: -1, Targets: []cli.JobTarget{{
		ID: s.jobID, Raw: fmt.Sprintf("%d.%s", s.jobID, s.step.ID), HasStep: true, Step: s.step.ID,
	}}}, cli.SignalRequest{Signal: int(sig)})
	if err == nil && (len(res) == 0 || res[0].Error == "") {
		return
	}
	for _, c := range s.connList() {
		_ = c.Send(stepio.Signal, stepio.AllTasks, []byte(strconv.Itoa(int(sig))))
	}
}

// signalTimeout bounds the controller's answer to a forwarded signal.
const signalTimeout = 5 * time.Second

// killStep cancels the step through the controller (kill sequence on every
// node), once.
func (s *session) killStep(id string) {
	s.mu.Lock()
	if s.killed {
		s.mu.Unlock()
		return
	}
	s.killed = true
	s.mu.Unlock()
	s.env.Infof("Terminating StepId=%s", id)
	go func() {
		_, _ = s.c.Signal(context.Background(), cli.JobSelection{UID: -1, Targets: []cli.JobTarget{{
			ID: s.jobID, Raw: id, HasStep: true, Step: s.step.ID,
		}}}, cli.SignalRequest{})
	}()
}

// handleSignals: Ctrl-C once prints the tasks' status, twice within a
// second forwards SIGINT, a third time kills the step; other signals are
// forwarded.
func (s *session) handleSignals(ctx context.Context, id string, done <-chan struct{}) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
		syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGCONT, syscall.SIGALRM)
	defer signal.Stop(sigs)
	var lastInt time.Time
	ints := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-done:
			return
		case sig := <-sigs:
			if sig != syscall.SIGINT || s.opts.Pty {
				s.sendSignal(sig.(syscall.Signal))
				continue
			}
			_, disabled := s.opts.Extra["disable-status"]
			switch {
			case ints > 0 && time.Since(lastInt) < time.Second || disabled:
				ints++
				if ints > 2 {
					s.env.Infof("forcing job termination")
					s.killStep(id)
					continue
				}
				s.env.Infof("sending Ctrl-C to StepId=%s", id)
				s.sendSignal(syscall.SIGINT)
				if disabled {
					ints = 2
				}
			default:
				ints = 1
				s.env.Infof("interrupt (one more within 1 sec to abort)")
				s.printStatus(id)
			}
			lastInt = time.Now()
		}
	}
}

// printStatus says which tasks run and which ended, as srun does on one
// Ctrl-C.
func (s *session) printStatus(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var running []int
	for r := 0; r < s.step.NTasks; r++ {
		if _, ok := s.exits[r]; !ok {
			running = append(running, r)
		}
	}
	if len(running) > 0 {
		s.env.Infof("StepId=%s %s: running", id, taskWord(running))
	}
	byStatus := map[string][]int{}
	for r, e := range s.exits {
		k := "exited"
		if e.code != 0 {
			k = fmt.Sprintf("exited abnormally")
		}
		byStatus[k] = append(byStatus[k], r)
	}
	for k, ranks := range byStatus {
		slices.Sort(ranks)
		s.env.Infof("StepId=%s %s: %s", id, taskWord(ranks), k)
	}
}

// waitLimit is -W: once the first task exited, the others get sec more.
func (s *session) waitLimit(ctx context.Context, id string, d time.Duration, done <-chan struct{}) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-done:
			return
		case <-tick.C:
		}
		s.mu.Lock()
		first := s.firstAt
		s.mu.Unlock()
		if !first.IsZero() && time.Since(first) >= d {
			s.env.Infof("First task exited %s ago", d.Round(time.Second))
			s.printStatus(id)
			s.killStep(id)
			return
		}
	}
}

// report prints Slurm's failure lines, grouped by node and status, and
// returns srun's status: 128 plus the highest signal that killed a task,
// else the highest exit code (as Slurm, a killed task's status outranks
// any exit code).
func (s *session) report(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	type group struct {
		node string
		msg  string
	}
	groups := map[group][]int{}
	var order []group
	status, topSig := 0, 0
	for _, n := range s.step.Layout {
		for _, r := range n.Tasks {
			e, ok := s.exits[r]
			if !ok {
				continue
			}
			status, topSig = max(status, e.code), max(topSig, e.sig)
			msg := ""
			switch {
			case e.msg != "":
				msg = e.msg
				status = max(status, 1)
			case e.sig != 0:
				msg = signalName(e.sig)
			case e.code != 0:
				msg = fmt.Sprintf("Exited with exit code %d", e.code)
			}
			if msg == "" {
				continue
			}
			g := group{n.Node, msg}
			if _, seen := groups[g]; !seen {
				order = append(order, g)
			}
			groups[g] = append(groups[g], r)
		}
	}
	for _, g := range order {
		s.env.Errorf("%s: %s: %s", g.node, taskWord(groups[g]), g.msg)
	}
	if topSig != 0 {
		status = 128 + topSig
	}
	if missing := s.step.NTasks - len(s.exits); missing > 0 {
		status = max(status, 1)
		if !s.killed {
			s.env.Errorf("StepId=%s: %d task(s) ended without reporting (node lost or step cancelled)", id, missing)
		}
	}
	return status
}

// taskWord is "task 3" or "tasks 0-2,5".
func taskWord(ranks []int) string {
	if len(ranks) == 1 {
		return "task " + strconv.Itoa(ranks[0])
	}
	slices.Sort(ranks)
	var b bytes.Buffer
	for i := 0; i < len(ranks); {
		j := i
		for j+1 < len(ranks) && ranks[j+1] == ranks[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(ranks[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(ranks[j]))
		}
		i = j + 1
	}
	return "tasks " + b.String()
}

// output writes a task's bytes, prefixed "rank: " per line with -l.
func (s *session) output(w io.Writer, task uint32, stream int, p []byte) {
	if !s.opts.Label {
		s.mu.Lock()
		_, _ = w.Write(p)
		s.mu.Unlock()
		return
	}
	key := uint64(task)<<1 | uint64(stream)
	s.mu.Lock()
	defer s.mu.Unlock()
	lb := s.outputs[key]
	if lb == nil {
		lb = &lineBuffer{w: w, prefix: []byte(labelPrefix(int(task), s.step.NTasks))}
		s.outputs[key] = lb
	}
	lb.write(p, s.opts.Unbuffered)
}

func (s *session) flushLabels() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, lb := range s.outputs {
		lb.flush()
	}
}

// labelPrefix is Slurm's "%*d: " with the width of the highest rank.
func labelPrefix(rank, ntasks int) string {
	w := len(strconv.Itoa(max(ntasks-1, 0)))
	return fmt.Sprintf("%*d: ", w, rank)
}

// lineBuffer holds a task's partial last line until its newline comes.
type lineBuffer struct {
	w       io.Writer
	prefix  []byte
	partial []byte
}

func (l *lineBuffer) write(p []byte, unbuffered bool) {
	var out []byte
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.partial = append(l.partial, p...)
			break
		}
		out = append(out, l.prefix...)
		out = append(out, l.partial...)
		out = append(out, p[:i+1]...)
		l.partial = l.partial[:0]
		p = p[i+1:]
	}
	if unbuffered && len(l.partial) > 0 {
		out = append(out, l.prefix...)
		out = append(out, l.partial...)
		l.partial = l.partial[:0]
	}
	if len(out) > 0 {
		_, _ = l.w.Write(out)
	}
}

func (l *lineBuffer) flush() {
	if len(l.partial) > 0 {
		_, _ = l.w.Write(append(append(append([]byte(nil), l.prefix...), l.partial...), '\n'))
		l.partial = nil
	}
}

// nodeListOf is the step's node list in Slurm's compressed form.
func nodeListOf(st *model.Step) string { return hostlist.Compress(st.NodeNames()) }
