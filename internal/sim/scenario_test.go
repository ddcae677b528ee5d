package sim

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestScenarios runs every scenario in testdata/scenarios through the real
// scheduler and checks the expected start times.
func TestScenarios(t *testing.T) {
	files, _ := filepath.Glob("testdata/scenarios/*")
	if len(files) == 0 {
		t.Fatal("no scenarios")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			sc, err := ReadScenario(f)
			if err != nil {
				t.Fatal(err)
			}
			w, cfg, err := sc.Workload()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Simulate(cfg); err != nil {
				t.Fatal(err)
			}
			if len(sc.Expect) == 0 {
				t.Fatal("a scenario without expectations tests nothing")
			}
			for _, b := range sc.Check(w) {
				t.Error(b)
			}
		})
	}
}

func TestScenarioErrors(t *testing.T) {
	base := "nodes:\n  - {names: n1, cpus: 4, memory: 100}\npartitions:\n  - {name: p}\n"
	for _, tc := range []struct{ text, want string }{
		{"", "s.yaml:1: empty scenario"},
		{"nodes: [\n", "s.yaml:1: did not find expected node content"},
		{"nodez: []\n", "s.yaml:1: field nodez not found in type sim.Scenario"},
		{base + "jobs:\n  - {name: a, cpus_per_task: x}\n", "s.yaml:6: cannot unmarshal !!str `x` into int"},
		{base + "jobs:\n  - {name: a, run: 1}\n  - {name: b, ntasks: 9, run: 1}\n", "s.yaml:7: job b: Requested node configuration is not available"},
		{base + "jobs:\n  - {name: a, partition: q, run: 1}\n", `s.yaml:6: job a: unknown partition "q"`},
		{"nodes:\n  - {names: \"n[1-\", cpus: 4}\n", `s.yaml:2: node names "n[1-"`},
		{base + "jobs:\n  - {name: a, run: -1}\n", `s.yaml:6: job "a": a name, and no negative numbers`},
		{base + "jobs:\n  - {name: a, run: 1}\nexpect:\n  zz: {start: 1}\n", "s.yaml:1: expect: no job named zz"},
	} {
		sc, err := ParseScenario([]byte(tc.text), "s.yaml")
		if err == nil {
			_, _, err = sc.Workload()
		}
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q:\n got  %v\n want %s...", tc.text, err, tc.want)
		}
	}
}

func FuzzScenario(f *testing.F) {
	f.Add("nodes:\n  - {names: \"n[1-2]\", cpus: 4, gpus: 1}\npartitions:\n  - {name: p}\njobs:\n  - {name: a, run: 5, gpus_per_node: 1, count: 3}\n")
	f.Fuzz(func(t *testing.T, text string) {
		sc, err := ParseScenario([]byte(text), "f.yaml")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml:") {
				t.Fatalf("error without position: %v", err)
			}
			return
		}
		if _, _, err := sc.Workload(); err != nil && !strings.HasPrefix(err.Error(), "f.yaml:") {
			t.Fatalf("error without position: %v", err)
		}
	})
}
