package grpcapi

import (
	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/grpcapi/leaderstatus"
)

// NotLeaderReason is the ErrorInfo reason of a follower's refusal; the
// encoding lives in leaderstatus, which the client shares.
const NotLeaderReason = leaderstatus.Reason

func notLeaderStatus(e *api.NotLeaderError) error { return leaderstatus.Status(e) }

// LeaderFromStatus reports whether err is a follower's refusal and, if so,
// the leader's address it names ("" while none is known).
func LeaderFromStatus(err error) (string, bool) { return leaderstatus.Leader(err) }
