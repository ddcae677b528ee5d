package format

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

type testRow struct {
	id, part, name, user, st, time, nodes, list string
}

func testTable() *Table[testRow] {
	return NewTable(
		Field[testRow]{Letter: 'i', Name: "JobID", Header: "JOBID", Append: Str(func(r testRow) string { return r.id })},
		Field[testRow]{Letter: 'P', Name: "Partition", Header: "PARTITION", Append: Str(func(r testRow) string { return r.part }), MinAuto: 9},
		Field[testRow]{Letter: 'j', Name: "Name", Header: "NAME", Append: Str(func(r testRow) string { return r.name })},
		Field[testRow]{Letter: 'u', Name: "UserName", Header: "USER", Append: Str(func(r testRow) string { return r.user })},
		Field[testRow]{Letter: 't', Name: "StateCompact", Header: "ST", Append: Str(func(r testRow) string { return r.st })},
		Field[testRow]{Letter: 'M', Name: "TimeUsed", Header: "TIME", Append: Str(func(r testRow) string { return r.time })},
		Field[testRow]{Letter: 'l', Name: "TimeLimit", Header: "TIME_LIMIT", Append: Str(func(r testRow) string { return r.time })},
		Field[testRow]{Letter: 'D', Name: "NumNodes", Aliases: []string{"nodes"}, Header: "NODES", Append: Str(func(r testRow) string { return r.nodes })},
		Field[testRow]{Letter: 'R', Name: "ReasonList", Header: "NODELIST(REASON)", Append: Str(func(r testRow) string { return r.list }), NoTruncate: true},
	)
}

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want Format
	}{
		{"%.18i %.9P", Format{Specs: []Spec{{Name: "i", Width: 18, Right: true, Suffix: " "}, {Name: "P", Width: 9, Right: true}}}},
		{"%i|%t", Format{Specs: []Spec{{Name: "i", Suffix: "|"}, {Name: "t"}}}},
		{"%k,%A", Format{Specs: []Spec{{Name: "k", Suffix: ","}, {Name: "A"}}}},
		{"id=%5i!", Format{Prefix: "id=", Specs: []Spec{{Name: "i", Width: 5, Suffix: "!"}}}},
		{"x%%i", Format{Prefix: "x", Specs: []Spec{{Name: "i"}}}},
		{"%#P %.#N", Format{Specs: []Spec{{Name: "P", Auto: true, Suffix: " "}, {Name: "N", Auto: true, Right: true}}}},
		{"just text", Format{Prefix: "just text"}},
		{"%i%", Format{Specs: []Spec{{Name: "i"}}}},
		{"%ALL", Format{All: true}},
		{"\x1e%c\x1f%n", Format{Prefix: "\x1e", Specs: []Spec{{Name: "c", Suffix: "\x1f"}, {Name: "n"}}}},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Parse(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"", "%5", "%.", "%.12", "a %99999999i"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) succeeded", in)
		}
	}
	if _, err := Parse(""); !errors.Is(err, ErrEmpty) {
		t.Errorf("Parse(\"\") = %v, want ErrEmpty", err)
	}
}

