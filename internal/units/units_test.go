package units

import "testing"

func TestParseDuration(t *testing.T) {
	cases := map[string]int64{
		"10": 600, "1:30": 90, "1:00:00": 3600, "2-0": 2 * 86400, "1-2:3": 86400 + 7200 + 180,
		"1-2:3:4": 86400 + 7200 + 184, "0": Unlimited, "UNLIMITED": Unlimited, "infinite": Unlimited, "0:05": 5,
	}
	for in, want := range cases {
		got, err := ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "1:2:3:4", "-5", "1-", "1-a", "5m", "1:-1"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
}

func TestFormat(t *testing.T) {
	if g := FormatLimit(3600); g != "1:00:00" {
		t.Error(g)
	}
	if g := FormatLimit(2 * 86400); g != "2-00:00:00" {
		t.Error(g)
	}
	if g := FormatLimit(Unlimited); g != "UNLIMITED" {
		t.Error(g)
	}
	if g := FormatSqueueTime(65); g != "1:05" {
		t.Error(g)
	}
	if g := FormatSqueueTime(3725); g != "1:02:05" {
		t.Error(g)
	}
	if g := FormatElapsed(65); g != "00:01:05" {
		t.Error(g)
	}
}

func TestParseMem(t *testing.T) {
	cases := map[string]int64{"100": 100, "100M": 100, "2G": 2048, "2g": 2048, "1T": 1 << 20, "512K": 1, "1.5G": 1536}
	for in, want := range cases {
		got, err := ParseMemMiB(in)
		if err != nil || got != want {
			t.Errorf("ParseMemMiB(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "G", "abc", "-1", "10X", "10GB"} {
		if _, err := ParseMemMiB(bad); err == nil {
			t.Errorf("ParseMemMiB(%q) accepted", bad)
		}
	}
	if FormatMemMiB(2048) != "2G" || FormatMemMiB(100) != "100M" {
		t.Error("FormatMemMiB")
	}
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"10", "1-2:3:4", "UNLIMITED", "0:30"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseDuration(s)
		if err == nil && v != Unlimited && v <= 0 {
			t.Fatalf("%q -> %d", s, v)
		}
	})
}

func FuzzParseMem(f *testing.F) {
	for _, s := range []string{"10", "4G", "1.5T"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseMemMiB(s)
		if err == nil && v < 0 {
			t.Fatalf("%q -> %d", s, v)
		}
	})
}
