package cli

import "strconv"

// DefaultBitstrLen is how many bytes of an array's task expression
// squeue and sacct print when SLURM_BITSTR_LEN is unset.
const DefaultBitstrLen = 64

// BitstrLen is SLURM_BITSTR_LEN (0 = no limit), or DefaultBitstrLen when
// it is unset or not a count.
func (e *Env) BitstrLen() int {
	if v, ok := e.LookupEnv("SLURM_BITSTR_LEN"); ok {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			return n
		}
	}
	return DefaultBitstrLen
}

// TaskExpr writes sorted task ids as ranges ("1-3,5"), cut to fit
// bitstrLen bytes with "..." (0 = no limit), then the throttle ("%4"):
// the text inside "123_[...]" of an array's pending tasks.
func TaskExpr(ids []int, throttle, bitstrLen int) string {
	var b []byte
	for i := 0; i < len(ids); {
		k := i
		for k+1 < len(ids) && ids[k+1] == ids[k]+1 {
			k++
		}
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(ids[i]), 10)
		if k > i {
			b = append(b, '-')
			b = strconv.AppendInt(b, int64(ids[k]), 10)
		}
		i = k + 1
	}
	if bitstrLen > 0 && len(b) > bitstrLen-1 {
		b = append(b[:max(bitstrLen-4, 0)], "..."...)
	}
	if throttle > 0 {
		b = append(b, '%')
		b = strconv.AppendInt(b, int64(throttle), 10)
	}
	return string(b)
}
