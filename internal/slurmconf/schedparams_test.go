package slurmconf

import (
	"strings"
	"testing"
	"time"
)

func TestSchedulerDefaults(t *testing.T) {
	c := mustParse(t, "", nil)
	if c.Scheduler != DefaultScheduler() || !c.Scheduler.Backfill {
		t.Fatalf("defaults = %+v", c.Scheduler)
	}
}

func TestSchedulerParameters(t *testing.T) {
	c := mustParse(t, "SchedulerType=sched/builtin\n"+
		"SchedulerParameters=bf_window=120,bf_resolution=30,bf_max_job_test=5000,bf_max_job_user=20,"+
		"bf_continue,bf_interval=10,default_queue_depth=50,sched_min_interval=500000,batch_sched_delay=7,"+
		"defer,bf_fancy=3,bf_window=nope,bf_resolution=0,bf_max_job_array_resv=7\n", nil)
	s := c.Scheduler
	want := Scheduler{Backfill: false, BfWindow: 2 * time.Hour, BfResolution: 30 * time.Second,
		BfMaxJobTest: 5000, BfMaxJobUser: 20, BfMaxJobArrayResv: 7, BfContinue: true, BfInterval: 10 * time.Second,
		DefaultQueueDepth: 50, SchedMinInterval: 500 * time.Millisecond, BatchSchedDelay: 7 * time.Second}
	if s != want {
		t.Errorf("got  %+v\nwant %+v", s, want)
	}
	warn := strings.Join(c.Warnings, "\n")
	for _, w := range []string{`slurm.conf:2: SchedulerParameters: unknown entry "bf_fancy=3" ignored`,
		"slurm.conf:2: SchedulerParameters: invalid bf_window=nope", "invalid bf_resolution=0"} {
		if !strings.Contains(warn, w) {
			t.Errorf("warnings %q lack %q", warn, w)
		}
	}
	if strings.Contains(warn, "defer") {
		t.Errorf("defer (a Slurm parameter) warned about: %q", warn)
	}
	// bf_max_job_array_resv: Slurm's range is 0-1000, and 0 still plans
	// one task (it counts after planning).
	for v, want := range map[string]int{"0": 1, "1": 1, "1000": 1000, "1001": 20, "-1": 20} {
		c := mustParse(t, "SchedulerParameters=bf_max_job_array_resv="+v+"\n", nil)
		if got := c.Scheduler.BfMaxJobArrayResv; got != want {
			t.Errorf("bf_max_job_array_resv=%s: %d, want %d", v, got, want)
		}
		if bad := want == 20; bad != strings.Contains(strings.Join(c.Warnings, ""), "invalid bf_max_job_array_resv") {
			t.Errorf("bf_max_job_array_resv=%s: warnings %q", v, c.Warnings)
		}
	}
	c = mustParse(t, "SchedulerType=sched/wiki\n", nil)
	if !c.Scheduler.Backfill || !strings.Contains(strings.Join(c.Warnings, ""), `SchedulerType "sched/wiki" is not supported`) {
		t.Errorf("unknown type: %+v %q", c.Scheduler, c.Warnings)
	}
}
