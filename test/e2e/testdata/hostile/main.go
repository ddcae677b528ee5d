// Command hostile is a local user who speaks the controller's local
// protocol with hand-made frames (TestHostileLocalUser runs it as an
// unprivileged user). It prints one line per attempt: the attempt's name,
// a tab, and "refused: why" or "DONE: what came back".
//
//	hostile SOCKET frames RUNNING_JOB PENDING_JOB VICTIM_UID VICTIM_USER
//	hostile SOCKET shapes  (submissions sbatch never sends: array task ids
//	                        repeated, unordered or out of range, more
//	                        dependency terms than their text names, a
//	                        constraint past 1024 characters)
//	hostile ADDR tcpidle N SECONDS  (N TLS connections to the TCP port that
//	                        send HTTP/2's preface and no call; prints
//	                        "open K" for those still open SECONDS later)
//	hostile SOCKET grpcstall N SECONDS  (one gRPC connection on the socket,
//	                        N SubmitJob calls each announcing a 60 MiB
//	                        request and sending 10 bytes of it; prints
//	                        "refused R ended E pending P" SECONDS later:
//	                        R answered "Resource temporarily
//	                        unavailable" (try again) at once)
//	hostile SOCKET attach JOB STEP N  (N sattach requests for the caller's
//	                        own step, all to one listener that holds what
//	                        the nodes dial; prints "attached K refused R":
//	                        K the dialled connections the node keeps open)
//	hostile SOCKET bcast JOB N SECONDS  (N sbcast requests into the caller's
//	                        own job whose data never comes; prints "open K
//	                        later L": the dialled connections the node holds
//	                        2 s and SECONDS later)
//	hostile SOCKET steps JOB[,JOB...] N  (N overlapping one-task steps
//	                        `sleep 300` in each of the caller's own jobs,
//	                        one job after the other, their I/O to a
//	                        listener that holds what the node dials;
//	                        prints "created K refused R" per job and the
//	                        first refusal's words)
//	hostile SOCKET bigenv N KIB  (N held jobs, each with an environment
//	                        variable of KIB KiB of its own; prints
//	                        "accepted A refused R" and the first
//	                        refusal's words: submitted once each, where
//	                        sbatch would wait and retry)
//	hostile SOCKET bigline N KIB  (bigenv with the KIB in the submit line,
//	                        which a full listing carries)
//	hostile SOCKET grpclist N SECONDS  (N ListJobs calls on one gRPC
//	                        connection whose answers are never read;
//	                        prints "answered A refused R" SECONDS later)
//	hostile SOCKET locallist N SECONDS  (N local connections, each sending
//	                        a full ListJobs and never reading; prints
//	                        "refused R" SECONDS later: R answered "Resource
//	                        temporarily unavailable" (try again))
//	hostile SOCKET watch JOB N SECONDS  (one WatchJobs naming JOB N times,
//	                        its chunks read for SECONDS; prints "chunks K"
//	                        or the refusal)
//	hostile SOCKET hog N   (N connections that stall inside a frame; prints
//	                        "open K" and "ready", holds them until stdin ends)
package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/localwire"
	"github.com/drover-hpc/drover/internal/model"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: hostile SOCKET frames|hog ...")
		os.Exit(2)
	}
	sock := os.Args[1]
	switch os.Args[2] {
	case "frames":
		frames(sock, os.Args[3:])
	case "shapes":
		shapes(sock)
	case "grpcstall":
		n, _ := strconv.Atoi(os.Args[3])
		secs, _ := strconv.Atoi(os.Args[4])
		grpcStall(sock, n, time.Duration(secs)*time.Second)
	case "attach":
		job, _ := strconv.Atoi(os.Args[3])
		step, _ := strconv.Atoi(os.Args[4])
		n, _ := strconv.Atoi(os.Args[5])
		attachMany(sock, model.JobID(job), model.StepID(step), n)
	case "bcast":
		job, _ := strconv.Atoi(os.Args[3])
		n, _ := strconv.Atoi(os.Args[4])
		secs, _ := strconv.Atoi(os.Args[5])
		bcastStall(sock, model.JobID(job), n, time.Duration(secs)*time.Second)
	case "tcpidle":
		n, _ := strconv.Atoi(os.Args[3])
		secs, _ := strconv.Atoi(os.Args[4])
		tcpIdle(sock, n, time.Duration(secs)*time.Second)
	case "steps":
		var jobs []model.JobID
		for _, f := range strings.Split(os.Args[3], ",") {
			job, _ := strconv.Atoi(f)
			jobs = append(jobs, model.JobID(job))
		}
		n, _ := strconv.Atoi(os.Args[4])
		manySteps(sock, jobs, n)
	case "bigenv", "bigline":
		n, _ := strconv.Atoi(os.Args[3])
		kib, _ := strconv.Atoi(os.Args[4])
		bigEnv(sock, n, kib, os.Args[2] == "bigline")
	case "grpclist":
		n, _ := strconv.Atoi(os.Args[3])
		secs, _ := strconv.Atoi(os.Args[4])
		grpcList(sock, n, time.Duration(secs)*time.Second)
	case "hog":
		n, _ := strconv.Atoi(os.Args[3])
		hog(sock, n)
	case "watch":
		job, _ := strconv.Atoi(os.Args[3])
		n, _ := strconv.Atoi(os.Args[4])
		secs, _ := strconv.Atoi(os.Args[5])
		watch(sock, model.JobID(job), n, time.Duration(secs)*time.Second)
	case "locallist":
		n, _ := strconv.Atoi(os.Args[3])
		secs, _ := strconv.Atoi(os.Args[4])
		localList(sock, n, time.Duration(secs)*time.Second)
	}
}

