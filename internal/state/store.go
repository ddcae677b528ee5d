package state

import (
	"sync"
	"sync/atomic"

	"github.com/benbjohnson/immutable"

	"github.com/drover-hpc/drover/internal/model"
)

// Snapshot is an immutable view of the whole controller state. Values it
// returns (jobs, nodes) must not be modified: copy with Clone first.
type Snapshot struct {
	Index     uint64 // Raft index of the last applied command
	NextJobID model.JobID
	jobs      *immutable.SortedMap[model.JobID, *model.Job]
	active    *immutable.SortedMap[model.JobID, struct{}] // jobs not yet finished
	// queued and allocated split active for the scheduling pass, whose
	// cost must follow what it can act on, not the queue: held jobs sit
	// in neither.
	queued    *immutable.SortedMap[model.JobID, struct{}] // pending, not held
	allocated *immutable.SortedMap[model.JobID, struct{}] // unfinished, holding nodes
	// finished is what the purge of old jobs (MinJobAge) looks at: it
	// walked the whole job map every 5 s, a cost that grew with the
	// queue (2% of the controller's CPU at 100,000 held jobs).
	finished   *immutable.SortedMap[model.JobID, struct{}]
	nodes      *immutable.SortedMap[string, *model.Node]
	partitions []*model.Partition
	tokens     map[string]*model.JoinToken // join tokens by id; replaced, never changed
	acct       outbox                      // jobs awaiting their accounting write
	acctDB     *model.AcctDB               // sacctmgr's configuration; nil until first set
	acctDBVer  uint64                      // bumped on each change of acctDB
	stats      JobStats
	usage      map[string]float64 // fair-share usage by account/user, decayed to usageAt; replaced, never changed
	usageAt    int64
	resvs      map[string]*model.Reservation // by name; replaced, never changed
}

// Store holds the current snapshot and wakes watchers on each change.
type Store struct {
	cur     atomic.Pointer[Snapshot]
	mu      sync.Mutex // serialises writers (the FSM) and the change channel
	changed chan struct{}
	held    *heldIndex // per user, beside the snapshots (held.go)
}

// New returns an empty store whose first job id will be firstJobID.
func New(firstJobID model.JobID) *Store {
	if firstJobID == 0 {
		firstJobID = 1
	}
	s := &Store{changed: make(chan struct{}), held: newHeldIndex()}
	s.cur.Store(&Snapshot{
		NextJobID: firstJobID,
		jobs:      immutable.NewSortedMap[model.JobID, *model.Job](jobIDs{}),
		active:    immutable.NewSortedMap[model.JobID, struct{}](jobIDs{}),
		queued:    immutable.NewSortedMap[model.JobID, struct{}](jobIDs{}),
		allocated: immutable.NewSortedMap[model.JobID, struct{}](jobIDs{}),
		finished:  immutable.NewSortedMap[model.JobID, struct{}](jobIDs{}),
		nodes:     immutable.NewSortedMap[string, *model.Node](strKeys{}),
		acct:      newOutbox(),
	})
	return s
}

// Snapshot returns the current state; cheap and lock-free.
func (s *Store) Snapshot() *Snapshot { return s.cur.Load() }

// Changed returns a channel closed at the next committed change.
func (s *Store) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// Txn is a write transaction over a private copy-on-write snapshot.
type Txn struct {
	store *Store
	snap  Snapshot
}

// Begin starts a write transaction. Only one may be open at a time.
func (s *Store) Begin() *Txn {
	s.mu.Lock()
	return &Txn{store: s, snap: *s.cur.Load()}
}

// Commit publishes the transaction's state at the given log index.
func (t *Txn) Commit(index uint64) {
	t.snap.Index = index
	snap := t.snap
	t.store.cur.Store(&snap)
	close(t.store.changed)
	t.store.changed = make(chan struct{})
	t.store.mu.Unlock()
}

// Abort drops the transaction.
func (t *Txn) Abort() { t.store.mu.Unlock() }

// Snapshot is the transaction's view so far.
func (t *Txn) Snapshot() *Snapshot { return &t.snap }

// PutJob inserts or replaces a job record, keeping the active index right,
// and queues its accounting record.
func (t *Txn) PutJob(j *model.Job) {
	old, _ := t.snap.jobs.Get(j.ID)
	t.snap.stats.count(old, j)
	t.store.held.replace(old, j)
	t.snap.jobs = t.snap.jobs.Set(j.ID, j)
	t.snap.acct.mark(j.ID)
	if j.Finished() {
		t.snap.active = t.snap.active.Delete(j.ID)
	} else {
		t.snap.active = t.snap.active.Set(j.ID, struct{}{})
	}
	t.snap.queued = setIf(t.snap.queued, j.ID, !j.Finished() && isQueued(j))
	t.snap.allocated = setIf(t.snap.allocated, j.ID, !j.Finished() && len(j.Alloc) > 0)
	t.snap.finished = setIf(t.snap.finished, j.ID, j.Finished())
}

