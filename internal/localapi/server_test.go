package localapi

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/localwire"

	"github.com/drover-hpc/drover/client/local"
	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/rpcstats"
)

// fake is a service whose answers the tests set; it records the caller.
type fake struct {
	api.Service
	api.JoinTokens
	caller chan *api.Identity
	err    error
	block  chan struct{}
}

func (f *fake) who(ctx context.Context) {
	select {
	case f.caller <- api.IdentityFrom(ctx):
	default:
	}
}

func (f *fake) Ping(ctx context.Context) (*api.PingResult, error) {
	f.who(ctx)
	if f.block != nil {
		<-f.block
	}
	return &api.PingResult{Controllers: []api.ControllerStatus{{Host: "c1", Primary: true, Up: true, Leader: true}}}, f.err
}

func (f *fake) Signal(ctx context.Context, sel api.JobSelection, _ api.SignalRequest) ([]api.JobResult, error) {
	f.who(ctx)
	// The service's rule, reduced: only root acts on another's jobs.
	if id := api.IdentityFrom(ctx); id == nil || (id.UID != 0 && sel.UID != int64(id.UID)) {
		return nil, &api.Error{Code: api.CodeDenied, Msg: "Access/permission denied"}
	}
	return []api.JobResult{{Job: "1"}}, nil
}

func (f *fake) Priorities(ctx context.Context) (*api.PriorityInfo, error) {
	return &api.PriorityInfo{Shares: []api.ShareRow{{User: "u", LevelFS: 1 / zero(), NormUsage: zero() / zero()}}}, nil
}

func zero() float64 { return 0 }

func (f *fake) AcctJobs(ctx context.Context, _ acct.Query, fn func([]*acct.Job) error) error {
	if f.err != nil {
		return f.err
	}
	for i := range 3 {
		if err := fn([]*acct.Job{{JobID: uint32(i + 1)}}); err != nil {
			return err
		}
	}
	return nil
}

func (f *fake) WatchJobs(ctx context.Context, ids []model.JobID, fn func([]*model.Job) bool) error {
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			close(f.block)
			return ctx.Err()
		default:
		}
		if !fn([]*model.Job{{ID: ids[0], Spec: &model.JobSpec{}}}) {
			return nil
		}
		time.Sleep(time.Millisecond)
	}
}

func (f *fake) SubmitJob(ctx context.Context, spec *model.JobSpec) (model.JobID, error) {
	if spec.Umask == nil || *spec.Umask != 0 {
		return 0, errors.New("umask 0 lost")
	}
	return 42, f.err
}

// serve starts the adapter on a socket shared with a stand-in for gRPC
// (which only echoes its first bytes) and returns the socket's path.
func serve(t *testing.T, f *fake, lim Limits) (string, net.Listener) {
	t.Helper()
	sock, _, others := start(t, f, lim)
	return sock, others
}

// start serves svc on a new socket until the test ends.
func start(t *testing.T, svc Backend, lim Limits) (string, *Server, net.Listener) {
	t.Helper()
	dir, err := os.MkdirTemp("", "localapi")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv := New(ctx, svc, lim, rpcstats.New(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	others := Split(l, srv.Timeout(), srv.ServeConn)
	t.Cleanup(func() { others.Close() })
	return sock, srv, others
}

func newFake() *fake { return &fake{caller: make(chan *api.Identity, 1)} }

func TestCallsCarryTheKernelsIdentity(t *testing.T) {
	f := newFake()
	sock, _ := serve(t, f, Limits{})
	c := local.Dial(sock)
	defer c.Close()
	r, err := c.Ping(context.Background())
	if err != nil || len(r.Controllers) != 1 || r.Controllers[0].Host != "c1" {
		t.Fatalf("Ping = %+v, %v", r, err)
	}
	id := <-f.caller
	if id == nil || id.UID != uint32(os.Getuid()) || id.GID != uint32(os.Getgid()) || id.Cluster || id.Node != "" {
		t.Fatalf("identity %+v, want uid %d gid %d and nothing more", id, os.Getuid(), os.Getgid())
	}
}

// raw opens a connection and sends the preface, as the client does.
func raw(t *testing.T, sock string) net.Conn {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Write(localwire.Preface()); err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	return c
}

// lastAnswer reads the error answer a refused connection gets, then
// checks that the controller closed it.
func lastAnswer(t *testing.T, c net.Conn) string {
	t.Helper()
	b, err := localwire.ReadFrame(c, localwire.MaxAnswer)
	if err != nil {
		t.Fatalf("no answer before the connection closed: %v", err)
	}
	var a localwire.Answer
	if err := localwire.DecodeAnswer(b, &a); err != nil || a.Err == nil {
		t.Fatalf("answer %s is no error (%v)", b, err)
	}
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("connection still open after the error (read: %v)", err)
	}
	return a.Err.Msg
}

func TestMalformedAndOversizedFramesEndTheConnection(t *testing.T) {
	sock, _ := serve(t, newFake(), Limits{})
	c := raw(t, sock)
	if err := localwire.WriteFrame(c, []byte{0xff, 0xff, 0xff}); err != nil {
		t.Fatal(err)
	}
	if msg := lastAnswer(t, c); !strings.Contains(msg, "malformed message") {
		t.Errorf("malformed frame answered %q", msg)
	}
	c = raw(t, sock)
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], localwire.MaxRequest+1)
	if _, err := c.Write(hdr[:]); err != nil {
		t.Fatal(err)
	}
	if msg := lastAnswer(t, c); !strings.Contains(msg, "message too large") {
		t.Errorf("oversized frame answered %q", msg)
	}
}

