package scontrol

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/cli/clitest"
	"github.com/drover-hpc/drover/internal/model"
)

type resvClient struct {
	clitest.Unimplemented
	reqs []*model.ResvRequest
	list []*model.Reservation
	now  int64
	err  error
}

func (c *resvClient) ReservationCommand(_ context.Context, req *model.ResvRequest) (string, error) {
	c.reqs = append(c.reqs, req)
	if c.err != nil {
		return "", c.err
	}
	return req.Name, nil
}

func (c *resvClient) ListReservations(context.Context) ([]*model.Reservation, int64, error) {
	return c.list, c.now, c.err
}

func runResv(t *testing.T, c *resvClient, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cli.Env{
		Host: testHost(1000), Prog: "scontrol", Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Now: func() time.Time { return testNow }, Version: "22.05.8",
		Dial: func() (cli.Client, error) { return c, nil },
	}
	code := Run(context.Background(), env, args)
	return result{code, out.String(), errb.String(), true}
}

func TestCreateReservationParses(t *testing.T) {
	c := &resvClient{}
	res := runResv(t, c, "create", "reservation", "ReservationName=maint", "StartTime=now+1hour",
		"Duration=1-02:00:00", "Nodes=n[1-2]", "Users=-bob,-carl", "Flags=MAINT,IGNORE_JOBS,PURGE_COMP=10:00", "TRES=gres/gpu=2")
	if res.code != 0 || res.stdout != "Reservation created: maint\n" {
		t.Fatalf("create: %+v", res)
	}
	req := c.reqs[0]
	want := testNow.Add(time.Hour).Unix()
	if req.Op != "create" || req.Name != "maint" || req.Start != want || !req.HasStart ||
		req.Duration != 26*3600 || req.Nodes != "n[1-2]" || !req.UsersNot ||
		strings.Join(req.Users, ",") != "bob,carl" || req.GPUs != 2 || req.PurgeComp != 600 ||
		req.Flags != model.ResvMaint|model.ResvIgnoreJobs|model.ResvPurgeComp {
		t.Errorf("request %+v", req)
	}
	for _, tt := range []struct{ dur string }{{"90"}, {"01:30:00"}, {"0-01:30:00"}} {
		c := &resvClient{}
		runResv(t, c, "create", "res", "StartTime=2026-12-01T10:00:00", "Duration="+tt.dur, "NodeCnt=1", "Users=root")
		if len(c.reqs) != 1 || c.reqs[0].Duration != 5400 {
			t.Errorf("Duration=%s: %+v", tt.dur, c.reqs)
		}
		if c.reqs[0].Start != time.Date(2026, 12, 1, 10, 0, 0, 0, time.Local).Unix() {
			t.Errorf("ISO StartTime: %d", c.reqs[0].Start)
		}
	}
	c = &resvClient{}
	runResv(t, c, "create", "res", "StartTime=now", "Duration=UNLIMITED", "Nodes=ALL", "Accounts=phys")
	if len(c.reqs) != 1 || c.reqs[0].Duration != model.Unlimited || c.reqs[0].Start != testNow.Unix() {
		t.Errorf("UNLIMITED/now: %+v", c.reqs)
	}
}

func TestCreateReservationRefuses(t *testing.T) {
	tests := []struct {
		args   []string
		stderr string
	}{
		{[]string{"StartTime=now", "Duration=garbage", "Nodes=n1", "Users=a"},
			"scontrol: error: Invalid duration Duration=garbage.  No reservation created.\n"},
		{[]string{"StartTime=whenever", "Duration=5", "Nodes=n1", "Users=a"},
			"scontrol: error: Invalid start time StartTime=whenever.  No reservation created.\n"},
		{[]string{"Duration=5", "Nodes=n1", "Users=a"},
			"scontrol: error: A start time must be given.  No reservation created.\n"},
		{[]string{"StartTime=now", "Nodes=n1", "Users=a"},
			"scontrol: error: An end time or duration must be given.  No reservation created.\n"},
		{[]string{"StartTime=now", "Duration=5", "Users=a"},
			"scontrol: error: CoreCnt, Nodes, NodeCnt, BurstBuffer, Licenses or Watts must be specified.  No reservation created.\n"},
		{[]string{"StartTime=now", "Duration=5", "Nodes=n1"},
			"scontrol: error: Either Users/Groups and/or Accounts must be specified.  No reservation created.\n"},
		{[]string{"StartTime=now", "Duration=5", "Nodes=n1", "Users=a", "Flags=BOGUS"},
			"scontrol: error: Error parsing flags BOGUS.  No reservation created.\n"},
		{[]string{"StartTime=now", "Duration=5", "Nodes=n1", "Users=a", "Frob=1"},
			"scontrol: error: Unknown parameter Frob=1.  No reservation created.\n"},
	}
	for _, tt := range tests {
		c := &resvClient{}
		res := runResv(t, c, append([]string{"create", "reservation"}, tt.args...)...)
		if res.code != 1 || res.stderr != tt.stderr || len(c.reqs) != 0 {
			t.Errorf("%q: %+v, %d requests", tt.args, res, len(c.reqs))
		}
	}
	c := &resvClient{err: errors.New("Access/permission denied")}
	res := runResv(t, c, "create", "reservation", "StartTime=now", "Duration=5", "Nodes=n1", "Users=a")
	if res.code != 1 || res.stderr != "Error creating the reservation: Access/permission denied\n" {
		t.Errorf("denied: %+v", res)
	}
}