// isQueued: an unfinished job a scheduling pass could start.
func isQueued(j *model.Job) bool {
	return j.State == model.JobPending && !j.HoldUser && !j.HoldAdmin
}

// setIf keeps id in the index exactly when in holds, touching the map
// only on a change so that unchanged indexes stay shared.
func setIf(m *immutable.SortedMap[model.JobID, struct{}], id model.JobID, in bool) *immutable.SortedMap[model.JobID, struct{}] {
	_, has := m.Get(id)
	switch {
	case in && !has:
		return m.Set(id, struct{}{})
	case !in && has:
		return m.Delete(id)
	}
	return m
}

// DeleteJob removes a job record.
func (t *Txn) DeleteJob(id model.JobID) {
	if old, ok := t.snap.jobs.Get(id); ok {
		t.store.held.replace(old, nil)
	}
	t.snap.jobs = t.snap.jobs.Delete(id)
	t.snap.active = t.snap.active.Delete(id)
	t.snap.queued = t.snap.queued.Delete(id)
	t.snap.allocated = t.snap.allocated.Delete(id)
	t.snap.finished = t.snap.finished.Delete(id)
}

// PutNode inserts or replaces a node.
func (t *Txn) PutNode(n *model.Node) { t.snap.nodes = t.snap.nodes.Set(n.Name, n) }

// DeleteNode removes a node.
func (t *Txn) DeleteNode(name string) { t.snap.nodes = t.snap.nodes.Delete(name) }

// SetPartitions replaces the partition list.
func (t *Txn) SetPartitions(p []*model.Partition) { t.snap.partitions = p }

// PutToken adds or replaces a join token.
func (t *Txn) PutToken(tok *model.JoinToken) {
	m := make(map[string]*model.JoinToken, len(t.snap.tokens)+1)
	for k, v := range t.snap.tokens {
		m[k] = v
	}
	m[tok.ID] = tok
	t.snap.tokens = m
}

// DeleteToken removes a join token.
func (t *Txn) DeleteToken(id string) {
	if _, ok := t.snap.tokens[id]; !ok {
		return
	}
	m := make(map[string]*model.JoinToken, len(t.snap.tokens))
	for k, v := range t.snap.tokens {
		if k != id {
			m[k] = v
		}
	}
	t.snap.tokens = m
}

// Token returns a join token by id, or nil.
func (s *Snapshot) Token(id string) *model.JoinToken { return s.tokens[id] }

// Tokens lists the join tokens.
func (s *Snapshot) Tokens() []*model.JoinToken {
	out := make([]*model.JoinToken, 0, len(s.tokens))
	for _, t := range s.tokens {
		out = append(out, t)
	}
	return out
}

// AcctDB is the accounting configuration (nil: never set) and its version.
func (s *Snapshot) AcctDB() (*model.AcctDB, uint64) { return s.acctDB, s.acctDBVer }

// SetAcctDB replaces the accounting configuration.
func (t *Txn) SetAcctDB(db *model.AcctDB, version uint64) {
	t.snap.acctDB, t.snap.acctDBVer = db, version
}

// SetNextJobID records the next id to hand out.
func (t *Txn) SetNextJobID(id model.JobID) { t.snap.NextJobID = id }

// Job returns a job by id.
func (s *Snapshot) Job(id model.JobID) *model.Job {
	j, _ := s.jobs.Get(id)
	return j
}

// NumJobs is the number of job records held.
func (s *Snapshot) NumJobs() int { return s.jobs.Len() }

// NumActive is the number of jobs not yet finished.
func (s *Snapshot) NumActive() int { return s.active.Len() }

// EachJob calls fn for every job in id order until fn returns false.
func (s *Snapshot) EachJob(fn func(*model.Job) bool) {
	it := s.jobs.Iterator()
	for !it.Done() {
		_, j, _ := it.Next()
		if !fn(j) {
			return
		}
	}
}

// EachJobFrom calls fn for jobs with id >= from, in id order.
func (s *Snapshot) EachJobFrom(from model.JobID, fn func(*model.Job) bool) {
	it := s.jobs.Iterator()
	it.Seek(from)
	for !it.Done() {
		_, j, _ := it.Next()
		if !fn(j) {
			return
		}
	}
}

// EachActive calls fn for every unfinished job (pending, running,
// completing) in id order.
func (s *Snapshot) EachActive(fn func(*model.Job) bool) {
	if 2*s.active.Len() >= s.jobs.Len() {
		// Mostly unfinished (a big queue): walking the job map itself,
		// skipping the finished, saves a lookup per job.
		s.EachJob(func(j *model.Job) bool { return j.Finished() || fn(j) })
		return
	}
	it := s.active.Iterator()
	for !it.Done() {
		id, _, _ := it.Next()
		j, _ := s.jobs.Get(id)
		if !fn(j) {
			return
		}
	}
}

