package service

import "github.com/drover-hpc/drover/internal/api"

// NotLeaderError is api's follower refusal, under the name the controller's
// commit gate uses.
type NotLeaderError = api.NotLeaderError

// IsNotLeader reports whether err is a follower's refusal and returns it.
func IsNotLeader(err error) (*NotLeaderError, bool) { return api.IsNotLeader(err) }
