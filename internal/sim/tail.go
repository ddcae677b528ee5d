package sim

import (
	"cmp"
	"slices"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
)

// tail ends a backfill pass (sched.ScheduleUntil) once the reservations
// it has made prove that no job still to be considered can start. A pass
// over a deep queue spends most of its time giving reservations to jobs
// that wait anyway, and the last job that starts is usually far ahead of
// the queue's end; the jobs behind the proof change no start, only
// reasons and planned starts, which the replay does not measure.
//
// The bound (the trace model: one-CPU nodes, one partition): a job k
// starts now only on nodes free after the pass's starts so far (free)
// that no reservation holds over [now, now+limit(k)). A reservation sits
// on nodes free now or released by its start (a running job's limit end,
// or the end of a job this pass started; one reservation per node at a
// time), so at any t at least reserved(t) - released(t) of the free
// nodes are held; the most of that over k's window, held(k), is out of
// its reach, and k cannot start when need(k) > free - held(k). The
// reservations and starts of the jobs between now and k only take more,
// and each job's bound only grows as the pass goes on (more reserved,
// fewer free), so once every job left is caught, none starts.
// TestGateExact replays traces with every pass run in full.
//
// A pass ended early leaves the plan rule (planned.go) the reservations
// of the jobs it considered only. Those are a queue cut there would get,
// which the rule's argument covers, and while nothing ends the jobs
// behind stay caught (the same reservations, no more free nodes, a later
// window that meets each of them); what they would reserve only holds
// more.
type tail struct {
	need []int // CPUs job k+1 needs
	now  int64
	free int
	// steps are the releases (-CPUs) and the reservations' starts (+)
	// and ends (-), by time, releases first at one instant (a node freed
	// at t can be reserved from t); sum and peak are their running sum
	// and its running maximum (at least 0), valid for steps[:len(peak)].
	steps     []step
	sum, peak []int
	// caught: order[k:caught] cannot start (k the job to consider);
	// starts: the plan's starts already counted.
	caught, starts int
	// stops counts the passes ended early (tests).
	stops int
}

func newTail(need []int) *tail { return &tail{need: need} }

// begin readies t for a pass at now with free CPUs free and the running
// jobs' releases.
func (t *tail) begin(now int64, free int, running []*model.Job) {
	t.now, t.free, t.caught, t.starts = now, free, 0, 0
	t.steps, t.sum, t.peak = t.steps[:0], t.sum[:0], t.peak[:0]
	for _, j := range running {
		if j.TimeLimit > 0 { // else it releases nothing the pass sees
			t.steps = append(t.steps, step{max(j.StartTime+j.TimeLimit, now+1), -t.need[j.ID-1]})
		}
	}
	slices.SortFunc(t.steps, stepOrder)
}

func stepOrder(a, b step) int { return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.cpus, b.cpus)) }

// stop is the pass's sched.StopFunc.
func (t *tail) stop(order []*model.Job, k int, p *sched.Plan) bool {
	if k > 0 {
		t.record(order[k-1], p)
	}
	t.caught = max(t.caught, k)
	for t.caught < len(order) && t.blocked(order[t.caught]) {
		t.caught++
	}
	if t.caught < len(order) {
		return false
	}
	t.stops++
	return true
}

// record takes in what the pass did with j: started it or reserved for it.
func (t *tail) record(j *model.Job, p *sched.Plan) {
	n := t.need[j.ID-1]
	if len(p.Starts) > t.starts {
		t.starts = len(p.Starts)
		t.free -= n
		if j.TimeLimit > 0 {
			t.add(step{t.now + j.TimeLimit, -n})
		}
		return
	}
	if at, ok := p.StartTimes[j.ID]; ok {
		t.add(step{at, n})
		if j.TimeLimit > 0 {
			t.add(step{at + j.TimeLimit, -n})
		}
	}
}

func (t *tail) add(s step) {
	i, _ := slices.BinarySearchFunc(t.steps, s, stepOrder)
	t.steps = slices.Insert(t.steps, i, s)
	if i < len(t.peak) {
		t.sum, t.peak = t.sum[:i], t.peak[:i]
	}
}

// blocked reports whether j cannot start beside the reservations so far.
func (t *tail) blocked(j *model.Job) bool {
	n := t.need[j.ID-1]
	if n > t.free {
		return true
	}
	end := never
	if j.TimeLimit > 0 {
		end = t.now + j.TimeLimit
	}
	k, _ := slices.BinarySearchFunc(t.steps, end, func(s step, e int64) int { return cmp.Compare(s.t, e) })
	return n > t.free-t.held(k)
}

// held is the running maximum of the steps' sum over steps[:k].
func (t *tail) held(k int) int {
	if k == 0 {
		return 0
	}
	for i := len(t.peak); i < k; i++ {
		d, m := 0, 0
		if i > 0 {
			d, m = t.sum[i-1], t.peak[i-1]
		}
		d += t.steps[i].cpus
		t.sum, t.peak = append(t.sum, d), append(t.peak, max(m, d))
	}
	return t.peak[k-1]
}