// call sends one request on a new connection and decodes the answer's
// body into out.
func call(sock, method string, arg, out any) error {
	c, err := net.Dial("unix", sock)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	var body []byte
	if arg != nil {
		body, _ = localwire.Encode(arg)
	}
	req, _ := localwire.Encode(&localwire.Request{Method: method, Body: body})
	if _, err := c.Write(localwire.Preface()); err != nil {
		return err
	}
	if err := localwire.WriteFrame(c, req); err != nil {
		return err
	}
	b, err := localwire.ReadFrame(c, localwire.MaxAnswer)
	if err != nil {
		return err
	}
	var a localwire.Answer
	if err := localwire.DecodeAnswer(b, &a); err != nil {
		return err
	}
	if a.Err != nil {
		return a.Err.Err()
	}
	if out != nil && len(a.Body) > 0 {
		return localwire.DecodeAnswer(a.Body, out)
	}
	return nil
}

func frames(sock string, args []string) {
	run, _ := strconv.Atoi(args[0])
	pend, _ := strconv.Atoi(args[1])
	vuid, _ := strconv.Atoi(args[2])
	victim := args[3]
	running, pending := model.JobID(run), model.JobID(pend)
	target := func(id model.JobID) api.JobSelection {
		// The victim's uid and name inside the selection: the controller
		// must go by the kernel's word, not these.
		return api.JobSelection{Targets: []api.JobTarget{{ID: id, Raw: strconv.Itoa(int(id))}}, UID: int64(vuid), User: victim}
	}
	report := func(name string, err error, results []api.JobResult) {
		switch {
		case err != nil:
			fmt.Printf("%s\trefused: %v\n", name, err)
		case len(results) == 0:
			fmt.Printf("%s\trefused: no job selected\n", name)
		default:
			var done []string
			for _, r := range results {
				if r.Error == "" {
					done = append(done, r.Job)
				}
			}
			if len(done) == 0 {
				fmt.Printf("%s\trefused: %s\n", name, results[0].Error)
			} else {
				fmt.Printf("%s\tDONE: %v\n", name, done)
			}
		}
	}
	var res []api.JobResult
	for _, c := range []struct {
		name   string
		method string
		arg    any
	}{
		{"cancel", "SignalJobs", localwire.Selection{Sel: target(pending)}},
		{"cancel-all-of-victim", "SignalJobs", localwire.Selection{Sel: api.JobSelection{UID: int64(vuid), User: victim}}},
		{"signal", "SignalJobs", localwire.Selection{Sel: target(running), Sig: api.SignalRequest{Signal: 10, Full: true}}},
		{"hold", "ControlJobs", localwire.Selection{Sel: target(pending), Action: "hold"}},
		{"requeue", "ControlJobs", localwire.Selection{Sel: target(running), Action: "requeue"}},
		{"suspend", "ControlJobs", localwire.Selection{Sel: target(running), Action: "suspend"}},
		{"update-time", "UpdateJob", localwire.Selection{Sel: target(pending), Fields: map[string]string{"TimeLimit": "1"}}},
		{"update-priority", "UpdateJob", localwire.Selection{Sel: target(pending), Fields: map[string]string{"Priority": "1"}}},
	} {
		res = nil
		err := call(sock, c.method, c.arg, &res)
		report(c.name, err, res)
	}
	uid := uint32(vuid)
	for _, c := range []struct {
		name   string
		method string
		arg    any
	}{
		{"submit-as-victim", "SubmitJob", &model.JobSpec{UID: &uid, Script: "#!/bin/sh\ntrue\n", WorkDir: "/tmp", Name: "hostile"}},
		{"complete", "CompleteJob", localwire.JobEnd{Job: running, ExitCode: 3}},
		{"step", "CreateStep", localwire.StepCreate{Job: running, Spec: &model.StepSpec{Argv: []string{"/bin/true"}, NTasks: 1}}},
		{"attach", "AttachStep", localwire.Attach{Job: running, Addr: "127.0.0.1:1", Key: "k"}},
		{"stats", "StepStats", localwire.StatsQuery{Job: running}},
		{"broadcast", "Broadcast", api.BroadcastRequest{Job: running, Dest: "/tmp/hostile", Addr: "127.0.0.1:1", Key: "k"}},
		{"diag-reset", "Diag", localwire.Reset{Reset: true}},
		{"reconfigure", "Reconfigure", nil},
		{"drain-nodes", "UpdateNodes", localwire.NodeUpdate{Nodes: []string{"ALL"}, Fields: map[string]string{"State": "DRAIN", "Reason": "x"}}},
		{"reservation", "ReservationCommand", &model.ResvRequest{Op: "create", Name: "hostile", Nodes: "ALL", HasDuration: true, Duration: 3600}},
		{"join-token", "CreateJoinToken", api.TokenSpec{Nodes: "ALL"}},
	} {
		err := call(sock, c.method, c.arg, nil)
		report(c.name, err, []api.JobResult{{Job: "-"}})
	}
	// A listing that asks for scripts and environments.
	var l localwire.JobList
	err := call(sock, "ListJobs", localwire.ListQuery{Q: api.JobQuery{IDs: []model.JobID{running, pending}, WithSpec: true}}, &l)
	if err == nil {
		var got []string
		for _, s := range l.Specs {
			if s != nil && (s.Script != "" || len(s.Env) > 0) {
				got = append(got, fmt.Sprintf("script %q env %d", s.Script, len(s.Env)))
			}
		}
		if len(got) > 0 {
			fmt.Printf("read-script\tDONE: %s\n", strings.Join(got, "; "))
		} else {
			fmt.Printf("read-script\trefused: %d jobs listed without scripts or environments\n", len(l.Jobs))
		}
	} else {
		fmt.Printf("read-script\trefused: %v\n", err)
	}
}