func TestUpdateDeleteReservation(t *testing.T) {
	c := &resvClient{}
	res := runResv(t, c, "update", "ReservationName=r1", "Users+=carl", "Duration=30")
	if res.code != 0 || res.stdout != "Reservation updated.\n" {
		t.Fatalf("update: %+v", res)
	}
	if q := c.reqs[0]; q.Op != "update" || q.Name != "r1" || q.UsersOp != '+' || q.Users[0] != "carl" || q.Duration != 1800 {
		t.Errorf("update request %+v", q)
	}
	c = &resvClient{}
	if res := runResv(t, c, "update", "reservation", "ReservationName=r1", "Flags-=DAILY"); res.code != 0 || len(c.reqs) != 1 ||
		c.reqs[0].Name != "r1" || !c.reqs[0].FlagsRemove || c.reqs[0].Flags != model.ResvDaily {
		t.Errorf("update reservation ReservationName=: %+v %+v", res, c.reqs)
	}
	for _, args := range [][]string{{"delete", "reservation", "r1"}, {"delete", "ReservationName=r1"}} {
		c := &resvClient{}
		if res := runResv(t, c, args...); res.code != 0 || len(c.reqs) != 1 || c.reqs[0].Op != "delete" || c.reqs[0].Name != "r1" {
			t.Errorf("%q: %+v %+v", args, res, c.reqs)
		}
	}
	c = &resvClient{err: errors.New(model.MsgResvInvalid)}
	if res := runResv(t, c, "delete", "ReservationName=zz"); res.code != 1 ||
		res.stderr != "delete_reservation ReservationName=zz: Requested reservation is invalid\n" {
		t.Errorf("delete unknown: %+v", res)
	}
}

func TestShowReservation(t *testing.T) {
	start := time.Date(2026, 11, 26, 10, 0, 0, 0, time.Local).Unix()
	c := &resvClient{now: start + 60, list: []*model.Reservation{{
		Name: "maint", Start: start, End: start + 90*60, Flags: model.ResvMaint | model.ResvSpecNodes,
		Nodes: []string{"n1", "n2"}, CoreCnt: 8, CPUs: 8, Users: []string{"root"},
	}}}
	res := runResv(t, c, "show", "reservation")
	want := "ReservationName=maint StartTime=2026-11-26T10:00:00 EndTime=2026-11-26T11:30:00 Duration=01:30:00\n" +
		"   Nodes=n[1-2] NodeCnt=2 CoreCnt=8 Features=(null) PartitionName=(null) Flags=MAINT,SPEC_NODES\n" +
		"   TRES=cpu=8\n" +
		"   Users=root Groups=(null) Accounts=(null) Licenses=(null) State=ACTIVE BurstBuffer=(null) Watts=n/a\n" +
		"   MaxStartDelay=(null)\n\n"
	if res.code != 0 || res.stdout != want {
		t.Errorf("show:\n%s\nwant:\n%s", res.stdout, want)
	}
	if res := runResv(t, c, "show", "reservation", "other"); res.code != 1 || res.stdout != "Reservation other not found\n" {
		t.Errorf("show other: %+v", res)
	}
	c.list = nil
	if res := runResv(t, c, "show", "res"); res.stdout != "No reservations in the system\n" {
		t.Errorf("show none: %+v", res)
	}
}

func FuzzParseResv(f *testing.F) {
	for _, s := range []string{"MAINT,IGNORE_JOBS", "PURGE_COMP=5:00", "maintenance", "cpu=4,gres/gpu:a100=2", "node=x", ",", "=", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if flags, purge, ok := parseResvFlags(s); ok && (flags == 0 || purge < 0) {
			t.Errorf("flags %q: %v %d", s, flags, purge)
		}
		var req model.ResvRequest
		if parseResvTRES(s, &req) && (req.CoreCnt < 0 || req.NodeCnt < 0 || req.GPUs < 0) {
			t.Errorf("TRES %q: %+v", s, req)
		}
		splitNames(s)
	})
}
