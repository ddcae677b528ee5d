package model

import (
	"math/rand"
	"reflect"
	"slices"
	"testing"
)

func TestParseGres(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []GresItem
		bad  bool
	}{
		{"", nil, false},
		{"(null)", nil, false},
		{"gpu", []GresItem{{Name: "gpu", Count: 1}}, false},
		{"gpu:4", []GresItem{{Name: "gpu", Count: 4}}, false},
		{"gpu:a100:4", []GresItem{{Name: "gpu", Type: "a100", Count: 4}}, false},
		{"gpu:a100", []GresItem{{Name: "gpu", Type: "a100", Count: 1}}, false},
		{"gpu:a100:2,gpu:v100:1,mps:200", []GresItem{{"gpu", "a100", 2}, {"gpu", "v100", 1}, {"mps", "", 200}}, false},
		{"mps:1K", []GresItem{{Name: "mps", Count: 1024}}, false},
		{"gpu:a100:2(S:0-1)", []GresItem{{Name: "gpu", Type: "a100", Count: 2}}, false},
		{"gpu:a:b:c", nil, true},
		{":4", nil, true},
		{"gpu:a100:x", nil, true},
		{"gpu:-1", nil, true},
		{"gp u:1", nil, true},
	} {
		got, err := ParseGres(tc.in)
		if (err != nil) != tc.bad || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseGres(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
	if n := GPUCount([]GresItem{{"gpu", "a", 2}, {"gpu", "b", 1}, {"mps", "", 9}}, ""); n != 3 {
		t.Errorf("GPUCount any = %d", n)
	}
}

func FuzzParseGres(f *testing.F) {
	for _, s := range []string{"gpu:a100:4,mps:1K", "gpu", "gpu:2(S:0)", ":", ",,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		items, err := ParseGres(s)
		if err != nil {
			return
		}
		for _, g := range items {
			if g.Count < 0 || g.Name == "" {
				t.Fatalf("%q gave %+v", s, g)
			}
			again, err := ParseGres(g.String())
			if err != nil || len(again) != 1 || again[0] != g {
				t.Fatalf("%q: item %+v does not round-trip: %v %v", s, g, again, err)
			}
		}
	})
}

func TestBitmap(t *testing.T) {
	b := BitmapOf(0, 1, 2, 3, 8, 70)
	if s := b.String(); s != "0-3,8,70" {
		t.Errorf("String = %q", s)
	}
	p, ok := ParseBitmap("0-3,8,70")
	if !ok || !reflect.DeepEqual(p.IDs(), b.IDs()) {
		t.Errorf("ParseBitmap = %v %v", p, ok)
	}
	if b.Count() != 6 || !b.Has(70) || b.Has(69) || b.Has(-1) {
		t.Errorf("Count/Has wrong for %v", b)
	}
	free, ok := b.FirstFree(3, 10, nil)
	if !ok || free.String() != "4-6" {
		t.Errorf("FirstFree = %v %v", free, ok)
	}
	if _, ok := b.FirstFree(6, 10, nil); ok {
		t.Error("FirstFree found 6 of 4 free")
	}
	odd, _ := b.FirstFreeBesides(BitmapOf(4), 2, 12, func(id int) bool { return id%2 == 1 })
	if odd.String() != "5,7" {
		t.Errorf("FirstFreeBesides = %v", odd)
	}
	if got := b.AndNot(BitmapOf(70, 0)).String(); got != "1-3,8" {
		t.Errorf("AndNot = %q", got)
	}
	if len(b.AndNot(b)) != 0 {
		t.Error("AndNot self not empty")
	}
	if !b.Intersects(BitmapOf(8)) || b.Intersects(BitmapOf(9)) {
		t.Error("Intersects")
	}
	owned := Bitmap(nil).AddTo(BitmapOf(1))
	owned = owned.AddTo(BitmapOf(65))
	if owned.String() != "1,65" {
		t.Errorf("AddTo = %v", owned)
	}
	for _, bad := range []string{"a", "3-1", "-1", "1,", "99999999"} {
		if _, ok := ParseBitmap(bad); ok {
			t.Errorf("ParseBitmap(%q) accepted", bad)
		}
	}
}

func TestUsageMerge(t *testing.T) {
	u := &Usage{}
	u.Merge("n1", &Usage{MaxRSS: 100, AveRSS: 50, Samples: 2, UserCPU: 10, SystemCPU: 1, GPUs: "n1:0"})
	u.Merge("n2", &Usage{MaxRSS: 300, AveRSS: 200, Samples: 2, UserCPU: 5, GPUs: "n2:1"})
	if u.MaxRSS != 300 || u.MaxRSSNode != "n2" || u.AveRSS != 125 || u.TotalCPU() != 16 || u.Nodes != 2 || u.GPUs != "n1:0;n2:1" {
		t.Errorf("merged %+v", u)
	}
}

// TestFirstFreeBesides compares the word-at-a-time search with FirstFree
// over the union of the two sets, on random sets of up to three words.
func TestFirstFreeBesides(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	set := func() Bitmap {
		var ids []int
		for range rng.Intn(150) {
			ids = append(ids, rng.Intn(190))
		}
		return BitmapOf(ids...)
	}
	for range 2000 {
		b, also := set(), set()
		n, limit := rng.Intn(70), rng.Intn(200)
		var want func(int) bool
		if rng.Intn(2) == 0 {
			m := 2 + rng.Intn(3)
			want = func(id int) bool { return id%m != 0 }
		}
		got, ok := b.FirstFreeBesides(also, n, limit, want)
		exp, expOK := b.Or(also).FirstFree(n, limit, want)
		if ok != expOK || !slices.Equal(got, exp) {
			t.Fatalf("FirstFreeBesides(%v, %v, n=%d, limit=%d) = %v %v, want %v %v", b, also, n, limit, got, ok, exp, expOK)
		}
	}
}
