package sim

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"slices"

	"github.com/spf13/pflag"

	"github.com/drover-hpc/drover/internal/sched"
)

// Policies maps --policy to a scheduler configuration: fifo is
// sched/builtin (strict submission order); backfill is sched/backfill as
// the controller ships it, Slurm's defaults: bf_max_job_test=500 (the
// first 500 blocked jobs get reservations: conservative backfill),
// bf_window=1440 minutes, bf_resolution=60 s; easy is the same with one
// reservation (the head of the queue), as in EASY backfilling.
var Policies = map[string]sched.Config{
	"fifo":     {},
	"backfill": {Backfill: true, BfWindow: 86400, BfResolution: 60, BfMaxJobTest: 500},
	"easy":     {Backfill: true, BfWindow: 86400, BfResolution: 60, BfMaxJobTest: 1},
}

const usageText = `usage: drover sim --scenario FILE.yaml|FILE.json
       drover sim --trace FILE.swf[.gz] [--procs P] [--policy fifo|backfill|easy]
                 [--first K --jobs N] [--sequences S [--length L] [--seed N]]
                 [--bf-max-job-test N] [--bf-window MIN] [--bf-resolution S] [--priority basic|multifactor|age=W,jobsize=W,maxage=S,favorsmall=yes|no,smallreltime=yes|no]
                 [--cpuprofile FILE]

Replays a Standard Workload Format trace through Drover's scheduler with a
simulated clock (no processes): P nodes of one CPU (P from the trace
header unless given); a job of n processors asks -n n, its requested time
is its time limit (its run time when the trace has none), and it ends at
its actual run time. Prints average bounded slowdown (10 s threshold),
average wait, utilization, makespan and jobs simulated per second, for
the jobs selected (--first/--jobs: a window of the trace; default all)
and, with --sequences, for S sequences of L consecutive jobs at start
indices drawn by a seeded sampler (math/rand, seed --seed), each replayed
on an empty machine, and their mean. --priority basic keeps submission
order; multifactor is PriorityWeightAge=100 (PriorityMaxAge 7 days),
PriorityWeightJobSize=10000, PriorityFlags=SMALL_RELATIVE_TO_TIME,
PriorityFavorSmall=NO (short jobs first; age lifts the waiting ones).
--bf-max-job-test, --bf-window (minutes) and --bf-resolution (seconds)
override the policy's SchedulerParameters: backfill and easy plan as the
controller does by default (bf_window=1440, bf_resolution=60) unless told;
--bf-window 0 --bf-resolution 1 plans without a window to the second.

--cpuprofile writes a Go CPU profile of the run (go tool pprof FILE). The
replay runs with GOGC=400 and GOMEMLIMIT=2GiB unless the environment sets
them (fewer collections of the trace's jobs; about 800 MB for SDSC-SP2).

--scenario runs a YAML/JSON cluster and workload (nodes with CPUs, memory
and GPUs, partitions, jobs with their run times, expected start times;
see internal/sim/testdata/scenarios) and exits 1 when a start differs.
`

