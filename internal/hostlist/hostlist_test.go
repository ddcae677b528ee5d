package hostlist

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	cases := []struct {
		in   string
		want string // names joined by spaces
	}{
		{"", ""},
		{" , ,", ""},
		{"tux", "tux"},
		{"a,b", "a b"},
		{"a b\tc", "a b c"},
		{"a,a", "a a"},
		{"node[1-3]", "node1 node2 node3"},
		{"node[01-03,10]", "node01 node02 node03 node10"},
		{"node[9-11]", "node9 node10 node11"},
		{"node[08-10]", "node08 node09 node10"},
		{"linux[0000-0002]", "linux0000 linux0001 linux0002"},
		{"node[5]", "node5"},
		{"[1-2]", "1 2"},
		{"rack[0-1]_blade[0-2]", "rack0_blade0 rack0_blade1 rack0_blade2 rack1_blade0 rack1_blade1 rack1_blade2"},
		{"c457-[011-012]", "c457-011 c457-012"},
		{"em[014,055-056],login", "em014 em055 em056 login"},
		{"n[1-2]-ib,x", "n1-ib n2-ib x"},
		{"tux[2,1-2]", "tux2 tux1 tux2"},
	}
	for _, c := range cases {
		got, err := Expand(c.in)
		if err != nil {
			t.Errorf("Expand(%q): %v", c.in, err)
			continue
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("Expand(%q) = %q; want %q", c.in, g, c.want)
		}
		n, err := Count(c.in)
		if err != nil || n != len(got) {
			t.Errorf("Count(%q) = %d, %v; want %d", c.in, n, err, len(got))
		}
	}
}

func TestExpandErrors(t *testing.T) {
	cases := []struct{ in, msg string }{
		{"node[1-3", "unbalanced '['"},
		{"node1-3]", "unbalanced ']'"},
		{"node[[1]]", "nested '['"},
		{"node[]", "empty brackets"},
		{"node[1,,2]", "empty range"},
		{"node[3-1]", "reversed range"},
		{"node[a-b]", "non-numeric"},
		{"node[1-x]", "non-numeric"},
		{"node[1-2-3]", "non-numeric"},
		{"node[-2]", "missing number"},
		{"node[1-]", "missing number"},
		{"node[ 1]", "non-numeric"},
		{"node[1234567890123456789]", "too long"},
		{"n[0-1048576]", "more than"},
		{"a[0-1023]b[0-1024]", "more than"},
		{"a[0-999999999999999999]b[0-999999999999999999]", "more than"},
		{"a[0-600000],b[0-600000]", "more than"},
	}
	for _, c := range cases {
		got, err := Expand(c.in)
		var he *Error
		if !errors.As(err, &he) {
			t.Errorf("Expand(%q) = %v, %v; want *Error", c.in, got, err)
			continue
		}
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("Expand(%q) error %q; want it to mention %q", c.in, err, c.msg)
		}
		if _, err := Count(c.in); err == nil {
			t.Errorf("Count(%q) accepted", c.in)
		}
	}
}

func TestCompress(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"tux", "tux"},
		{"node5", "node5"},
		{"node1 node2 node3 node5", "node[1-3,5]"},
		{"node3 node1 node2 node2", "node[1-3]"},
		{"node01 node02 node03", "node[01-03]"},
		{"node08 node09 node10", "node[08-10]"},
		{"node9 node10 node11", "node[9-11]"},
		{"node10 node2 node1", "node[1-2,10]"},
		{"b1 a2 a1 login", "a[1-2],b1,login"},
		{"node node1", "node,node1"},
		{"node1 node01", "node[1,01]"},
		{"c457-011 c457-012 c457-014", "c457-[011-012,014]"},
		{"rack1_blade0 rack0_blade1 rack0_blade0", "rack0_blade[0-1],rack1_blade0"},
		{"x y x", "x,y"},
		{"007 008", "[007-008]"},
	}
	for _, c := range cases {
		if got := Compress(fields(c.in)); got != c.want {
			t.Errorf("Compress(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

func TestCompressUnsorted(t *testing.T) {
	cases := []struct{ in, want string }{
		{"tux2 tux1 tux2", "tux[2,1-2]"},
		{"tux1 tux2 tux3", "tux[1-3]"},
		{"b1 a1 b2", "b1,a1,b2"},
		{"n09 n10 n11", "n[09-11]"},
		{"n9 n010", "n[9,010]"},
		{"x x", "x,x"},
		{"n1 n1", "n[1,1]"},
	}
	for _, c := range cases {
		if got := CompressUnsorted(fields(c.in)); got != c.want {
			t.Errorf("CompressUnsorted(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

func fields(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, " ")
}

// randomNames builds plausible node names: shared prefixes, mixed padding,
// duplicates, numbers close together so ranges form.
func randomNames(r *rand.Rand) []string {
	prefixes := []string{"n", "node", "gpu-", "r1_b", "login", "x9y"}
	names := make([]string, r.Intn(60))
	for i := range names {
		p := prefixes[r.Intn(len(prefixes))]
		switch r.Intn(5) {
		case 0:
			names[i] = p
		case 1:
			names[i] = fmt.Sprintf("%s%03d", p, r.Intn(30))
		default:
			names[i] = fmt.Sprintf("%s%d", p, r.Intn(30))
		}
	}
	return names
}

func TestRoundTripProperty(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		names := randomNames(r)
		checkRoundTrip(t, names)
	}
}

// checkRoundTrip asserts the invariants that both fuzzing and the random
// property test rely on.
func checkRoundTrip(t *testing.T, names []string) {
	t.Helper()
	var nonEmpty []string
	for _, n := range names {
		if n != "" {
			nonEmpty = append(nonEmpty, n)
		}
	}
	c := Compress(names)
	got, err := Expand(c)
	if err != nil {
		t.Fatalf("Expand(Compress(%q)) = %q: %v", names, c, err)
	}
	want := slices.Clone(nonEmpty)
	slices.Sort(want)
	want = slices.Compact(want)
	sorted := slices.Clone(got)
	slices.Sort(sorted)
	if !slices.Equal(sorted, want) {
		t.Fatalf("Expand(Compress(%q)) via %q = %q", names, c, got)
	}
	if c2 := Compress(got); c2 != c {
		t.Fatalf("Compress not stable: %q then %q", c, c2)
	}
	u := CompressUnsorted(names)
	got, err = Expand(u)
	if err != nil || !slices.Equal(got, nonEmpty) {
		t.Fatalf("Expand(CompressUnsorted(%q)) via %q = %q, %v", names, u, got, err)
	}
}

func TestSortedByPrefixThenNumber(t *testing.T) {
	got, err := Expand(Compress([]string{"n10", "m2", "n9", "n1", "m10"}))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"m2", "m10", "n1", "n9", "n10"}; !slices.Equal(got, want) {
		t.Fatalf("got %q; want %q", got, want)
	}
}

func benchNames() []string {
	names := make([]string, 10000)
	for i := range names {
		names[i] = fmt.Sprintf("node%05d", i*3/2) // gaps every other step
	}
	return names
}

func BenchmarkExpand10k(b *testing.B) {
	expr := Compress(benchNames())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Expand(expr); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCompress10k(b *testing.B) {
	names := benchNames()
	rand.New(rand.NewSource(1)).Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	b.ReportAllocs()
	for b.Loop() {
		Compress(names)
	}
}

func BenchmarkCompressUnsorted10k(b *testing.B) {
	names := benchNames()
	b.ReportAllocs()
	for b.Loop() {
		CompressUnsorted(names)
	}
}
