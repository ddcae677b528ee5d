package localapi

import (
	"sync"

	"github.com/drover-hpc/drover/internal/localwire"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/wire"
)

// listCache keeps the encoded record of every job of the last whole
// summary listing (squeue's), so that the next one re-encodes only the
// jobs that changed: 100,000 pending jobs cost ~110 ms of the
// controller's CPU to cut and encode, and rarely change between two
// listings. A job is known by its pointer: the store never changes a
// job in place (a changed job is a new value), so the same pointer is
// the same record.
type listCache struct {
	mu   sync.Mutex
	jobs []*model.Job // ascending ids, as the store lists them
	end  []int        // job i's record is buf[end[i-1]:end[i]]
	buf  []byte       // the last listing's message; records from buf[end[-1]]
	head int          // where the first record starts in buf
}

// listing is the encoded JobList of jobs at wire.Summary without steps:
// the bytes localwire.Encode(listing(jobs, now, q)) gives. keep: jobs is
// a whole listing, whose records the cache keeps for the next one (a
// listing of a few named jobs would otherwise push out the queue's).
func (c *listCache) listing(jobs []*model.Job, now int64, keep bool) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	var (
		spec  = make([]int, len(jobs))
		specs []*model.JobSpec
		b     = localwire.AppendJobListHead(make([]byte, 0, len(c.buf)+len(c.buf)/8+2*len(jobs)+1024), len(jobs))
		head  = len(b)
		ends  = make([]int, len(jobs))
		st    = specTable{views: map[*model.JobSpec]*model.JobSpec{}, byPtr: map[*model.JobSpec]int{}, byKey: map[string]int{}}
		k     int // the next cached job not yet passed
		asc   = true
		prev  model.JobID
		start int
	)
	for i, j := range jobs {
		if j == nil {
			b = localwire.AppendJobRecord(b, nil)
			ends[i], asc = len(b), false
			continue
		}
		if i > 0 && j.ID <= prev {
			asc = false // not the store's order: nothing to merge with
		}
		prev = j.ID
		if asc {
			for k < len(c.jobs) && c.jobs[k].ID < j.ID {
				k++
			}
		}
		if asc && k < len(c.jobs) && c.jobs[k] == j {
			start = c.head
			if k > 0 {
				start = c.end[k-1]
			}
			b = append(b, c.buf[start:c.end[k]]...)
		} else {
			v := viewJobShared(j, wire.Summary, st.views)
			v.Spec = nil
			b = localwire.AppendJobRecord(b, v)
		}
		ends[i] = len(b)
		if j.Spec != nil {
			spec[i] = st.index(j.Spec, &specs)
		}
	}
	recs := len(b)
	b = localwire.AppendJobListTail(b, spec, specs, now)
	if keep && asc {
		// The records stay where they are, in the message just made (which
		// nothing changes once sent).
		c.jobs, c.end, c.buf, c.head = jobs, ends, b[:recs], head
	}
	return b
}

// specTable numbers a listing's distinct spec views as localwire's
// NewJobList does: jobs holding one spec share it, and specs alike (by
// their encoded view) share a number too.
type specTable struct {
	views map[*model.JobSpec]*model.JobSpec
	byPtr map[*model.JobSpec]int
	byKey map[string]int
	last  *model.JobSpec // most jobs of a big queue hold one spec
	lastN int
	key   []byte
}

func (t *specTable) index(s *model.JobSpec, specs *[]*model.JobSpec) int {
	if s == t.last {
		return t.lastN
	}
	n, ok := t.byPtr[s]
	if !ok {
		v, ok := t.views[s]
		if !ok {
			v = wire.ListingSpec(s, wire.Summary)
			t.views[s] = v
		}
		t.key = localwire.AppendCompact(t.key[:0], v)
		if n, ok = t.byKey[string(t.key)]; !ok {
			*specs = append(*specs, v)
			n = len(*specs)
			t.byKey[string(t.key)] = n
		}
		t.byPtr[s] = n
	}
	t.last, t.lastN = s, n
	return n
}
