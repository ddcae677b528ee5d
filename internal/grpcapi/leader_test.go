package grpcapi

import (
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/drover-hpc/drover/internal/api"
)

// A follower's refusal reaches the client as Unavailable with the
// leader's address in the status details; other errors carry none.
func TestNotLeaderStatusNamesTheLeader(t *testing.T) {
	err := toStatus(fmt.Errorf("submit: %w", &api.NotLeaderError{Leader: "ctl-b:6817"}))
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("code %v, want Unavailable", status.Code(err))
	}
	if leader, ok := LeaderFromStatus(err); !ok || leader != "ctl-b:6817" {
		t.Fatalf("LeaderFromStatus = %q, %v", leader, ok)
	}
	if leader, ok := LeaderFromStatus(toStatus(&api.NotLeaderError{})); !ok || leader != "" {
		t.Fatalf("no known leader: %q, %v", leader, ok)
	}
	for _, other := range []error{&api.Error{Code: api.CodeUnavailable, Msg: "down"}, errors.New("x")} {
		if _, ok := LeaderFromStatus(toStatus(other)); ok {
			t.Errorf("%v read as a follower's refusal", other)
		}
	}
}