func TestOtherVersionsAndUnknownCallsAreRefusedClearly(t *testing.T) {
	sock, _ := serve(t, newFake(), Limits{})
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = c.Write(append([]byte(localwire.Magic+"\x09"), 1, 2, 3, 4, 5, 6, 7, 8))
	if msg := lastAnswer(t, c); !strings.Contains(msg, "another version or build") {
		t.Errorf("version 9 answered %q", msg)
	}
	c = raw(t, sock)
	b, _ := localwire.Encode(&localwire.Request{Method: "NoSuchCall"})
	_ = localwire.WriteFrame(c, b)
	b, err = localwire.ReadFrame(c, localwire.MaxAnswer)
	var a localwire.Answer
	if err != nil || localwire.DecodeAnswer(b, &a) != nil || a.Err == nil || !strings.Contains(a.Err.Msg, "unknown call NoSuchCall") {
		t.Fatalf("unknown call answered %s (%v)", b, err)
	}
}

func TestSilentAndSlowConnectionsAreClosed(t *testing.T) {
	sock, _ := serve(t, newFake(), Limits{IO: 100 * time.Millisecond, Idle: 300 * time.Millisecond})
	for name, send := range map[string][]byte{
		"says nothing":            nil,
		"stops inside its magic":  []byte("DR"),
		"stops inside a frame":    append(localwire.Preface(), 0, 0, 0, 9, 1),
		"stays idle after a call": nil, // below: after one call
	} {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write(send)
		if name == "stays idle after a call" {
			_, _ = c.Write(localwire.Preface())
			b, _ := localwire.Encode(&localwire.Request{Method: "Ping"})
			_ = localwire.WriteFrame(c, b)
			if _, err := localwire.ReadFrame(c, localwire.MaxAnswer); err != nil {
				t.Fatal(err)
			}
		}
		// Bounded: the limits close it well within this.
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		start := time.Now()
		for {
			if _, err = c.Read(make([]byte, 512)); err != nil {
				break
			}
		}
		if err != io.EOF {
			t.Errorf("a connection that %s: read ended with %v after %v, want the controller to close it", name, err, time.Since(start))
		}
		c.Close()
	}
}

func TestErrorsComeBackAsTheServiceReturnedThem(t *testing.T) {
	f := newFake()
	sock, _ := serve(t, f, Limits{})
	c := local.Dial(sock)
	defer c.Close()
	for _, want := range []error{api.ErrTryAgain, api.ErrAcctDisabled, &api.NotLeaderError{Leader: "c2:6817"},
		&api.Error{Code: api.CodeNotFound, Msg: "Invalid job id specified"}, errors.New("disk on fire")} {
		f.err = want
		_, err := c.Ping(context.Background())
		switch w := want.(type) {
		case *api.NotLeaderError:
			if nl, ok := api.IsNotLeader(err); !ok || nl.Leader != w.Leader {
				t.Errorf("got %v, want a refusal naming %s", err, w.Leader)
			}
		case *api.Error:
			if e, ok := api.IsError(err); want != api.ErrTryAgain && want != api.ErrAcctDisabled && (!ok || *e != *w) {
				t.Errorf("got %#v, want %#v", err, w)
			} else if (want == api.ErrTryAgain || want == api.ErrAcctDisabled) && !errors.Is(err, want) {
				t.Errorf("got %v, which is not %v", err, want)
			}
		default:
			if err == nil || err.Error() != want.Error() {
				t.Errorf("got %v, want %v", err, want)
			}
		}
	}
}

