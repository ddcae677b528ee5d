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
	end  []int        // job i's record is recs[end[i-1]:end[i]]
	recs []byte       // the last listing's records (never changed once made)
}

// cut is a summary listing's records and specs, ready to be sent whole
// or in chunks.
type cut struct {
	recs  []byte
	end   []int // job i's record is recs[end[i-1]:end[i]]
	spec  []int
	specs []*model.JobSpec
	now   int64
}

// listing cuts jobs at wire.Summary without steps, reusing the records
// of the jobs the last listing had. keep: jobs is a whole listing, whose
// records the cache keeps for the next one (a listing of a few named
// jobs would otherwise push out the queue's).
func (c *listCache) listing(jobs []*model.Job, now int64, keep bool) *cut {
	c.mu.Lock()
	defer c.mu.Unlock()
	var (
		out   = &cut{spec: make([]int, len(jobs)), end: make([]int, len(jobs)), now: now}
		b     = make([]byte, 0, len(c.recs)+len(c.recs)/8+1024)
		st    = specTable{views: map[*model.JobSpec]*model.JobSpec{}, byPtr: map[*model.JobSpec]int{}, byKey: map[string]int{}}
		k     int // the next cached job not yet passed
		asc   = true
		prev  model.JobID
		start int
	)
	for i, j := range jobs {
		if j == nil {
			b = localwire.AppendJobRecord(b, nil)
			out.end[i], asc = len(b), false
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
			start = 0
			if k > 0 {
				start = c.end[k-1]
			}
			b = append(b, c.recs[start:c.end[k]]...)
		} else {
			v := viewJobShared(j, wire.Summary, st.views)
			v.Spec = nil
			b = localwire.AppendJobRecord(b, v)
		}
		out.end[i] = len(b)
		if j.Spec != nil {
			out.spec[i] = st.index(j.Spec, &out.specs)
		}
	}
	out.recs = b
	if keep && asc {
		c.jobs, c.end, c.recs = jobs, out.end, b
	}
	return out
}

// whole is the listing's message: the bytes
// localwire.Encode(listing(jobs, now, q)) gives.
func (l *cut) whole() []byte {
	b := localwire.AppendJobListHead(make([]byte, 0, len(l.recs)+2*len(l.spec)+64), len(l.end))
	b = append(b, l.recs...)
	return localwire.AppendJobListTail(b, l.spec, l.specs, l.now)
}

// chunkJobs is how many jobs a chunk of a listing holds: the command
// reads a chunk while the next ones arrive, and several at once.
const chunkJobs = 8192

// chunks calls send with the parts of each chunk's message, a listing of
// up to chunkJobs of the jobs in order, numbering its own specs; at
// least one chunk, empty for no jobs. It stops at send's first error.
func (l *cut) chunks(send func(parts ...[]byte) error) error {
	n := len(l.end)
	for lo := 0; lo == 0 || lo < n; lo += chunkJobs {
		hi := min(lo+chunkJobs, n)
		start := 0
		if lo > 0 {
			start = l.end[lo-1]
		}
		end := start
		if hi > lo {
			end = l.end[hi-1]
		}
		// The chunk's own spec numbers, in order of first use.
		spec := make([]int, hi-lo)
		var specs []*model.JobSpec
		local := map[int]int{}
		for i, g := range l.spec[lo:hi] {
			if g == 0 {
				continue
			}
			m, ok := local[g]
			if !ok {
				specs = append(specs, l.specs[g-1])
				m = len(specs)
				local[g] = m
			}
			spec[i] = m
		}
		head := localwire.AppendJobListHead(nil, hi-lo)
		tail := localwire.AppendJobListTail(nil, spec, specs, l.now)
		if err := send(head, l.recs[start:end], tail); err != nil {
			return err
		}
	}
	return nil
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
