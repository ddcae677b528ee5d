// Package sim replays a workload through the real scheduler
// (internal/sched.Schedule) with an injected clock and no processes: a
// discrete-event loop over submissions and job ends, one scheduling pass
// per instant something changed, resources charged and released exactly
// as the controller's committed plans would. It reads Standard Workload
// Format traces (the Parallel Workloads Archive format) and YAML/JSON
// scenarios (a synthetic cluster, its jobs and the start times a test
// expects), and reports scheduling quality: average bounded slowdown,
// wait, utilization, makespan, and how fast it simulated.
//
// It owns nothing the controller uses: the scheduler under test is the
// same code, the cluster model is a few plain node records.
package sim