func TestFloatsAndZeroPointersSurvive(t *testing.T) {
	f := newFake()
	sock, _ := serve(t, f, Limits{})
	c := local.Dial(sock)
	defer c.Close()
	p, err := c.Priorities(context.Background())
	if err != nil || len(p.Shares) != 1 || !math.IsInf(p.Shares[0].LevelFS, 1) || !math.IsNaN(p.Shares[0].NormUsage) {
		t.Fatalf("Priorities = %+v, %v; want +Inf and NaN back", p, err)
	}
	umask := uint32(0)
	if id, err := c.SubmitJob(context.Background(), &model.JobSpec{Umask: &umask}); err != nil || id != 42 {
		t.Fatalf("SubmitJob = %d, %v", id, err)
	}
}

func TestStreams(t *testing.T) {
	f := newFake()
	f.block = make(chan struct{})
	sock, _ := serve(t, f, Limits{})
	c := local.Dial(sock)
	defer c.Close()
	var ids []uint32
	err := c.AcctJobs(context.Background(), acct.Query{}, func(jobs []*acct.Job) error {
		for _, j := range jobs {
			ids = append(ids, j.JobID)
		}
		return nil
	})
	if err != nil || len(ids) != 3 {
		t.Fatalf("AcctJobs: %v, %v", ids, err)
	}
	f.err = api.ErrAcctDisabled
	if err := c.AcctJobs(context.Background(), acct.Query{}, func([]*acct.Job) error { return nil }); !errors.Is(err, api.ErrAcctDisabled) {
		t.Fatalf("AcctJobs on a cluster without accounting: %v", err)
	}
	n := 0
	err = c.WatchJobs(context.Background(), []model.JobID{7}, func(jobs []*model.Job) bool {
		n++
		return n < 3 && jobs[0].ID == 7 && jobs[0].Spec != nil
	})
	if err != nil || n != 3 {
		t.Fatalf("WatchJobs stopped after %d lists: %v", n, err)
	}
	// The client left: the controller's watch ends (it closes block).
	select {
	case <-f.block:
	case <-time.After(10 * time.Second):
		t.Fatal("the controller still watches for a client that left")
	}
}

// TestGRPCConnectionsPassThrough: what is not the local protocol reaches
// the other listener with its first bytes intact: all that the split read
// to tell (the whole first write), then the rest.
func TestGRPCConnectionsPassThrough(t *testing.T) {
	sock, others := serve(t, newFake(), Limits{})
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	preface := "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	_, _ = c.Write([]byte(preface))
	got, err := others.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	if unixOf(got) == nil {
		t.Error("the passed connection hides its Unix socket (gRPC's credentials need it)")
	}
	_ = got.SetReadDeadline(time.Now().Add(10 * time.Second))
	b := make([]byte, len(preface))
	if _, err := io.ReadFull(got, b); err != nil || string(b) != preface {
		t.Fatalf("gRPC's side read %q, %v", b, err)
	}
	_, _ = c.Write([]byte("later"))
	b = make([]byte, 5)
	if _, err := io.ReadFull(got, b); err != nil || string(b) != "later" {
		t.Fatalf("gRPC's side read %q, %v after the first bytes", b, err)
	}
}

// TestAUserCannotActAsAnother: the identity is the kernel's, not the
// caller's word. A process running as nobody asks to cancel root's jobs
// (the selection names uid 0); the service sees nobody and refuses.
func TestAUserCannotActAsAnother(t *testing.T) {
	if sock := os.Getenv("LOCALAPI_AS_NOBODY"); sock != "" {
		c := local.Dial(sock)
		_, err := c.Signal(context.Background(), api.JobSelection{UID: 0}, api.SignalRequest{})
		fmt.Print(err)
		return
	}
	if os.Getuid() != 0 {
		t.Skip("needs root to run a client as another user")
	}
	f := newFake()
	sock, _ := serve(t, f, Limits{})
	_ = os.Chmod(filepath.Dir(sock), 0o755)
	_ = os.Chmod(sock, 0o666) // as the controller's socket
	// The test binary, where nobody may run it.
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(filepath.Dir(sock), "localapi.test")
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestAUserCannotActAsAnother$")
	cmd.Env = append(os.Environ(), "LOCALAPI_AS_NOBODY="+sock)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("client as nobody: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Access/permission denied") {
		t.Errorf("nobody's cancel of root's jobs answered %q", out)
	}
	if id := <-f.caller; id.UID != 65534 || id.GID != 65534 {
		t.Errorf("the service saw uid %d gid %d, want nobody's 65534", id.UID, id.GID)
	}
}

