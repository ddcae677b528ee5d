package model

import (
	"math/bits"
	"strconv"
	"strings"
)

// Bitmap is a set of small non-negative integers: a node's CPU ids or GPU
// indices. The zero value is empty. A Bitmap shared through the state store
// is never written: Or/AndNot return new values.
type Bitmap []uint64

// BitmapOf returns the set holding ids.
func BitmapOf(ids ...int) Bitmap {
	var b Bitmap
	for _, id := range ids {
		b = b.with(id)
	}
	return b
}

func (b Bitmap) with(id int) Bitmap {
	w := id / 64
	if w >= len(b) {
		b = append(b, make([]uint64, w+1-len(b))...)
	}
	b[w] |= 1 << (uint(id) % 64)
	return b
}

// Has reports whether id is in b.
func (b Bitmap) Has(id int) bool {
	w := id / 64
	return id >= 0 && w < len(b) && b[w]&(1<<(uint(id)%64)) != 0
}

// Count is the number of ids in b.
func (b Bitmap) Count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// IDs lists the ids in ascending order.
func (b Bitmap) IDs() []int {
	out := make([]int, 0, b.Count())
	for wi, w := range b {
		for w != 0 {
			t := bits.TrailingZeros64(w)
			out = append(out, wi*64+t)
			w &^= 1 << uint(t)
		}
	}
	return out
}

// Or returns b ∪ o as a new Bitmap.
func (b Bitmap) Or(o Bitmap) Bitmap {
	out := make(Bitmap, max(len(b), len(o)))
	copy(out, b)
	for i, w := range o {
		out[i] |= w
	}
	return out.trim()
}

// AndNot returns b \ o as a new Bitmap.
func (b Bitmap) AndNot(o Bitmap) Bitmap {
	out := make(Bitmap, len(b))
	copy(out, b)
	for i := range out {
		if i < len(o) {
			out[i] &^= o[i]
		}
	}
	return out.trim()
}

// Intersects reports whether b and o share an id.
func (b Bitmap) Intersects(o Bitmap) bool {
	for i := 0; i < len(b) && i < len(o); i++ {
		if b[i]&o[i] != 0 {
			return true
		}
	}
	return false
}

// FirstFree returns the n lowest ids in [0,limit) that are neither in b
// nor excluded by want (when want is non-nil, only ids in want qualify).
// ok is false when fewer than n qualify.
func (b Bitmap) FirstFree(n, limit int, want func(int) bool) (Bitmap, bool) {
	var out Bitmap
	got := 0
	for id := 0; id < limit && got < n; id++ {
		if b.Has(id) || (want != nil && !want(id)) {
			continue
		}
		out = out.with(id)
		got++
	}
	return out, got == n
}

// FirstFreeBesides is FirstFree where ids in also are taken too: it
// looks past two sets without building their union. It reads them a
// word at a time: the scheduler picks the CPU ids of every job it starts
// with it, and an id at a time was a thousand instructions per node.
// Without want, a word's free ids are taken together too: adding them
// one by one was still a twelfth of the main pass over 50,000 jobs.
func (b Bitmap) FirstFreeBesides(also Bitmap, n, limit int, want func(int) bool) (Bitmap, bool) {
	var out Bitmap
	got := 0
	for w := 0; w*64 < limit && got < n; w++ {
		free := ^(b.word(w) | also.word(w))
		if rem := limit - w*64; rem < 64 {
			free &= 1<<uint(rem) - 1
		}
		if want == nil {
			// The whole word's share at once: the lowest n-got free ids.
			take := free
			if bits.OnesCount64(free) > n-got {
				rest := free
				for range n - got {
					rest &= rest - 1
				}
				take = free &^ rest
			}
			if take != 0 {
				out = out.with(w*64 + 63 - bits.LeadingZeros64(take))
				out[w] |= take
				got += bits.OnesCount64(take)
			}
			continue
		}
		for ; free != 0 && got < n; free &= free - 1 {
			id := w*64 + bits.TrailingZeros64(free)
			if !want(id) {
				continue
			}
			out = out.with(id)
			got++
		}
	}
	return out, got == n
}

// word is b's w-th word (0 past its end).
func (b Bitmap) word(w int) uint64 {
	if w < len(b) {
		return b[w]
	}
	return 0
}

// AddTo sets o's ids in b, growing it; b must be owned by the caller (not
// shared through the state store).
func (b Bitmap) AddTo(o Bitmap) Bitmap {
	if len(o) > len(b) {
		b = append(b, make([]uint64, len(o)-len(b))...)
	}
	for i, w := range o {
		b[i] |= w
	}
	return b
}

func (b Bitmap) trim() Bitmap {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	if len(b) == 0 {
		return nil
	}
	return b
}

// String renders b as a range list, "0-3,8" (Slurm's CPU_IDs / IDX form);
// "" when empty.
func (b Bitmap) String() string {
	ids := b.IDs()
	var sb strings.Builder
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if sb.Len() > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.Itoa(ids[i]))
		if j > i {
			sb.WriteByte('-')
			sb.WriteString(strconv.Itoa(ids[j]))
		}
		i = j + 1
	}
	return sb.String()
}

// ParseBitmap reads the range-list form String writes.
func ParseBitmap(s string) (Bitmap, bool) {
	var b Bitmap
	if s == "" {
		return nil, true
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 || a > 1<<16 {
			return nil, false
		}
		z := a
		if isRange {
			if z, err = strconv.Atoi(hi); err != nil || z < a || z > 1<<16 {
				return nil, false
			}
		}
		for id := a; id <= z; id++ {
			b = b.with(id)
		}
	}
	return b, true
}