// EachQueued calls fn, in id order, for every pending job that is not
// held: what a scheduling pass can start. Its cost follows their number,
// not the queue's.
func (s *Snapshot) EachQueued(fn func(*model.Job) bool) { s.each(s.queued, fn) }

// EachFinished calls fn, in id order, for every finished job still held
// (until the purge after MinJobAge): its cost follows their number, not
// the queue's.
func (s *Snapshot) EachFinished(fn func(*model.Job) bool) { s.each(s.finished, fn) }

// NumFinished is the number of jobs EachFinished visits.
func (s *Snapshot) NumFinished() int { return s.finished.Len() }

// NumQueued is the number of jobs EachQueued visits.
func (s *Snapshot) NumQueued() int { return s.queued.Len() }

// EachAllocated calls fn, in id order, for every unfinished job that
// holds nodes (running, suspended, completing).
func (s *Snapshot) EachAllocated(fn func(*model.Job) bool) { s.each(s.allocated, fn) }

// each walks an index and the job map side by side (both in id order):
// the next indexed job is most often the job map's next entry (a queue's
// pending jobs, an array's tasks, are runs of ids), which a step of the
// map's iterator reaches without the Get (a descent from the root, a
// binary search per level) per job that was a quarter of a pass over
// 10,000 pending jobs. Past a few steps it seeks instead.
func (s *Snapshot) each(idx *immutable.SortedMap[model.JobID, struct{}], fn func(*model.Job) bool) {
	it := idx.Iterator()
	jt := s.jobs.Iterator()
	var at model.JobID // the job map's entry last read: key at, job cur
	var cur *model.Job
	read := false
	for !it.Done() {
		id, _, _ := it.Next()
		for steps := 0; (!read || at < id) && steps < 4 && !jt.Done(); steps++ {
			at, cur, _ = jt.Next()
			read = true
		}
		if !read || at < id {
			jt.Seek(id)
			read = !jt.Done()
			if read {
				at, cur, _ = jt.Next()
			}
		}
		var j *model.Job
		if read && at == id {
			j = cur
		}
		if !fn(j) {
			return
		}
	}
}

// Node returns a node by name.
func (s *Snapshot) Node(name string) *model.Node {
	n, _ := s.nodes.Get(name)
	return n
}

// NodeSet identifies the snapshot's nodes: two snapshots have the same
// when no node was added, removed or changed between them (what is
// derived from the nodes alone can be kept while it stays the same).
type NodeSet struct {
	m *immutable.SortedMap[string, *model.Node]
}

// NodeSet is the snapshot's NodeSet.
func (s *Snapshot) NodeSet() NodeSet { return NodeSet{s.nodes} }

// Nodes lists all nodes in name order.
func (s *Snapshot) Nodes() []*model.Node {
	out := make([]*model.Node, 0, s.nodes.Len())
	it := s.nodes.Iterator()
	for !it.Done() {
		_, n, _ := it.Next()
		out = append(out, n)
	}
	return out
}

// Partitions lists the partitions in configuration order.
func (s *Snapshot) Partitions() []*model.Partition { return s.partitions }

// Partition finds a partition by name.
func (s *Snapshot) Partition(name string) *model.Partition {
	for _, p := range s.partitions {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// DefaultPartition is the partition marked Default, else the first one.
func (s *Snapshot) DefaultPartition() *model.Partition {
	for _, p := range s.partitions {
		if p.Default {
			return p
		}
	}
	if len(s.partitions) > 0 {
		return s.partitions[0]
	}
	return nil
}

// ArrayTasks returns every task of an array, in task order.
func (s *Snapshot) ArrayTasks(arrayID model.JobID) []*model.Job {
	var out []*model.Job
	s.EachJobFrom(arrayID, func(j *model.Job) bool {
		if j.ArrayJobID != arrayID {
			return false
		}
		out = append(out, j)
		return true
	})
	return out
}

// ActiveByNameUser returns the unfinished jobs with this name and owner.
func (s *Snapshot) ActiveByNameUser(name string, uid uint32) []*model.Job {
	var out []*model.Job
	s.EachActive(func(j *model.Job) bool {
		if j.UserID == uid && j.Name == name {
			out = append(out, j)
		}
		return true
	})
	return out
}

// Usage is the decayed fair-share usage (CPU-seconds) by association and
// the time it was brought up to; nil before the first computation.
func (s *Snapshot) Usage() (map[string]float64, int64) { return s.usage, s.usageAt }

// SetUsage replaces the fair-share usage.
func (t *Txn) SetUsage(u map[string]float64, at int64) { t.snap.usage, t.snap.usageAt = u, at }
