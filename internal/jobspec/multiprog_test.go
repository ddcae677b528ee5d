package jobspec

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParseMultiProg(t *testing.T) {
	silly := "###\n# srun -n8 -l --multi-prog silly.conf\n###\n" +
		"4-6       hostname\n1,7       echo  task:%t\n0,2-3     echo  offset:%o\n"
	tests := []struct {
		name   string
		conf   string
		ntasks int
		want   string // argv per rank joined with " " and "|", or an error fragment after "error: "
	}{
		{"man page example", silly, 8,
			"echo offset:0|echo task:1|echo offset:1|echo offset:2|hostname|hostname|hostname|echo task:7"},
		{"star takes the rest", "0 master\n* worker --id=%t --off=%o\n", 4,
			"master|worker --id=1 --off=0|worker --id=2 --off=1|worker --id=3 --off=2"},
		{"star alone", "*\tprog %t\n", 2, "prog 0|prog 1"},
		{"star covering nothing", "0-1 a\n* b\n", 2, "a|a"},
		{"quotes", `0 sh -c 'echo %t; echo "x y"' "rank %t" ''` + "\n", 1, `sh -c echo %t; echo "x y" rank 0 `},
		{"quotes join a word", `0 a'b c'"d %t"e` + "\n", 1, "ab cd 0e"},
		{"other percent kept", "0 printf %d%% %%t %\n", 1, "printf %d%% %0 %"},
		{"indented comment and blanks", "\n   # c\n\t\n0 a\r\n", 1, "a"},
		{"continuation", "0 a \\\n  b\n1 c\n", 2, "a b|c"},
		{"range with one rank", "0-0 a\n1 b\n", 2, "a|b"},
		{"missing rank", "0 a\n2 b\n", 3, "error: no program specified for task rank 1"},
		{"empty file", "", 1, "error: no program specified for task rank 0"},
		{"rank out of range", "0-1 a\n2 b\n", 2, "error: line 2: task rank 2 is out of range: the step has 2 tasks (ranks 0-1)"},
		{"huge rank", "0-99999999999999999999 a\n", 2, "error: line 1: task rank 99999999999999999999 is out of range"},
		{"rank twice", "0-2 a\n# x\n2 b\n", 3, "error: line 3: task rank 2 is given twice (also on line 1)"},
		{"rank twice on one line", "0,0 a\n", 1, "error: line 1: task rank 0 is given twice"},
		{"reversed range", "3-1 a\n", 4, "error: line 1: invalid task range 3-1: the smaller rank must come first"},
		{"malformed ranks", "0,,1 a\n", 2, `error: line 1: invalid task rank specification "0,,1"`},
		{"negative rank", "-1 a\n", 2, `error: line 1: invalid task rank specification "-1"`},
		{"open range", "1- a\n", 2, `error: line 1: invalid task rank specification "1-"`},
		{"letters", "x a\n", 2, `error: line 1: invalid task rank specification "x"`},
		{"star in a list", "0,* a\n", 2, `error: line 1: invalid task rank specification "0,*"`},
		{"missing program", "0\n", 1, "error: line 1: no program given for task ranks 0"},
		{"missing program after blanks", "0   \t\n", 1, "error: line 1: no program given for task ranks 0"},
		{"entry after star", "* a\n0 b\n", 2, "error: line 2: no entry may follow the '*' entry of line 1"},
		{"unterminated quote", "0 echo 'x\n", 1, "error: line 1: unterminated ' quote"},
		{"no tasks", "0 a\n", 0, "error: invalid task count 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			argv, err := ParseMultiProg([]byte(tc.conf), tc.ntasks)
			if frag, ok := strings.CutPrefix(tc.want, "error: "); ok {
				var e *Error
				if !errors.As(err, &e) || !strings.Contains(e.Error(), frag) {
					t.Fatalf("got %q, %v; want *Error containing %q", argv, err, frag)
				}
				if !strings.HasPrefix(e.Error(), "multi-prog configuration") {
					t.Errorf("error %q does not name the configuration", e)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := make([]string, len(argv))
			for i, a := range argv {
				got[i] = strings.Join(a, " ")
			}
			if g := strings.Join(got, "|"); g != tc.want {
				t.Errorf("got  %q\nwant %q", g, tc.want)
			}
		})
	}
}

func FuzzParseMultiProg(f *testing.F) {
	for _, s := range []string{
		"4-6 hostname\n1,7 echo task:%t\n0,2-3 echo offset:%o\n",
		"0 a\n* b %t %o\n", "# c\n\n0-1 'x y' \"%t\"\\\n z\n", "0-", "*", "0 '", "1-0 x", "0,,1 y", "%t %o %",
	} {
		f.Add(s, uint16(8))
	}
	f.Fuzz(func(t *testing.T, conf string, n uint16) {
		ntasks := int(n%512) - 1
		argv, err := ParseMultiProg([]byte(conf), ntasks)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || !strings.HasPrefix(e.Msg, "multi-prog configuration") {
				t.Fatalf("ParseMultiProg(%q, %d): unexpected error %v", conf, ntasks, err)
			}
			return
		}
		if len(argv) != ntasks {
			t.Fatalf("ParseMultiProg(%q, %d): %d entries", conf, ntasks, len(argv))
		}
		for r, a := range argv {
			if len(a) == 0 {
				t.Fatalf("ParseMultiProg(%q, %d): rank %d has no argv", conf, ntasks, r)
			}
		}
	})
}

func ExampleParseMultiProg() {
	argv, _ := ParseMultiProg([]byte("0 server --port=5000\n* client --id=%o\n"), 3)
	for r, a := range argv {
		fmt.Println(r, a)
	}
	// Output:
	// 0 [server --port=5000]
	// 1 [client --id=0]
	// 2 [client --id=1]
}
