package slurmconf

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Scheduler is SchedulerType and the SchedulerParameters the scheduler
// acts on, with Slurm's defaults where the file sets nothing.
type Scheduler struct {
	// Backfill: SchedulerType=sched/backfill (the default); false for
	// sched/builtin (strict priority order).
	Backfill bool
	// BfWindow: how far ahead reservations are planned (bf_window,
	// minutes in the file; default one day).
	BfWindow time.Duration
	// BfResolution: granularity of planned starts (bf_resolution,
	// seconds; default 60).
	BfResolution time.Duration
	// BfMaxJobTest (default 500) and BfMaxJobUser (default 0 = no bound):
	// the most reservations one pass makes, in all and per user.
	BfMaxJobTest, BfMaxJobUser int
	// BfMaxJobArrayResv (bf_max_job_array_resv, 0 to 1000, default 20):
	// the most tasks of one array per partition that one backfill pass
	// plans a later start for. Slurm plans the first before it checks the
	// bound, so 0 acts as 1; the field holds what takes effect.
	BfMaxJobArrayResv int
	// BfContinue is accepted for compatibility: Drover's backfill pass
	// never yields its locks midway, so there is nothing to continue.
	BfContinue bool
	// BfInterval: how often planned start times are republished when they
	// move (bf_interval, seconds; default 30).
	BfInterval time.Duration
	// DefaultQueueDepth is accepted for compatibility (default 100);
	// every pass considers the whole queue.
	DefaultQueueDepth int
	// SchedMinInterval: least time between two scheduling passes
	// (sched_min_interval, microseconds; default 2 µs).
	SchedMinInterval time.Duration
	// BatchSchedDelay is accepted for compatibility (default 3 s).
	BatchSchedDelay time.Duration
}

// DefaultScheduler is Slurm 22.05's behaviour with neither key set.
func DefaultScheduler() Scheduler {
	return Scheduler{
		Backfill: true, BfWindow: 24 * time.Hour, BfResolution: 60 * time.Second, BfMaxJobTest: 500,
		BfMaxJobArrayResv: 20, BfInterval: 30 * time.Second, DefaultQueueDepth: 100, SchedMinInterval: 2 * time.Microsecond,
		BatchSchedDelay: 3 * time.Second,
	}
}

// schedulerParamsKnown are SchedulerParameters Slurm has that Drover does
// not act on (or reads elsewhere, like nohold_on_prolog_fail): accepted
// without a warning.
var schedulerParamsKnown = map[string]bool{
	"defer": true, "nohold_on_prolog_fail": true, "bf_busy_nodes": true, "bf_max_job_part": true,
	"bf_max_job_start": true, "bf_max_time": true, "bf_yield_interval": true, "bf_yield_sleep": true,
	"max_rpc_cnt": true, "max_sched_time": true, "partition_job_depth": true, "sched_interval": true,
	"sched_max_job_start": true, "bf_min_age_reserve": true, "bf_min_prio_reserve": true,
	"bf_job_part_count_reserve": true, "bf_one_resv_per_job": true,
	"bf_running_job_reserve": true, "bf_ignore_newly_avail_nodes": true, "pack_serial_at_end": true,
	"kill_invalid_depend": true, "preempt_strict_order": true,
	"requeue_setup_env_fail": true, "salloc_wait_nodes": true, "sbatch_wait_nodes": true,
	"enable_user_top": true, "max_switch_wait": true, "allow_zero_lic": true, "assoc_limit_stop": true,
	"bf_hetjob_immediate": true, "bf_hetjob_prio": true, "bf_max_job_assoc": true, "bf_node_space_size": true,
	"default_gbytes": true, "disable_job_shrink": true, "disable_hetjob_steps": true, "max_array_tasks": true,
	"max_depend_depth": true, "nohold_on_prolog_fail_all": true, "preempt_reorder_count": true,
	"reduce_completing_frag": true, "whole_hetjob": true, "bf_licenses": true,
}

// parseSchedulerType reads SchedulerType; an unknown plugin is warned
// about and the default kept.
func (p *parser) parseSchedulerType(pos Pos, v string) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "sched/backfill":
		p.cfg.Scheduler.Backfill = true
	case "sched/builtin":
		p.cfg.Scheduler.Backfill = false
	default:
		p.warnf(pos, "SchedulerType %q is not supported: using sched/backfill", v)
		p.cfg.Scheduler.Backfill = true
	}
}

// parseSchedulerParameters reads the comma list. Unknown entries and
// values out of Slurm's range are warned about and leave the default:
// a typo must not stop the controller.
func (p *parser) parseSchedulerParameters(pos Pos, v string) {
	s := &p.cfg.Scheduler
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		key, val, hasVal := strings.Cut(item, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		num := func(lo, hi int64) (int64, bool) {
			n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
			if !hasVal || err != nil || n < lo || n > hi {
				p.warnf(pos, "SchedulerParameters: invalid %s: want an integer from %d to %d; default kept", item, lo, hi)
				return 0, false
			}
			return n, true
		}
		switch key {
		case "max_script_size":
			if n, ok := num(1, MaxScriptSizeCeiling); ok {
				p.cfg.MaxScriptSize = int(n)
			}
		case "bf_window":
			if n, ok := num(1, 43200); ok { // Slurm: up to 30 days, in minutes
				s.BfWindow = time.Duration(n) * time.Minute
			}
		case "bf_resolution":
			if n, ok := num(1, 3600); ok {
				s.BfResolution = time.Duration(n) * time.Second
			}
		case "bf_max_job_test":
			if n, ok := num(1, 1_000_000); ok {
				s.BfMaxJobTest = int(n)
			}
		case "bf_max_job_user":
			if n, ok := num(0, 1_000_000); ok {
				s.BfMaxJobUser = int(n)
			}
		case "bf_max_job_array_resv":
			if n, ok := num(0, 1000); ok {
				s.BfMaxJobArrayResv = max(1, int(n))
			}
		case "bf_continue":
			s.BfContinue = true
		case "preempt_youngest_first": // 22.05's name of PreemptParameters=youngest_first
			p.cfg.PreemptYoungestFirst = true
		case "bf_interval":
			if n, ok := num(1, 10800); ok {
				s.BfInterval = time.Duration(n) * time.Second
			}
		case "default_queue_depth":
			if n, ok := num(1, 1_000_000); ok {
				s.DefaultQueueDepth = int(n)
			}
		case "sched_min_interval":
			if n, ok := num(0, 1_000_000); ok {
				s.SchedMinInterval = time.Duration(n) * time.Microsecond
			}
		case "batch_sched_delay":
			if n, ok := num(0, 3600); ok {
				s.BatchSchedDelay = time.Duration(n) * time.Second
			}
		default:
			if !schedulerParamsKnown[key] {
				p.warnf(pos, "SchedulerParameters: unknown entry %s ignored", fmt.Sprintf("%q", item))
			}
		}
	}
}
