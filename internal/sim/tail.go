package sim

import (
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
// The proof (the trace model: one-CPU nodes, one partition, nothing but
// CPUs asked): a job k starts now only on nodes still free after the
// pass's starts so far on which no reservation overlaps [now,
// now+limit(k)), that is, whose earliest reservation starts at
// now+limit(k) or later (Plan.StartNodes says where each one sits). When
// fewer of those are left than k needs, k cannot start: the reservations
// and starts of the jobs between now and k only take more, and each
// job's count only falls as the pass goes on. Once every job left is
// caught so, none starts. TestGateExact replays traces with every pass
// run in full.
//
// A pass ended early leaves the plan rule (planned.go) the reservations
// of the jobs it considered only. Those are a queue cut there would get,
// which the rule's argument covers, and while nothing ends the jobs
// behind stay caught (the same reservations, no more free nodes, a later
// window that meets each of them); what they would reserve only holds
// more.
type tail struct {
	need  []int      // CPUs job k+1 needs
	index *nodeIndex // node name → index
	now   int64
	// first[p] is the earliest start of a reservation on node[p] (never:
	// none), for the nodes still free; pos[i] is node i's p, or -1.
	first []int64
	node  []int
	pos   []int
	// caught: order[k:caught] cannot start (k the job to consider);
	// starts: the plan's starts already counted.
	caught, starts int
	// stops counts the passes ended early (tests).
	stops int
}

func newTail(need []int, index *nodeIndex) *tail {
	return &tail{need: need, index: index, pos: make([]int, len(index.names))}
}

// begin readies t for a pass at now over nodes.
func (t *tail) begin(now int64, nodes []*model.Node) {
	t.now, t.caught, t.starts = now, 0, 0
	t.first, t.node = t.first[:0], t.node[:0]
	for i, n := range nodes {
		t.pos[i] = -1
		if n.Usable() && n.AllocCPUs == 0 {
			t.pos[i] = len(t.node)
			t.first, t.node = append(t.first, never), append(t.node, i)
		}
	}
}

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
	if len(p.Starts) > t.starts {
		t.starts = len(p.Starts)
		for _, a := range p.Starts[t.starts-1].Alloc {
			i := t.index.of(a.Node)
			if q := t.pos[i]; q >= 0 {
				last := len(t.node) - 1
				t.first[q], t.node[q] = t.first[last], t.node[last]
				t.pos[t.node[q]] = q
				t.first, t.node, t.pos[i] = t.first[:last], t.node[:last], -1
			}
		}
		return
	}
	if at, ok := p.StartTimes[j.ID]; ok {
		for _, name := range p.StartNodes[j.ID] {
			if q := t.pos[t.index.of(name)]; q >= 0 {
				t.first[q] = min(t.first[q], at)
			}
		}
	}
}

// blocked reports whether j cannot start beside the starts and
// reservations so far.
func (t *tail) blocked(j *model.Job) bool {
	n := t.need[j.ID-1]
	if n > len(t.node) {
		return true
	}
	end := never
	if j.TimeLimit > 0 {
		end = t.now + j.TimeLimit
	}
	for _, f := range t.first {
		if f >= end {
			if n--; n == 0 {
				return false
			}
		}
	}
	return true
}
