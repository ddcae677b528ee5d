// Package leaderstatus is the gRPC form of a follower's refusal
// (api.NotLeaderError), shared by both ends: the server adapter
// (internal/grpcapi) encodes it and the client decodes it to follow the
// leader. It is its own package so that the client need not import the
// server adapter (and the node protocol behind it) for three constants.
package leaderstatus

import (
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/drover-hpc/drover/internal/api"
)

// A follower's refusal travels as codes.Unavailable with an ErrorInfo
// detail (reason Reason, metadata "leader": the leader's address), so a
// client can retry on the leader without parsing text.
const (
	Reason    = "NOT_LEADER"
	Domain    = "drover.controller"
	leaderKey = "leader"
)

// Status encodes a follower's refusal.
func Status(e *api.NotLeaderError) error {
	st := status.New(codes.Unavailable, e.Error())
	if d, err := st.WithDetails(&errdetails.ErrorInfo{Reason: Reason, Domain: Domain,
		Metadata: map[string]string{leaderKey: e.Leader}}); err == nil {
		st = d
	}
	return st.Err()
}

// Leader reports whether err is a follower's refusal and, if so, the
// leader's address it names ("" while none is known).
func Leader(err error) (string, bool) {
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.Unavailable {
		return "", false
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.Reason == Reason && info.Domain == Domain {
			return info.Metadata[leaderKey], true
		}
	}
	return "", false
}
