package sreport

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// The date tests are written out instead of compiled regexps (package
// initialisation); they must answer as the expressions did.
func TestDateShapesMatchTheirRegexps(t *testing.T) {
	yearless := regexp.MustCompile(`^(\d{1,2}[/.]\d{1,2}($|[-T ])|\d{4}($|[T ]|-\d{1,2}:))`)
	any := regexp.MustCompile(`[/.]|\d{4}`)
	cases := []string{"", "1", "12", "1/2", "12/31", "1.2", "12.31-", "12/31T", "12/31 10", "12/311", "123/4",
		"1/23/24", "2024", "2024T", "2024 ", "2024-1:", "2024-12:00", "2024-123:", "2024-1", "20245", "202",
		"10:00", "now-1hour", "today", "a2024", "x/y", "09/", "/09", "2024-", "2024-:", "12/3-", "1/2x"}
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "0123456789/.-T :x"
	for range 20000 {
		b := make([]byte, r.IntN(10))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, c := range cases {
		if got, want := yearlessDate(c), yearless.MatchString(c); got != want {
			t.Errorf("yearlessDate(%q) = %v, regexp says %v", c, got, want)
		}
		if got, want := anyDate(c), any.MatchString(c); got != want {
			t.Errorf("anyDate(%q) = %v, regexp says %v", c, got, want)
		}
	}
}
