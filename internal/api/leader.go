package api

import (
	"errors"
	"fmt"
)

// NotLeaderError refuses a change on a controller that does not lead:
// only the leader proposes commands. Leader is the address of the one that
// does ("" while none is known); transports pass it to the client, which
// can retry there. Reads are served by any controller from its own state.
type NotLeaderError struct {
	Leader string
}

func (e *NotLeaderError) Error() string {
	if e.Leader == "" {
		return "This controller is not the leader and no leader is known; try again"
	}
	return fmt.Sprintf("This controller is not the leader; the leader is %s", e.Leader)
}

// IsNotLeader reports whether err is a follower's refusal and returns it.
func IsNotLeader(err error) (*NotLeaderError, bool) {
	var e *NotLeaderError
	ok := errors.As(err, &e)
	return e, ok
}
