package grpcapi

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/drover-hpc/drover/api/drover/v1"
)

// A local user's answers not yet written hold the bound: past it a new
// call waits, and is refused (try again) if none goes out in time; an
// answer written, or its connection closed, gives its bytes back.
func TestUserAnswersBound(t *testing.T) {
	u := newUserAnswers(1000, 50*time.Millisecond, nil)
	a, b := net.Pipe()
	defer b.Close()
	c := u.wrap(a, 1000).(*counted)
	big := &pb.ListJobsResponse{Jobs: []*pb.Job{{Name: string(make([]byte, 1500))}}}
	ctx := context.Background()
	if err := u.wait(ctx, c); err != nil {
		t.Fatalf("first call: %v", err)
	}
	u.charge(c, big)
	err := u.wait(ctx, c)
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("a call past the bound: %v, want Unavailable", err)
	}
	// The client reads part of the answer: still over.
	go func() { buf := make([]byte, 400); _, _ = b.Read(buf) }()
	if _, err := c.Write(make([]byte, 400)); err != nil {
		t.Fatal(err)
	}
	if err := u.wait(ctx, c); status.Code(err) != codes.Unavailable {
		t.Fatalf("1100 of 1000 still held: %v, want Unavailable", err)
	}
	// Its connection closes: everything owed comes back.
	_ = c.Close()
	if err := u.wait(ctx, c); err != nil {
		t.Fatalf("after the connection closed: %v", err)
	}
	u.charge(c, nil)
	if len(u.held) != 0 || len(u.building) != 0 {
		t.Fatalf("left: held %v building %v", u.held, u.building)
	}
	// Exempt users' connections are not counted.
	e := newUserAnswers(1000, time.Millisecond, func(uid uint32) bool { return uid == 0 })
	if _, ok := e.wrap(a, 0).(*counted); ok {
		t.Fatal("root's connection counted")
	}
}

// At most maxBuilding calls of one user build answers at once.
func TestUserAnswersBuilding(t *testing.T) {
	u := newUserAnswers(1<<30, 30*time.Millisecond, nil)
	a, _ := net.Pipe()
	c := u.wrap(a, 7).(*counted)
	for i := 0; i < maxBuilding; i++ {
		if err := u.wait(context.Background(), c); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if err := u.wait(context.Background(), c); status.Code(err) != codes.Unavailable {
		t.Fatalf("call past maxBuilding: %v", err)
	}
	u.charge(c, nil)
	if err := u.wait(context.Background(), c); err != nil {
		t.Fatalf("after one finished: %v", err)
	}
}
