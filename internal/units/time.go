package units

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Unlimited mirrors model.Unlimited: a duration without end.
const Unlimited = -2

// ParseDuration parses a Slurm time limit and returns seconds. Accepted:
// "M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S", and UNLIMITED/INFINITE.
// "0" means no limit (Unlimited). Slurm rounds seconds up to whole minutes;
// Drover keeps them, so "0:30" is thirty seconds.
func ParseDuration(s string) (int64, error) {
	v := strings.TrimSpace(s)
	if v == "" {
		return 0, fmt.Errorf("empty time value")
	}
	switch strings.ToUpper(v) {
	case "UNLIMITED", "INFINITE", "-1":
		return Unlimited, nil
	}
	var days int64
	rest := v
	hasDays := false
	if i := strings.IndexByte(v, '-'); i >= 0 {
		d, err := parseUint(v[:i])
		if err != nil {
			return 0, fmt.Errorf("invalid time value %q", s)
		}
		days, rest, hasDays = d, v[i+1:], true
	}
	parts := strings.Split(rest, ":")
	if len(parts) > 3 {
		return 0, fmt.Errorf("invalid time value %q", s)
	}
	nums := make([]int64, len(parts))
	for i, p := range parts {
		n, err := parseUint(p)
		if err != nil {
			return 0, fmt.Errorf("invalid time value %q", s)
		}
		nums[i] = n
	}
	var secs int64
	if hasDays {
		// D-H, D-H:M, D-H:M:S
		secs = days*86400 + nums[0]*3600
		if len(nums) > 1 {
			secs += nums[1] * 60
		}
		if len(nums) > 2 {
			secs += nums[2]
		}
	} else {
		switch len(nums) {
		case 1: // minutes
			secs = nums[0] * 60
		case 2: // minutes:seconds
			secs = nums[0]*60 + nums[1]
		case 3:
			secs = nums[0]*3600 + nums[1]*60 + nums[2]
		}
	}
	if secs == 0 {
		return Unlimited, nil
	}
	return secs, nil
}

func parseUint(s string) (int64, error) {
	if s == "" || len(s) > 9 {
		return 0, fmt.Errorf("bad number")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("bad number")
		}
	}
	return strconv.ParseInt(s, 10, 64)
}

// FormatLimit prints a limit as scontrol and sinfo do: "UNLIMITED",
// "H:MM:SS", or "D-HH:MM:SS" ("1:00:00", "2-00:00:00").
func FormatLimit(secs int64) string {
	if secs == Unlimited || secs < 0 {
		return "UNLIMITED"
	}
	d, h, m, s := secs/86400, secs/3600%24, secs/60%60, secs%60
	if d > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, s)
	}
	return fmt.Sprintf("%d:%02d:%02d", h, m, s)
}

// FormatElapsed prints a duration as scontrol/sacct do: "HH:MM:SS" or
// "D-HH:MM:SS".
func FormatElapsed(secs int64) string {
	if secs < 0 {
		secs = 0
	}
	d, h, m, s := secs/86400, secs/3600%24, secs/60%60, secs%60
	if d > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, s)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, s)
}

// FormatSqueueTime prints squeue's TIME column: "M:SS", "H:MM:SS" or
// "D-HH:MM:SS"; "INVALID" when negative.
func FormatSqueueTime(secs int64) string {
	if secs < 0 {
		return "INVALID"
	}
	d, h, m, s := secs/86400, secs/3600%24, secs/60%60, secs%60
	switch {
	case d > 0:
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, s)
	case h > 0:
		return fmt.Sprintf("%d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%d:%02d", m, s)
}

// FormatTimestamp prints unix seconds as Slurm's local ISO form
// "YYYY-MM-DDTHH:MM:SS"; zero prints as unset (e.g. "Unknown" or "N/A").
func FormatTimestamp(unix int64, unset string) string {
	if unix <= 0 {
		return unset
	}
	return time.Unix(unix, 0).Format("2006-01-02T15:04:05")
}
