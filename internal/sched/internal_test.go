package sched

import (
	"cmp"
	"math/rand"
	"slices"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

// TestSegTreeFirst compares the tree with a linear scan over random
// leaves, updates and thresholds (up to 700 leaves), and the tree after
// the updates with one built from its leaves.
func TestSegTreeFirst(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for round := range 300 {
		n := 1 + rng.Intn(70)
		if round%10 == 0 {
			n = 1 + rng.Intn(700)
		}
		leaves := make([]leafVal, n)
		tr := newSegTree(n)
		set := func(i int) {
			l := leafVal{cpu: int32(rng.Intn(9) - 1), mem: int32(rng.Intn(1000)), gpu: int32(rng.Intn(3) * rng.Intn(5))}
			if rng.Intn(3) == 0 {
				l.idle = l.cpu
			}
			leaves[i] = l
		}
		for i := range n {
			set(i)
			tr.setLeaf(i, leaves[i])
		}
		tr.build()
		for q := range 100 {
			if q%3 == 0 {
				i := rng.Intn(n)
				set(i)
				tr.update(i, leaves[i])
			}
			from := rng.Intn(n + 1)
			m := leafVal{cpu: int32(1 + rng.Intn(8)), idle: int32(rng.Intn(2) * rng.Intn(8)),
				gpu: int32(rng.Intn(2) * rng.Intn(5)), mem: int32(rng.Intn(1000))}
			want := -1
			for i := from; i < n; i++ {
				l := leaves[i]
				if l.cpu >= m.cpu && l.idle >= m.idle && l.gpu >= m.gpu && l.mem >= m.mem {
					want = i
					break
				}
			}
			if got := tr.first(from, m); got != want {
				t.Fatalf("round %d: first(%d, %+v) = %d, want %d", round, from, m, got, want)
			}
		}
		fresh := newSegTree(n)
		for i := range n {
			fresh.setLeaf(i, leaves[i])
		}
		fresh.build()
		if !slices.Equal(fresh.v, tr.v) {
			t.Fatalf("round %d: the tree after updates differs from one built from its leaves", round)
		}
	}
}

// TestSegTreeHugeMemory: memory past 32 bits is clamped in the tree
// (treeMem), so a node with more than 2 PiB is still a candidate for a
// request asking for more than that, and one under it is not.
func TestSegTreeHugeMemory(t *testing.T) {
	const pib2 = int64(1) << 31 // MiB
	tr := newSegTree(3)
	for pos, mem := range []int64{pib2 - 2, 4 * pib2, 3 * pib2} {
		tr.setLeaf(pos, leafVal{cpu: 8, mem: treeMem(mem)})
	}
	tr.build()
	for _, c := range []struct {
		from int
		mem  int64
		want int
	}{{0, pib2 - 2, 0}, {0, pib2 - 1, 1}, {0, pib2, 1}, {0, 8 * pib2, 1}, {2, 8 * pib2, 2}, {0, -1 << 40, 0}} {
		if got := tr.first(c.from, leafVal{cpu: 1, mem: treeMem(c.mem)}); got != c.want {
			t.Errorf("first(%d, mem %d) = %d, want %d", c.from, c.mem, got, c.want)
		}
	}
}

func TestCompressNames(t *testing.T) {
	cases := []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"n1"}, "n1"},
		{[]string{"n3", "n1", "n2"}, "n[1-3]"},
		{[]string{"n1", "n2", "n4", "n5", "n7"}, "n[1-2,4-5,7]"},
		{[]string{"c01", "c02", "c03", "c10"}, "c[01-03,10]"},
		{[]string{"n9", "n10", "n11"}, "n[9-11]"},
		{[]string{"n09", "n010"}, "n[09,010]"},
		{[]string{"gpu2", "login", "gpu1", "cpu7", "login"}, "cpu7,gpu[1-2],login"},
		{[]string{"rack1-n1", "rack1-n2", "rack2-n1"}, "rack1-n[1-2],rack2-n1"},
	}
	for _, tc := range cases {
		if got := compressNames(tc.in); got != tc.want {
			t.Errorf("compressNames(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestPartOf: the kept last lookup answers as the maps do, names
// alternating, repeated, unknown to one map or both.
func TestPartOf(t *testing.T) {
	a, b := &model.Partition{Name: "a"}, &model.Partition{Name: "b"}
	psA, psC := &partState{}, &partState{}
	s := &scheduler{in: &Input{Partitions: map[string]*model.Partition{"a": a, "b": b}},
		c: &cluster{parts: map[string]*partState{"a": psA, "c": psC}}}
	for _, name := range []string{"a", "a", "b", "a", "c", "c", "", "zz", "b", "b", "a"} {
		p, ps := s.partOf(name)
		if p != s.in.Partitions[name] || ps != s.c.parts[name] {
			t.Fatalf("partOf(%q) = %v, %p; want %v, %p", name, p, ps, s.in.Partitions[name], s.c.parts[name])
		}
	}
}

// TestRadixOrder compares radixOrder with a comparison sort on random keys:
// priorities and IDs over narrow and wide ranges (so that some bytes are
// shared by every key and skipped), and duplicates.
func TestRadixOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for round := range 200 {
		n := rng.Intn(3000)
		prios, ids := uint32(1+rng.Intn(5)), 1+rng.Intn(1<<uint(1+rng.Intn(31)))
		if rng.Intn(2) == 0 {
			prios = uint32(1 + rng.Intn(1<<31))
		}
		entries := make([]orderEntry, n)
		for k := range entries {
			key := uint64(^(rng.Uint32()%prios))<<32 | uint64(rng.Intn(ids))
			entries[k] = orderEntry{key: key, j: &model.Job{ID: model.JobID(k)}}
		}
		want := slices.Clone(entries)
		slices.SortStableFunc(want, func(a, b orderEntry) int { return cmp.Compare(a.key, b.key) })
		got := radixOrder(slices.Clone(entries), make([]orderEntry, n))
		if len(got) != n {
			t.Fatalf("round %d: %d entries, want %d", round, len(got), n)
		}
		for k := range got {
			if got[k].key != want[k].key || got[k].j != want[k].j {
				t.Fatalf("round %d: entry %d is key %x job %d, want %x job %d", round, k, got[k].key, got[k].j.ID, want[k].key, want[k].j.ID)
			}
		}
	}
}