// shapes submits, held, job specs whose parsed parts no Slurm command
// would send: the controller must check what a client parsed, not trust it.
func shapes(sock string) {
	spec := func() *model.JobSpec {
		return &model.JobSpec{Script: "#!/bin/sh\ntrue\n", WorkDir: "/tmp", Name: "hostile", Hold: true,
			TimeLimit: model.Unset, TimeMin: model.Unset, MinNodes: model.Unset, MaxNodes: model.Unset,
			NTasks: model.Unset, CPUsPerTask: model.Unset, TasksPerNode: model.Unset,
			MemPerNode: model.Unset, MemPerCPU: model.Unset}
	}
	array := func(throttle int, ids ...int) *model.JobSpec {
		s := spec()
		s.Array = &model.ArraySpec{Raw: "0-2", TaskIDs: ids, Throttle: throttle}
		return s
	}
	repeated := []int{0}
	for range 20000 {
		repeated = append(repeated, 1)
	}
	repeated = append(repeated, 2)
	deps := spec()
	deps.Dependency = &model.Dependency{Raw: "afterany:1"}
	for range 200000 {
		deps.Dependency.Terms = append(deps.Dependency.Terms, model.DepTerm{Type: model.DepAfterAny, Job: 1, Task: model.NoArrayTask})
	}
	features := spec()
	features.Features = strings.Repeat("x&", 1000) + "x"
	for _, c := range []struct {
		name string
		spec *model.JobSpec
	}{
		{"array-one-id-20000-times", array(0, repeated...)},
		{"array-negative-id-inside", array(0, 0, -5, 2)},
		{"array-huge-id-inside", array(0, 0, 50_000_000, 2)},
		{"array-negative-throttle", array(-1, 0, 1, 2)},
		{"dependency-200000-terms-of-10-characters", deps},
		{"constraint-2001-characters", features},
	} {
		var id localwire.JobID
		if err := call(sock, "SubmitJob", c.spec, &id); err != nil {
			fmt.Printf("%s\trefused: %v\n", c.name, err)
		} else {
			fmt.Printf("%s\tDONE: job %d\n", c.name, id.ID)
		}
	}
}

