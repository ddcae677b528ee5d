package slurmconf

import (
	"strings"
	"testing"
)

// lazySet searches its words in one string; it must answer as the map of
// lower-cased words it replaced.
func TestKeySetAnswersAsAMap(t *testing.T) {
	for _, set := range []*lazySet{globalKeys, nodeKeys, partitionKeys, downNodesKeys, nodeSetKeys, prologFlags,
		keySet("aa aaa a\tb\nAbC"), keySet("")} {
		for _, r := range set.words {
			if r > 127 {
				t.Fatalf("keySet(%.30q...) holds %q: lowerWords lower-cases ASCII only", set.words, r)
			}
		}
		m := map[string]bool{}
		for _, f := range strings.Fields(set.words) {
			m[strings.ToLower(f)] = true
		}
		probes := []string{"", " ", "a b", "aa aaa", "aaaa", "abc", "ABC", "b", "x", "nodename", "NodeName",
			"accounting", "storagehost", "accountingstoragehost ", " accountingstoragehost"}
		for w := range m {
			probes = append(probes, w, w[1:], w[:len(w)-1], w+"x", "x"+w, strings.ToUpper(w))
		}
		for _, w := range probes {
			if got := set.has(w); got != m[w] {
				t.Errorf("keySet(%.30q...).has(%q) = %v, want %v", set.words, w, got, m[w])
			}
		}
	}
}
