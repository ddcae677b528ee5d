package features

import "testing"

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		expr string
		have []string
		want bool
	}{
		{"", nil, true},
		{"a", []string{"a"}, true},
		{"a", []string{"b"}, false},
		{"a&b", []string{"a", "b"}, true},
		{"a&b", []string{"a"}, false},
		{"a,b", []string{"a"}, false},
		{"a|b", []string{"b"}, true},
		{"a|b&c", []string{"a"}, true},
		{"a|b&c", []string{"b"}, false},
		{"(a|b)&c", []string{"b", "c"}, true},
		{"(a|b)&c", []string{"a"}, false},
		{"[rack1|rack2]", []string{"rack2"}, true},
		{" a & b ", []string{"a", "b"}, true},
		{"gpu:a100", []string{"gpu:a100"}, true},
	} {
		e, err := Parse(c.expr)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.expr, err)
		}
		if got := e.Match(c.have); got != c.want {
			t.Errorf("%q on %v = %v, want %v", c.expr, c.have, got, c.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, s := range []string{"a&", "&a", "a||b", "(a", "a)", "[a|b)", "gpu*2", "a b", "()", "!a"} {
		if _, err := Parse(s); err != ErrInvalid {
			t.Errorf("Parse(%q) = %v, want ErrInvalid", s, err)
		}
	}
	deep := ""
	for range 40 {
		deep += "("
	}
	if _, err := Parse(deep + "a"); err != ErrInvalid {
		t.Errorf("deep nesting accepted")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"a", "a&b|c", "(a|b)&[c|d]", "x*2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Parse(s)
		if err != nil {
			return
		}
		_ = e.Match([]string{"a", "b"})
		for _, n := range e.Names() {
			if n == "" {
				t.Fatalf("empty name from %q", s)
			}
		}
	})
}