// grpcStall writes HTTP/2 by hand: gRPC's own client would send each
// request whole.
func grpcStall(sock string, n int, wait time.Duration) {
	c, err := net.Dial("unix", sock)
	if err != nil {
		fmt.Println("dial:", err)
		os.Exit(1)
	}
	defer c.Close()
	var wmu sync.Mutex
	fr := http2.NewFramer(c, c)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	wmu.Lock()
	_, _ = c.Write([]byte(http2.ClientPreface))
	_ = fr.WriteSettings()
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for i := range n {
		hb.Reset()
		for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", "/drover.v1.Drover/SubmitJob"},
			{":authority", "localhost"}, {"content-type", "application/grpc"}, {"te", "trailers"}} {
			_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
		}
		id := uint32(2*i + 1)
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hb.Bytes(), EndHeaders: true})
		// A message of 60 MiB announced; 10 bytes of it sent.
		_ = fr.WriteData(id, false, append([]byte{0, 0x03, 0xc0, 0, 0}, make([]byte, 10)...))
	}
	wmu.Unlock()
	var mu sync.Mutex
	refused, ended := map[uint32]bool{}, map[uint32]bool{}
	go func() {
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				return
			}
			switch f := f.(type) {
			case *http2.MetaHeadersFrame:
				if !f.StreamEnded() {
					continue
				}
				mu.Lock()
				msg := ""
				for _, h := range f.RegularFields() {
					if h.Name == "grpc-message" {
						msg = h.Value
					}
				}
				if strings.Contains(msg, "temporarily unavailable") { // api.ErrTryAgain
					refused[f.StreamID] = true
				} else {
					ended[f.StreamID] = true
				}
				mu.Unlock()
			case *http2.RSTStreamFrame:
				mu.Lock()
				ended[f.StreamID] = true
				mu.Unlock()
			case *http2.PingFrame:
				if !f.IsAck() {
					wmu.Lock()
					_ = fr.WritePing(true, f.Data)
					wmu.Unlock()
				}
			case *http2.SettingsFrame:
				if !f.IsAck() {
					wmu.Lock()
					_ = fr.WriteSettingsAck()
					wmu.Unlock()
				}
			}
		}
	}()
	time.Sleep(wait)
	mu.Lock()
	defer mu.Unlock()
	pending := n - len(refused)
	for id := range ended {
		if !refused[id] {
			pending--
		}
	}
	fmt.Printf("refused %d ended %d pending %d\n", len(refused), len(ended), pending)
}