func TestParseLong(t *testing.T) {
	tests := []struct {
		in   string
		want []Spec
	}{
		{"JobID,Name", []Spec{{Name: "JobID", Long: true, Width: 20}, {Name: "Name", Long: true, Width: 20}}},
		{"Account:\x1f,JobID:\x1f,", []Spec{{Name: "Account", Long: true, Suffix: "\x1f"}, {Name: "JobID", Long: true, Suffix: "\x1f"}}},
		{"State:.10|,Name:", []Spec{{Name: "State", Long: true, Width: 10, Right: true, Suffix: "|"}, {Name: "Name", Long: true}}},
		{"nodehost:100,gres:512", []Spec{{Name: "nodehost", Long: true, Width: 100}, {Name: "gres", Long: true, Width: 512}}},
		{"partition:9 ,nodelist:0", []Spec{{Name: "partition", Long: true, Width: 9, Suffix: " "}, {Name: "nodelist", Long: true}}},
	}
	for _, tt := range tests {
		got, err := ParseLong(tt.in)
		if err != nil {
			t.Errorf("ParseLong(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got.Specs, tt.want) {
			t.Errorf("ParseLong(%q) = %+v, want %+v", tt.in, got.Specs, tt.want)
		}
	}
	for _, in := range []string{"", ",,", ":5", "a:999999999"} {
		if _, err := ParseLong(in); err == nil {
			t.Errorf("ParseLong(%q) succeeded", in)
		}
	}
}

func TestStringRoundTrip(t *testing.T) {
	for _, in := range []string{"%.18i %.9P %R", "id=%5i!", "%#P %.#N"} {
		f, err := Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.String(); got != in {
			t.Errorf("String(Parse(%q)) = %q", in, got)
		}
	}
	for _, in := range []string{"JobID,Name:,State:.10|"} {
		f, err := ParseLong(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.String(); got != in {
			t.Errorf("String(ParseLong(%q)) = %q", in, got)
		}
	}
}

var refRows = []testRow{
	{"41941", "debug", "sample_toobig", "root", "PD", "0:00", "1", "(PartitionConfig)"},
	{"41935_[1-10%2]", "debug", "sample_array", "root", "PD", "0:00", "1", "(Priority)"},
	{"41938", "debug", "sample_b", "root", "R", "0:05", "1", "vm"},
}

func render(t *testing.T, spec string, long bool, rows []testRow, opts Options) string {
	t.Helper()
	var f Format
	var err error
	if long {
		f, err = ParseLong(spec)
	} else {
		f, err = Parse(spec)
	}
	if err != nil {
		t.Fatalf("parse %q: %v", spec, err)
	}
	l, err := testTable().Compile(f)
	if err != nil {
		t.Fatalf("compile %q: %v", spec, err)
	}
	var b bytes.Buffer
	if err := l.Render(&b, rows, opts); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestRenderGolden(t *testing.T) {
	tests := []struct {
		name, spec string
		long       bool
		opts       Options
		want       string
	}{
		{"squeue default", "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R", false, Options{},
			"             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n" +
				"             41941     debug sample_t     root PD       0:00      1 (PartitionConfig)\n" +
				"    41935_[1-10%2]     debug sample_a     root PD       0:00      1 (Priority)\n" +
				"             41938     debug sample_b     root  R       0:05      1 vm\n"},
		{"no header raw", "%i", false, Options{NoHeader: true}, "41941\n41935_[1-10%2]\n41938\n"},
		{"literal", "%i|%t", false, Options{}, "JOBID|ST\n41941|PD\n41935_[1-10%2]|PD\n41938|R\n"},
		{"header truncated", "%.9l", false, Options{NoHeader: false}, "TIME_LIMI\n     0:00\n     0:00\n     0:05\n"},
		{"left truncated, no-truncate field", "%5j|%3R", false, Options{},
			"NAME |NODELIST(REASON)\nsampl|(PartitionConfig)\nsampl|(Priority)\nsampl|vm \n"},
		{"auto width", "%#P|%.#j|", false, Options{},
			"PARTITION|         NAME|\ndebug    |sample_toobig|\ndebug    | sample_array|\ndebug    |     sample_b|\n"},
		{"long default width", "JobID,Name", true, Options{},
			"JOBID               NAME                \n" +
				"41941               sample_toobig       \n" +
				"41935_[1-10%2]      sample_array        \n" +
				"41938               sample_b            \n"},
		{"long suffix no width", "jobid:\x1f,statecompact:\x1f,NODES:.3", true, Options{},
			"JOBID\x1fST\x1fNOD\n41941\x1fPD\x1f  1\n41935_[1-10%2]\x1fPD\x1f  1\n41938\x1fR\x1f  1\n"},
		{"parsable", "%.18i %j", false, Options{Delimiter: "|"}, "JOBID|NAME\n41941|sample_toobig\n41935_[1-10%2]|sample_array\n41938|sample_b\n"},
		{"parsable trailing", "%i", false, Options{Delimiter: "|", TrailingDelimiter: true, NoHeader: true}, "41941|\n41935_[1-10%2]|\n41938|\n"},
		{"all", "%all", false, Options{NoHeader: true}, "41941|sample_toobig|0:00|PD|root|1|0:00|debug|(PartitionConfig)\n"},
	}
	for _, tt := range tests {
		rows := refRows
		if tt.name == "all" {
			rows = refRows[:1]
		}
		if got := render(t, tt.spec, tt.long, rows, tt.opts); got != tt.want {
			t.Errorf("%s: got\n%q\nwant\n%q", tt.name, got, tt.want)
		}
	}
}

func TestUnknownField(t *testing.T) {
	for _, c := range []struct {
		spec string
		long bool
		msg  string
	}{
		{"%i %w", false, "invalid format specification: %w"},
		{"JobID,Bogus", true, `invalid format field "Bogus"`},
	} {
		var f Format
		if c.long {
			f, _ = ParseLong(c.spec)
		} else {
			f, _ = Parse(c.spec)
		}
		_, err := testTable().Compile(f)
		var ue *UnknownFieldError
		if !errors.As(err, &ue) || err.Error() != c.msg {
			t.Errorf("Compile(%q) = %v, want %s", c.spec, err, c.msg)
		}
	}
}

func TestCutKeepsRunes(t *testing.T) {
	got := string(appendCell(nil, "héllo", 2, false, false))
	if got != "h " {
		t.Errorf("cut = %q, want %q", got, "h ")
	}
	if got := string(appendCell(nil, "ab", 70, true, false)); len(got) != 70 || !strings.HasSuffix(got, " ab") {
		t.Errorf("wide pad = %q", got)
	}
}

func TestLookupCaseInsensitive(t *testing.T) {
	tb := testTable()
	for _, n := range []string{"jobid", "JOBID", "JobId", "nodes", "NumNodes"} {
		if _, ok := tb.Lookup(Spec{Name: n, Long: true}); !ok {
			t.Errorf("Lookup(%q) failed", n)
		}
	}
	if _, ok := tb.Lookup(Spec{Name: "ij"}); ok {
		t.Error("two-letter -o spec resolved")
	}
}

func BenchmarkRender10k(b *testing.B) {
	f, _ := Parse("%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R")
	l, _ := testTable().Compile(f)
	rows := make([]testRow, 10000)
	for i := range rows {
		rows[i] = refRows[i%len(refRows)]
	}
	b.ReportAllocs()
	for b.Loop() {
		var buf bytes.Buffer
		_ = l.Render(&buf, rows, Options{})
	}
}

func TestValues(t *testing.T) {
	for secs, want := range map[int64]string{0: "0:00", 59: "0:59", 600: "10:00", 3600: "1:00:00",
		86400 + 3661: "1-01:01:01", 400 * 86400: "400-00:00:00", -1: "INVALID"} {
		if got := string(AppendClock(nil, secs)); got != want {
			t.Errorf("AppendClock(%d) = %q, want %q", secs, got, want)
		}
	}
	for _, c := range []struct {
		n    int64
		unit int
		no   bool
		want string
	}{
		{0, UnitMega, false, "0"}, {250, UnitMega, false, "250M"}, {1000, UnitMega, false, "1000M"},
		{1024, UnitMega, false, "1G"}, {1536, UnitMega, false, "1.50G"}, {1025, UnitMega, false, "1025M"},
		{4 << 20, UnitMega, false, "4T"}, {2048, UnitMega, true, "2048M"}, {64, UnitNone, false, "64"},
		{1024, UnitNone, false, "1K"},
	} {
		if got := string(AppendUnits(nil, c.n, c.unit, c.no)); got != c.want {
			t.Errorf("AppendUnits(%d, %d, %v) = %q, want %q", c.n, c.unit, c.no, got, c.want)
		}
	}
	if got := string(AppendTimestamp(nil, 0, "N/A")); got != "N/A" {
		t.Errorf("AppendTimestamp(0) = %q", got)
	}
	ts := time.Date(2026, 11, 22, 5, 10, 0, 0, time.Local).Unix()
	if got := string(AppendTimestamp(nil, ts, "N/A")); got != "2026-11-22T05:10:00" {
		t.Errorf("AppendTimestamp = %q", got)
	}
}

// TestRenderInParts: a long table rendered in parts at once prints what
// rendering it row after row prints, header, auto widths, parsable form
// and all.
func TestRenderInParts(t *testing.T) {
	rows := make([]testRow, 3*partRows+7)
	for i := range rows {
		rows[i] = testRow{id: strings.Repeat("1", 1+i%7), part: "debug", name: "job" + strings.Repeat("x", i%13),
			user: "u", st: "PD", time: "0:00", nodes: "1", list: "(Priority)"}
	}
	for _, f := range []string{"%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R", "x%#P|%.#j %R"} {
		for _, o := range []Options{{}, {NoHeader: true}, {Delimiter: "|", TrailingDelimiter: true}} {
			fm, err := Parse(f)
			if err != nil {
				t.Fatal(err)
			}
			var one, parts bytes.Buffer
			for _, c := range []struct {
				out     *bytes.Buffer
				workers int
			}{{&one, 1}, {&parts, 4}} {
				l, err := testTable().Compile(fm)
				if err != nil {
					t.Fatal(err)
				}
				o.Workers = c.workers
				if err := l.Render(c.out, rows, o); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(one.Bytes(), parts.Bytes()) {
				t.Errorf("%q %+v: %d bytes in parts, %d row after row", f, o, parts.Len(), one.Len())
			}
		}
	}
}
