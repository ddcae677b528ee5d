package units

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseMemMiB parses a memory size with an optional K, M, G or T suffix
// (binary multiples; default unit MiB) and returns MiB, rounding up.
func ParseMemMiB(s string) (int64, error) {
	v := strings.TrimSpace(s)
	if v == "" {
		return 0, fmt.Errorf("empty memory size")
	}
	mult := float64(1)
	switch last := v[len(v)-1]; last | 0x20 {
	case 'k':
		mult = 1.0 / 1024
	case 'm':
	case 'g':
		mult = 1024
	case 't':
		mult = 1024 * 1024
	default:
		if last < '0' || last > '9' {
			return 0, fmt.Errorf("invalid memory size %q", s)
		}
		v += "M"
	}
	v = v[:len(v)-1]
	if len(v) > 0 && (v[len(v)-1] == 'b' || v[len(v)-1] == 'B') {
		return 0, fmt.Errorf("invalid memory size %q", s)
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || n < 0 || n > 1<<40 {
		return 0, fmt.Errorf("invalid memory size %q", s)
	}
	mib := n * mult
	out := int64(mib)
	if float64(out) < mib {
		out++
	}
	return out, nil
}

// FormatMemMiB prints MiB the way scontrol shows TRES memory: "512M",
// "4G", "1.50G" (whole units when exact).
func FormatMemMiB(mib int64) string {
	switch {
	case mib >= 1024*1024 && mib%(1024*1024) == 0:
		return strconv.FormatInt(mib/(1024*1024), 10) + "T"
	case mib >= 1024 && mib%1024 == 0:
		return strconv.FormatInt(mib/1024, 10) + "G"
	case mib >= 1024:
		return strconv.FormatFloat(float64(mib)/1024, 'f', 2, 64) + "G"
	}
	return strconv.FormatInt(mib, 10) + "M"
}

// ParseCount parses a count with an optional k (x1024) or m (x1048576)
// suffix, as node and GRES counts allow.
func ParseCount(s string) (int, error) {
	v := strings.TrimSpace(s)
	mult := 1
	if n := len(v); n > 0 {
		switch v[n-1] | 0x20 {
		case 'k':
			mult, v = 1024, v[:n-1]
		case 'm':
			mult, v = 1024*1024, v[:n-1]
		}
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 1<<30/mult {
		return 0, fmt.Errorf("invalid count %q", s)
	}
	return n * mult, nil
}