// attachMany asks n times for the nodes of the caller's own step to copy
// its I/O to a listener here, and holds every connection they dial.
func attachMany(sock string, job model.JobID, step model.StepID, n int) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	var attached atomic.Int64
	var held []net.Conn
	var hmu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			hmu.Lock()
			held = append(held, c)
			hmu.Unlock()
			attached.Add(1)
		}
	}()
	refused := 0
	for range n {
		if err := call(sock, "AttachStep", localwire.Attach{Job: job, Step: step, Addr: ln.Addr().String(), Key: "k"}, nil); err != nil {
			refused++
		}
	}
	// Each request answers before its node dials: wait until the dials
	// stop coming.
	last := int64(-1)
	for last != attached.Load() {
		last = attached.Load()
		time.Sleep(2 * time.Second)
	}
	// Past the node's hello line, those it closed again read EOF; the
	// rest time out (a sleeping step writes nothing).
	hmu.Lock()
	defer hmu.Unlock()
	open := make(chan bool)
	for _, c := range held {
		go func() {
			r := bufio.NewReader(c)
			_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
			if _, err := r.ReadString('\n'); err != nil {
				open <- false
				return
			}
			_ = c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
			_, err := r.ReadByte()
			open <- errors.Is(err, os.ErrDeadlineExceeded)
		}()
	}
	kept := 0
	for range held {
		if <-open {
			kept++
		}
	}
	fmt.Printf("attached %d refused %d\n", kept, refused)
}

// bcastStall asks n times for the nodes of the caller's own job to fetch
// a file from a listener here that never sends it.
func bcastStall(sock string, job model.JobID, n int, wait time.Duration) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	var open atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			open.Add(1)
			go func() {
				defer open.Add(-1)
				_, _ = io.Copy(io.Discard, c) // until the node closes it
			}()
		}
	}()
	for i := range n {
		req := api.BroadcastRequest{Job: job, Addr: ln.Addr().String(), Key: "k", Dest: fmt.Sprintf("/tmp/hostile-bcast-%d-%d", os.Getpid(), i), Mode: 0o600}
		go func() { _ = call(sock, "Broadcast", req, nil) }() // answered once the transfer ends
	}
	time.Sleep(2 * time.Second)
	soon := open.Load()
	time.Sleep(wait - 2*time.Second)
	fmt.Printf("open %d later %d\n", soon, open.Load())
}

