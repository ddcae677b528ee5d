package wire

import (
	"strconv"
	"strings"

	pb "github.com/drover-hpc/drover/api/drover/v1"
)

// timeLimitPrefix marks a SignalJob that carries a running job's new time
// limit (scontrol update TimeLimit=) instead of a signal: the message
// field holds it, so the node protocol needs no new field. Signal stays 0,
// which an agent that does not know the message would send as a no-op.
const timeLimitPrefix = "TIMELIMIT "

// TimeLimitMsg is the message telling a job's nodes its new time limit in
// seconds (model.Unlimited for none).
func TimeLimitMsg(job, run uint32, limit int64) *pb.SignalJob {
	return &pb.SignalJob{JobId: job, Run: run, Message: timeLimitPrefix + strconv.FormatInt(limit, 10)}
}

// TimeLimitOf reads TimeLimitMsg's limit; false for any other message.
func TimeLimitOf(s *pb.SignalJob) (int64, bool) {
	v, ok := strings.CutPrefix(s.Message, timeLimitPrefix)
	if !ok || s.Terminate || s.Signal != 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}
