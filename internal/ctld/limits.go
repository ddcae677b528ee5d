package ctld

import (
	"log/slog"
	"strconv"
	"syscall"
	"time"

	"github.com/drover-hpc/drover/internal/grpcapi"
	"github.com/drover-hpc/drover/internal/slurmconf"
)

// Connection limits and their defaults. MessageTimeout is Slurm's key (10 s
// by default) for how long a message may take; here it bounds a new
// connection's handshake. DroverMaxConnsPerUser and DroverConnIdleTimeout
// are Drover's own.
const (
	defaultHandshake = 10 * time.Second
	defaultIdle      = 5 * time.Minute
	defaultPerUser   = 256
)

func connLimits(cfg *slurmconf.Config, log *slog.Logger) grpcapi.Limits {
	lim := grpcapi.Limits{Handshake: defaultHandshake, Idle: defaultIdle, PerUser: defaultPerUser}
	seconds := func(key string, into *time.Duration) {
		v, ok := cfg.Get(key)
		if !ok {
			return
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 3600 {
			log.Warn("slurm.conf: ignored, want seconds from 1 to 3600", "key", key, "value", v)
			return
		}
		*into = time.Duration(n) * time.Second
	}
	seconds("MessageTimeout", &lim.Handshake)
	seconds("DroverConnIdleTimeout", &lim.Idle)
	if v, ok := cfg.Get("DroverMaxConnsPerUser"); ok {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			lim.PerUser = n
		} else {
			log.Warn("slurm.conf: ignored, want a count (0 = no cap)", "key", "DroverMaxConnsPerUser", "value", v)
		}
	}
	return lim
}

// raiseFileLimit lifts the soft descriptor limit to the hard one: every
// client and agent connection holds a descriptor, and distributions start
// daemons at 1024.
func raiseFileLimit(log *slog.Logger) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur >= rl.Max {
		return
	}
	old := rl.Cur
	rl.Cur = rl.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		log.Warn("cannot raise the open files limit", "soft", old, "hard", rl.Max, "err", err)
	}
}