// TestFallbackOnlyBeforeAnyChange: the client hands a refusal to
// Fallback (the commands then run again over gRPC) only while nothing
// was changed, and never a connection lost after a call left.
func TestFallbackOnlyBeforeAnyChange(t *testing.T) {
	f := newFake()
	sock, _ := serve(t, f, Limits{})
	c := local.Dial(sock)
	defer c.Close()
	var got []error
	c.Fallback = func(err error) { got = append(got, err) }
	f.err = &api.NotLeaderError{Leader: "c2:6817"}
	_, _ = c.Ping(context.Background()) // a read refused: handed on
	if len(got) != 1 {
		t.Fatalf("a follower's refusal was handed on %d times, want once", len(got))
	}
	f.err = nil
	if _, err := c.Signal(context.Background(), api.JobSelection{UID: 0}, api.SignalRequest{}); err != nil {
		t.Fatal(err)
	}
	f.err = &api.NotLeaderError{Leader: "c2:6817"}
	_, _ = c.Ping(context.Background())
	if len(got) != 1 {
		t.Errorf("a refusal after a change was handed on: the command would repeat the change")
	}
	gone := local.Dial(filepath.Join(t.TempDir(), "none"))
	gone.Fallback = func(err error) { got = append(got, err) }
	if _, err := gone.Ping(context.Background()); !errors.Is(err, api.ErrNoController) || len(got) != 2 {
		t.Errorf("no controller at the socket: %v, handed on %d", err, len(got)-1)
	}
}

// A command of another build sends its preface and its first call at
// once; the refusal must reach it every time (it then uses gRPC), not a
// reset caused by the call the controller never read.
func TestOtherBuildAlwaysReadsItsRefusal(t *testing.T) {
	sock, _ := serve(t, newFake(), Limits{})
	call, _ := localwire.Encode(&localwire.Request{Method: "Ping"})
	var frame bytes.Buffer
	_ = localwire.WriteFrame(&frame, append(call, make([]byte, 64<<10)...))
	for i := range 300 {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		_, _ = c.Write(append([]byte(localwire.Magic+"\x09"), 1, 2, 3, 4, 5, 6, 7, 8))
		_, _ = c.Write(frame.Bytes())
		b, err := localwire.ReadFrame(c, localwire.MaxAnswer)
		var a localwire.Answer
		if err != nil || localwire.DecodeAnswer(b, &a) != nil || a.Err == nil || a.Err.Kind != "build" {
			t.Fatalf("try %d: the other build read %q, %v instead of its refusal", i, b, err)
		}
		c.Close()
	}
}

// keeper records the specs it is given, as the service keeps a job's.
type keeper struct {
	*fake
	specs []*model.JobSpec
}

func (k *keeper) SubmitJob(ctx context.Context, spec *model.JobSpec) (model.JobID, error) {
	k.specs = append(k.specs, spec)
	return model.JobID(len(k.specs)), nil
}

// TestSubmittedSpecsOwnTheirBytes: request frames are read into reused
// buffers (cleared after decoding); what a call keeps of its request —
// a job's spec, script and environment — is its own copy, whole after
// later calls on the same and other connections.
func TestSubmittedSpecsOwnTheirBytes(t *testing.T) {
	k := &keeper{fake: newFake()}
	sock, _, _ := start(t, k, Limits{})
	mk := func(i int) *model.JobSpec {
		umask := uint32(0)
		return &model.JobSpec{Name: fmt.Sprintf("job%d", i), Script: strings.Repeat(fmt.Sprint(i), 100),
			Env: []string{fmt.Sprintf("A=%d", i), "B=" + strings.Repeat("x", i)}, Umask: &umask}
	}
	for conn := range 3 {
		c := local.Dial(sock)
		for i := range 5 {
			if _, err := c.SubmitJob(context.Background(), mk(conn*5+i)); err != nil {
				t.Fatal(err)
			}
		}
		c.Close()
	}
	if len(k.specs) != 15 {
		t.Fatalf("%d specs kept, want 15", len(k.specs))
	}
	for i, got := range k.specs {
		want := mk(i)
		if got.Name != want.Name || got.Script != want.Script || !slices.Equal(got.Env, want.Env) {
			t.Fatalf("spec %d kept as %q %q %q, want %q %q %q", i, got.Name, got.Script, got.Env, want.Name, want.Script, want.Env)
		}
	}
}
