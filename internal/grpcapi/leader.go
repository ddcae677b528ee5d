package grpcapi

import (
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/drover-hpc/drover/internal/api"
)

// A follower's refusal travels as codes.Unavailable with an ErrorInfo
// detail (reason NotLeaderReason, metadata "leader": the leader's
// address), so a client can retry on the leader without parsing text.
const (
	NotLeaderReason = "NOT_LEADER"
	errorDomain     = "drover.controller"
	leaderKey       = "leader"
)

func notLeaderStatus(e *api.NotLeaderError) error {
	st := status.New(codes.Unavailable, e.Error())
	if d, err := st.WithDetails(&errdetails.ErrorInfo{Reason: NotLeaderReason, Domain: errorDomain,
		Metadata: map[string]string{leaderKey: e.Leader}}); err == nil {
		st = d
	}
	return st.Err()
}

// LeaderFromStatus reports whether err is a follower's refusal and, if so,
// the leader's address it names ("" while none is known).
func LeaderFromStatus(err error) (string, bool) {
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.Unavailable {
		return "", false
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.Reason == NotLeaderReason && info.Domain == errorDomain {
			return info.Metadata[leaderKey], true
		}
	}
	return "", false
}