// tcpIdle opens n connections to the controller's TCP port that complete
// TLS and HTTP/2's preface (the server's frames are read and dropped) but
// make no call, and reports how many are still open after wait.
func tcpIdle(addr string, n int, wait time.Duration) {
	var open atomic.Int64
	// HTTP/2's client preface and an empty SETTINGS frame.
	hello := append([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 0, 0, 0, 4, 0, 0, 0, 0, 0)
	for range n {
		c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
		if err != nil {
			fmt.Println("dial:", err)
			break
		}
		if _, err := c.Write(hello); err != nil {
			c.Close()
			continue
		}
		open.Add(1)
		go func() {
			defer open.Add(-1)
			_, _ = io.Copy(io.Discard, c) // until the controller closes it
		}()
	}
	time.Sleep(wait)
	fmt.Printf("open %d\n", open.Load())
}

// hog opens n connections that each stall inside a frame claiming the
// largest request, having sent one byte of it; it reports how many the
// controller kept open, then holds them until stdin ends.
func hog(sock string, n int) {
	var conns []net.Conn
	for range n {
		c, err := net.Dial("unix", sock)
		if err != nil {
			continue
		}
		hdr := binary.BigEndian.AppendUint32(localwire.Preface(), localwire.MaxRequest)
		if _, err := c.Write(append(hdr, 0)); err != nil {
			c.Close()
			continue
		}
		conns = append(conns, c)
	}
	// Closed by the controller (past the per-user cap): EOF at once. (All
	// read at once: a read past its deadline does not look at the socket.)
	kept := make(chan bool)
	for _, c := range conns {
		go func() {
			_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			_, err := c.Read(make([]byte, 1))
			kept <- errors.Is(err, os.ErrDeadlineExceeded)
		}()
	}
	open := 0
	for range conns {
		if <-kept {
			open++
		}
	}
	fmt.Printf("open %d\nready\n", open)
	_, _ = io.Copy(io.Discard, os.Stdin)
	for _, c := range conns {
		c.Close()
	}
}

func manySteps(sock string, jobs []model.JobID, n int) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	why := ""
	for _, job := range jobs {
		created, refused := 0, 0
		for range n {
			spec := &model.StepSpec{Overlap: true, NTasks: 1, MinNodes: 1, MaxNodes: 1, Argv: []string{"sleep", "300"},
				IOAddr: ln.Addr().String(), IOKey: "k", Env: []string{"PATH=/usr/bin:/bin"}}
			if err := call(sock, "CreateStep", localwire.StepCreate{Job: job, Spec: spec}, nil); err != nil {
				refused++
				if why == "" {
					why = err.Error()
				}
				continue
			}
			created++
		}
		fmt.Printf("created %d refused %d\n", created, refused)
	}
	fmt.Println(why)
}

func bigEnv(sock string, n, kib int, line bool) {
	accepted, refused, why := 0, 0, ""
	for i := range n {
		spec := &model.JobSpec{Script: "#!/bin/sh\ntrue\n", WorkDir: "/tmp", Name: "bigenv", Hold: true,
			TimeLimit: model.Unset, TimeMin: model.Unset, MinNodes: model.Unset, MaxNodes: model.Unset,
			NTasks: model.Unset, CPUsPerTask: model.Unset, TasksPerNode: model.Unset,
			MemPerNode: model.Unset, MemPerCPU: model.Unset,
			Env: []string{fmt.Sprintf("BIG=%d%s", i, strings.Repeat("x", kib<<10))}}
		if line { // in the submit line instead, which listings carry
			spec.SubmitLine, spec.Env = spec.Env[0], []string{"PATH=/bin"}
		}
		var id localwire.JobID
		if err := call(sock, "SubmitJob", spec, &id); err != nil {
			refused++
			if why == "" {
				why = err.Error()
			}
			continue
		}
		accepted++
	}
	fmt.Printf("accepted %d refused %d\n%s\n", accepted, refused, why)
}