// Main runs the sim command and returns its exit status.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("sim", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		trace              string
		procs, first, jobs int
		policy             string
		seqs, length       int
		seed               int64
		maxJobTest         int
		bfWindow, bfRes    int64
		priority           string
		scenario           string
		cpuprofile         string
	)
	fs.StringVar(&trace, "trace", "", "")
	fs.IntVar(&procs, "procs", 0, "")
	fs.StringVar(&policy, "policy", "backfill", "")
	fs.IntVar(&first, "first", 0, "")
	fs.IntVar(&jobs, "jobs", 0, "")
	fs.IntVar(&seqs, "sequences", 0, "")
	fs.IntVar(&length, "length", 1024, "")
	fs.Int64Var(&seed, "seed", 0, "")
	fs.IntVar(&maxJobTest, "bf-max-job-test", -1, "")
	fs.Int64Var(&bfWindow, "bf-window", -1, "")
	fs.Int64Var(&bfRes, "bf-resolution", -1, "")
	fs.StringVar(&priority, "priority", "basic", "")
	fs.StringVar(&scenario, "scenario", "", "")
	fs.StringVar(&cpuprofile, "cpuprofile", "", "")
	help := fs.BoolP("help", "h", false, "")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "drover sim: %v\n%s", err, usageText)
		return 2
	}
	if *help {
		fmt.Fprint(stdout, usageText)
		return 0
	}
	tuneGC()
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "drover sim: --cpuprofile: %v\n", err)
			return 1
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	if scenario != "" {
		return runScenario(scenario, stdout, stderr)
	}
	cfg, ok := Policies[policy]
	if !ok {
		fmt.Fprintf(stderr, "drover sim: unknown --policy %q (want fifo, backfill or easy)\n", policy)
		return 2
	}
	if maxJobTest >= 0 {
		cfg.BfMaxJobTest = maxJobTest
	}
	if (fs.Changed("bf-window") && (bfWindow < 0 || bfWindow > 43200)) || (fs.Changed("bf-resolution") && (bfRes < 1 || bfRes > 3600)) {
		fmt.Fprint(stderr, "drover sim: --bf-window takes 0 (no window) to 43200 minutes, --bf-resolution 1 to 3600 seconds\n")
		return 2
	}
	if fs.Changed("bf-window") {
		cfg.BfWindow = bfWindow * 60
	}
	if fs.Changed("bf-resolution") {
		cfg.BfResolution = bfRes
	}
	if trace == "" || fs.NArg() > 0 || first < 0 || jobs < 0 || procs < 0 || seqs < 0 || length < 1 || seqs > 1000 {
		fmt.Fprint(stderr, "drover sim: --trace is required; counts must be positive\n"+usageText)
		return 2
	}
	t, err := ReadFile(trace)
	if err != nil {
		fmt.Fprintf(stderr, "drover sim: %v\n", err)
		return 1
	}
	slices.SortStableFunc(t.Jobs, func(a, b Job) int { return int(a.Submit - b.Submit) })
	if procs == 0 {
		procs = t.MaxProcs
	}
	if procs <= 0 {
		fmt.Fprintf(stderr, "drover sim: %s gives no MaxProcs/MaxNodes: pass --procs\n", trace)
		return 2
	}
	if first > len(t.Jobs) {
		first = len(t.Jobs)
	}
	sel := t.Jobs[first:]
	if jobs > 0 && jobs < len(sel) {
		sel = sel[:jobs]
	}
	o := Options{Procs: procs, Sched: cfg}
	m, err := ParseMultifactor(priority)
	if err != nil {
		fmt.Fprintf(stderr, "drover sim: --priority: %v\n", err)
		return 2
	}
	o.Priority = m.Func(procs)
	fmt.Fprintf(stdout, "trace=%s procs=%d policy=%s priority=%s jobs_in_trace=%d skipped=%d\n", trace, procs, policy, priority, len(t.Jobs), t.Skipped)
	if seqs > 0 {
		var sum float64
		for i, start := range SampleStarts(len(sel), length, seqs, seed) {
			r, err := Run(Slice(sel, start, length), o)
			if err != nil {
				fmt.Fprintf(stderr, "drover sim: %v\n", err)
				return 1
			}
			sum += r.AvgBoundedSlowdown
			fmt.Fprintf(stdout, "sequence %d start=%d %s\n", i+1, first+start, r)
		}
		fmt.Fprintf(stdout, "sequences=%d length=%d seed=%d mean_avg_bsld=%.2f\n", seqs, length, seed, sum/float64(seqs))
		return 0
	}
	r, err := Run(Slice(sel, 0, len(sel)), o)
	if err != nil {
		fmt.Fprintf(stderr, "drover sim: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "whole first=%d %s\n", first, r)
	return 0
}

// Replay GC settings, unless GOGC or GOMEMLIMIT say otherwise: every
// pass allocates its scheduler state afresh, so a replay allocates tens
// of gigabytes over a live heap of a few hundred megabytes (the trace's
// jobs), and at the default GOGC=100 marking that heap again every few
// hundred passes was a fifth of the CPU. A heap up to 5x the live one
// marks it 4x less often; the limit keeps a long trace within 2 GiB (it
// then collects more often instead).
const (
	replayGCPercent = 400
	replayMemLimit  = 2 << 30
)

func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(replayGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(replayMemLimit)
	}
}

func runScenario(path string, stdout, stderr io.Writer) int {
	sc, err := ReadScenario(path)
	if err == nil {
		var w *Workload
		var cfg sched.Config
		if w, cfg, err = sc.Workload(); err == nil {
			var r Result
			if r, err = w.Simulate(cfg); err == nil {
				for _, j := range w.Jobs {
					fmt.Fprintf(stdout, "job %s submit=%d start=%d end=%d wait=%d\n", j.Name, j.SubmitTime, j.StartTime, j.EndTime, j.StartTime-j.SubmitTime)
				}
				fmt.Fprintf(stdout, "scenario=%s %s\n", path, r)
				if bad := sc.Check(w); len(bad) > 0 {
					for _, b := range bad {
						fmt.Fprintf(stderr, "drover sim: %s: %s\n", path, b)
					}
					return 1
				}
				return 0
			}
		}
	}
	fmt.Fprintf(stderr, "drover sim: %v\n", err)
	return 1
}
