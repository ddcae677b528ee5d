package format

import (
	"strconv"
	"time"
)

// AppendClock appends a duration the way squeue and sinfo print times:
// "M:SS", "H:MM:SS" or "D-HH:MM:SS" (hours and days only when needed);
// "INVALID" when negative.
func AppendClock(dst []byte, secs int64) []byte {
	if secs < 0 {
		return append(dst, "INVALID"...)
	}
	d, h, m, s := secs/86400, secs/3600%24, secs/60%60, secs%60
	switch {
	case d > 0:
		dst = strconv.AppendInt(dst, d, 10)
		dst = append(dst, '-')
		dst = append2(dst, h)
		dst = append(dst, ':')
	case h > 0:
		dst = strconv.AppendInt(dst, h, 10)
		dst = append(dst, ':')
	default:
		dst = strconv.AppendInt(dst, m, 10)
		dst = append(dst, ':')
		return append2(dst, s)
	}
	dst = append2(dst, m)
	dst = append(dst, ':')
	return append2(dst, s)
}

func append2(dst []byte, v int64) []byte {
	return append(dst, byte('0'+v/10%10), byte('0'+v%10))
}

// AppendTimestamp appends unix seconds as local "YYYY-MM-DDTHH:MM:SS", or
// unset when t is not positive.
func AppendTimestamp(dst []byte, t int64, unset string) []byte {
	if t <= 0 {
		return append(dst, unset...)
	}
	return time.Unix(t, 0).AppendFormat(dst, "2006-01-02T15:04:05")
}

// Unit prefixes for AppendUnits.
const (
	UnitNone = iota
	UnitKilo
	UnitMega
	UnitGiga
	UnitTera
	UnitPeta
)

const unitLetters = "\x00KMGTP"

// AppendUnits appends n, counted in unit, converted up by 1024 while no
// precision is lost (half units count as exact), as Slurm prints memory
// and counts: 1024 MiB is "1G", 1536 MiB "1.50G", 1000 MiB "1000M", 1024
// CPUs "1K". noConvert keeps the original unit. Zero prints "0".
func AppendUnits(dst []byte, n int64, unit int, noConvert bool) []byte {
	if n == 0 {
		return append(dst, '0')
	}
	v := float64(n)
	for !noConvert && v >= 1024 && int64(v)%512 == 0 && unit < UnitPeta {
		v /= 1024
		unit++
	}
	if v == float64(int64(v)) {
		dst = strconv.AppendInt(dst, int64(v), 10)
	} else {
		dst = strconv.AppendFloat(dst, v, 'f', 2, 64)
	}
	if unit > UnitNone && unit <= UnitPeta {
		dst = append(dst, unitLetters[unit])
	}
	return dst
}
