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
		"defer,bf_fancy=3,bf_window=nope,bf_resolution=0\n", nil)
	s := c.Scheduler
	want := Scheduler{Backfill: false, BfWindow: 2 * time.Hour, BfResolution: 30 * time.Second,
		BfMaxJobTest: 5000, BfMaxJobUser: 20, BfContinue: true, BfInterval: 10 * time.Second,
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
	c = mustParse(t, "SchedulerType=sched/wiki\n", nil)
	if !c.Scheduler.Backfill || !strings.Contains(strings.Join(c.Warnings, ""), `SchedulerType "sched/wiki" is not supported`) {
		t.Errorf("unknown type: %+v %q", c.Scheduler, c.Warnings)
	}
}