// grpcList makes up to n ListJobs calls (full specs), one after the
// other, on one gRPC connection to the socket, and never opens the HTTP/2
// flow-control window for their answers; it stops at the first call
// refused with "Resource temporarily unavailable", or one not answered
// within wait, and prints "answered A refused R": A the calls the
// controller answered (built, and queued for a reader that never reads).
func grpcList(sock string, n int, wait time.Duration) {
	c, err := net.Dial("unix", sock)
	if err != nil {
		fmt.Println("dial:", err)
		os.Exit(1)
	}
	defer c.Close()
	var wmu sync.Mutex
	fr := http2.NewFramer(c, c)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	wmu.Lock()
	_, _ = c.Write([]byte(http2.ClientPreface))
	_ = fr.WriteSettings()
	wmu.Unlock()
	// results gets, per stream, whether it was answered (true) or ended
	// without an answer (false).
	type result struct {
		id uint32
		ok bool
	}
	results := make(chan result, 2*n)
	go func() {
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				return
			}
			switch f := f.(type) {
			case *http2.MetaHeadersFrame:
				results <- result{f.StreamID, !f.StreamEnded()}
			case *http2.PingFrame:
				if !f.IsAck() {
					wmu.Lock()
					_ = fr.WritePing(true, f.Data)
					wmu.Unlock()
				}
			case *http2.SettingsFrame:
				if !f.IsAck() {
					wmu.Lock()
					_ = fr.WriteSettingsAck()
					wmu.Unlock()
				}
			}
		}
	}()
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	answered, refused := 0, 0
	for i := range n {
		hb.Reset()
		for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", "/drover.v1.Drover/ListJobs"},
			{":authority", "localhost"}, {"content-type", "application/grpc"}, {"te", "trailers"}} {
			_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
		}
		id := uint32(2*i + 1)
		wmu.Lock()
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hb.Bytes(), EndHeaders: true})
		_ = fr.WriteData(id, true, []byte{0, 0, 0, 0, 0}) // an empty ListJobsRequest
		wmu.Unlock()
		ok, timeout := false, time.After(wait)
	await:
		for {
			select {
			case r := <-results:
				if r.id == id {
					ok = r.ok
					break await
				}
			case <-timeout:
				break await
			}
		}
		if !ok {
			refused++
			break
		}
		answered++
	}
	fmt.Printf("answered %d refused %d\n", answered, refused)
}

func localList(sock string, n int, wait time.Duration) {
	body, _ := localwire.Encode(&localwire.ListQuery{})
	req, _ := localwire.Encode(&localwire.Request{Method: "ListJobs", Body: body})
	var conns []net.Conn
	for range n {
		c, err := net.Dial("unix", sock)
		if err != nil {
			continue
		}
		if _, err := c.Write(localwire.Preface()); err != nil || localwire.WriteFrame(c, req) != nil {
			c.Close()
			continue
		}
		conns = append(conns, c)
	}
	time.Sleep(wait)
	refused := 0
	for _, c := range conns {
		// A refusal is a small frame; a listing is never read.
		_ = c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		var hdr [4]byte
		if _, err := io.ReadFull(c, hdr[:]); err == nil && binary.BigEndian.Uint32(hdr[:]) < 4096 {
			b := make([]byte, binary.BigEndian.Uint32(hdr[:]))
			if _, err := io.ReadFull(c, b); err == nil && bytes.Contains(b, []byte(api.ErrTryAgain.Error())) {
				refused++
			}
		}
		c.Close()
	}
	fmt.Printf("refused %d\n", refused)
}

func watch(sock string, job model.JobID, n int, wait time.Duration) {
	ids := make([]model.JobID, n)
	for i := range ids {
		ids[i] = job
	}
	body, _ := localwire.Encode(&localwire.ListQuery{IDs: ids})
	req, _ := localwire.Encode(&localwire.Request{Method: "WatchJobs", Body: body})
	c, err := net.Dial("unix", sock)
	if err != nil {
		fmt.Println("dial:", err)
		return
	}
	defer c.Close()
	if _, err := c.Write(localwire.Preface()); err != nil || localwire.WriteFrame(c, req) != nil {
		fmt.Println("write failed")
		return
	}
	_ = c.SetReadDeadline(time.Now().Add(wait))
	chunks := 0
	for {
		b, err := localwire.ReadFrame(c, localwire.MaxAnswer)
		if err != nil {
			break
		}
		var a localwire.Answer
		if localwire.DecodeAnswer(b, &a) == nil && a.Err != nil {
			fmt.Println("refused:", a.Err.Msg)
			return
		}
		chunks++
	}
	fmt.Printf("chunks %d\n", chunks)
}
