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

// cut is a summary listing's records and specs.
type cut struct {
	recs  []byte
	end   []int // job i's record is recs[end[i-1]:end[i]]
	spec  []int
	specs []*model.JobSpec
	now   int64
}

// listing cuts jobs at wire.Summary without steps, reusing the records
// of the jobs the last listing had, and hands each chunk to send (nil:
// none) as soon as its records are cut: the command reads the first
// while the rest are cut. keep: jobs is a whole listing, whose records
// the cache keeps for the next one (a listing of a few named jobs would
// otherwise push out the queue's). It stops at send's first error.
func (c *listCache) listing(jobs []*model.Job, now int64, keep bool, send func(parts ...[]byte) error) (*cut, error) {
	// The last listing's records are never changed once made: this one
	// reads them unlocked (a slow reader of one listing holds up no
	// other) and the last listing to end is kept.
	c.mu.Lock()
	old := listCache{jobs: c.jobs, end: c.end, recs: c.recs}
	c.mu.Unlock()
	var (
		out   = &cut{spec: make([]int, len(jobs)), end: make([]int, len(jobs)), now: now}
		b     = make([]byte, 0, len(old.recs)+len(old.recs)/8+1024)
		st    = specTable{views: map[*model.JobSpec]*model.JobSpec{}, byPtr: map[*model.JobSpec]int{}, byKey: map[string]int{}}
		k     int // the next cached job not yet passed
		asc   = true
		prev  model.JobID
		start int
		lo    int // the first job of the chunk being cut
	)
	for i, j := range jobs {
		switch {
		case j == nil:
			b = localwire.AppendJobRecord(b, nil)
			asc = false
		default:
			if i > 0 && j.ID <= prev {
				asc = false // not the store's order: nothing to merge with
			}
			prev = j.ID
			if asc {
				for k < len(old.jobs) && old.jobs[k].ID < j.ID {
					k++
				}
			}
			if asc && k < len(old.jobs) && old.jobs[k] == j {
				start = 0
				if k > 0 {
					start = old.end[k-1]
				}
				b = append(b, old.recs[start:old.end[k]]...)
			} else {
				v := viewJobShared(j, wire.Summary, st.views)
				v.Spec = nil
				b = localwire.AppendJobRecord(b, v)
			}
			if j.Spec != nil {
				out.spec[i] = st.index(j.Spec, &out.specs)
			}
		}
		out.end[i] = len(b)
		if send != nil && i+1-lo == chunkJobs {
			if err := out.chunk(b, lo, i+1, send); err != nil {
				return nil, err
			}
			lo = i + 1
		}
	}
	if send != nil && (lo < len(jobs) || len(jobs) == 0) {
		if err := out.chunk(b, lo, len(jobs), send); err != nil {
			return nil, err
		}
	}
	out.recs = b
	if keep && asc {
		c.mu.Lock()
		c.jobs, c.end, c.recs = jobs, out.end, b
		c.mu.Unlock()
	}
	return out, nil
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

// chunk sends the message of jobs lo to hi, whose records are in recs: a
// listing of their own, numbering their own specs.
func (l *cut) chunk(recs []byte, lo, hi int, send func(parts ...[]byte) error) error {
	start, end := 0, 0
	if lo > 0 {
		start = l.end[lo-1]
	}
	end = start
	if hi > lo {
		end = l.end[hi-1]
	}
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
	return send(head, recs[start:end], tail)
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
