package squeue

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/model"
)

// jobRow is one output line: a job, an array task, or the collapsed
// pending tasks of an array (tasks non-empty).
type jobRow struct {
	job    *model.Job
	tasks  []int  // collapsed pending task ids, ascending; nil otherwise
	expr   string // "1-10%2" for collapsed rows
	reason string // merged reason of collapsed rows; "" = job.Reason
	nodes  string // compressed node list, once computed
	hasNL  bool
}

// stateSet is a -t filter.
type stateSet struct {
	all        bool
	base       map[model.JobState]bool
	completing bool
}

// flagStates are Slurm state names with no Drover counterpart: accepted in
// -t so that scripts keep working, never matched.
var flagStates = map[string]bool{
	"CF": true, "CONFIGURING": true, "ST": true, "STOPPED": true,
	"RQ": true, "REQUEUED": true, "RH": true, "REQUEUE_HOLD": true,
	"RF": true, "REQUEUE_FED": true, "RS": true, "RESIZING": true,
	"RD": true, "RESV_DEL_HOLD": true, "SI": true, "SIGNALING": true,
	"SE": true, "SPECIAL_EXIT": true, "SO": true, "STAGE_OUT": true,
	"RV": true, "REVOKED": true,
}

// parseStates parses a -t list; bad is the first name it does not know.
func parseStates(list string) (s stateSet, bad string) {
	s.base = map[model.JobState]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		up := strings.ToUpper(name)
		switch {
		case up == "ALL":
			s.all = true
		case up == "CG" || up == "COMPLETING":
			s.completing = true
		case flagStates[up]:
		default:
			st, ok := model.ParseJobState(up)
			if !ok {
				return s, name
			}
			s.base[st] = true
		}
	}
	return s, ""
}

// wantsFinished reports whether the filter can match ended jobs, which the
// controller returns only when asked (JobQuery.IncludeAll).
func (s *stateSet) wantsFinished() bool {
	if s == nil {
		return false
	}
	if s.all {
		return true
	}
	for st := range s.base {
		if st.Final() {
			return true
		}
	}
	return false
}

func (s *stateSet) match(j *model.Job) bool {
	if s == nil { // default: what is queued or holds resources
		return j.Completing || j.State == model.JobPending ||
			j.State == model.JobRunning || j.State == model.JobSuspended
	}
	if s.all {
		return true
	}
	if j.Completing {
		return s.completing
	}
	return s.base[j.State]
}

// filter is everything that selects jobs.
type filter struct {
	targets    []cli.JobTarget
	states     *stateSet // nil = default states
	uids       map[uint32]bool
	userNames  map[string]bool
	partitions []string
	names      []string
	accounts   []string
	qos        []string
	nodes      map[string]bool
	notUID     int64 // --notme: uid to leave out; -1 = none
}

func (f *filter) hasUsers() bool { return len(f.uids) > 0 || len(f.userNames) > 0 }

// matchID reports whether j is named by the -j list: by its id, its
// array's id, or its array's id and task id.
func (f *filter) matchID(j *model.Job) bool {
	if len(f.targets) == 0 {
		return true
	}
	base := j.ID
	if j.IsArrayTask() {
		base = j.ArrayJobID
	}
	for _, t := range f.targets {
		if t.ID != base && t.ID != j.ID {
			continue
		}
		if t.Tasks == nil {
			return true
		}
		if j.IsArrayTask() && t.ID == j.ArrayJobID && slices.Contains(t.Tasks, j.ArrayTaskID) {
			return true
		}
	}
	return false
}

func (f *filter) match(j *model.Job) bool {
	if !f.matchID(j) || !f.states.match(j) {
		return false
	}
	if f.hasUsers() && !f.uids[j.UserID] && !f.userNames[j.UserName] {
		return false
	}
	if f.notUID >= 0 && int64(j.UserID) == f.notUID {
		return false
	}
	if len(f.partitions) > 0 && !anyPartition(j.Partition, f.partitions) &&
		!(j.State == model.JobPending && j.Spec != nil && anyPartition(j.Spec.Partition, f.partitions)) {
		return false
	}
	if len(f.names) > 0 && !containsFold(f.names, j.Name) {
		return false
	}
	if len(f.accounts) > 0 && (j.Spec == nil || !containsFold(f.accounts, j.Spec.Account)) {
		return false
	}
	if len(f.qos) > 0 && (j.Spec == nil || !containsFold(f.qos, j.Spec.QOS)) {
		return false
	}
	if f.nodes != nil {
		hit := false
		for _, a := range j.Alloc {
			if f.nodes[a.Node] {
				hit = true
				break
			}
		}
		if !hit {
			return false
		}
	}
	return true
}

func anyPartition(jobParts string, want []string) bool {
	for p := range strings.SplitSeq(jobParts, ",") {
		if slices.Contains(want, p) {
			return true
		}
	}
	return false
}

func containsFold(list []string, v string) bool {
	for _, s := range list {
		if strings.EqualFold(s, v) {
			return true
		}
	}
	return false
}

// buildRows filters jobs and, unless perTask, folds pending tasks of one
// array (same partition, name and hold state) into one row.
func buildRows(jobs []*model.Job, f *filter, perTask bool, bitstrLen int) []*jobRow {
	type key struct {
		array        model.JobID
		part, name   string
		holdU, holdA bool
	}
	rows := make([]*jobRow, 0, len(jobs))
	store := make([]jobRow, 0, len(jobs)) // one allocation for all rows
	groups := map[key]int{}
	for _, j := range jobs {
		if j == nil || !f.match(j) {
			continue
		}
		if perTask || !j.IsArrayTask() || j.State != model.JobPending || j.Completing {
			store = append(store, jobRow{job: j})
			rows = append(rows, &store[len(store)-1])
			continue
		}
		k := key{j.ArrayJobID, j.Partition, j.Name, j.HoldUser, j.HoldAdmin}
		if i, ok := groups[k]; ok {
			r := rows[i]
			r.tasks = append(r.tasks, j.ArrayTaskID)
			if j.ArrayTaskID < r.job.ArrayTaskID {
				// Slurm's pending remainder is one record with one
				// reason: the first task's, the one the scheduler
				// looks at first.
				r.job, r.reason = j, reasonOf(j)
			}
			continue
		}
		groups[k] = len(rows)
		store = append(store, jobRow{job: j, tasks: []int{j.ArrayTaskID}, reason: reasonOf(j)})
		rows = append(rows, &store[len(store)-1])
	}
	for _, r := range rows {
		if len(r.tasks) < 2 {
			r.tasks = nil
			continue
		}
		slices.Sort(r.tasks)
		throttle := 0
		if r.job.Spec != nil && r.job.Spec.Array != nil {
			throttle = r.job.Spec.Array.Throttle
		}
		r.expr = cli.TaskExpr(r.tasks, throttle, bitstrLen)
	}
	return rows
}

// reasonOf is the reason squeue shows for a job.
func reasonOf(j *model.Job) string {
	switch {
	case j.Reason != "":
		return j.Reason
	case j.State == model.JobPending && j.HoldAdmin:
		return model.ReasonHeldAdmin
	case j.State == model.JobPending && j.HoldUser:
		return model.ReasonHeldUser
	}
	return model.ReasonNone
}

// sortKey is one -S field.
type sortKey struct {
	letter byte
	desc   bool
}

// sortable are the -S letters squeue sorts on; ignoredSort are letters
// Slurm accepts that would sort on data Drover does not have (or all equal).
const (
	sortable    = "BCDeEgGiAjlLmMNpPQSTtuUVaqk"
	ignoredSort = "cfhnObdHIJzv"
)

// parseSort parses a -S list such as "P,t,-p" or "-p,i".
func parseSort(s string) ([]sortKey, error) {
	var keys []sortKey
	desc := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ',' || c == '+':
			desc = false
		case c == '-':
			desc = true
		case strings.HasPrefix(strings.ToLower(s[i:]), "cluster"):
			i += len("cluster") - 1 // one cluster only
			desc = false
		case strings.IndexByte(sortable, c) >= 0:
			keys = append(keys, sortKey{letter: c, desc: desc})
			desc = false
		case strings.IndexByte(ignoredSort, c) >= 0:
			desc = false
		default:
			return nil, fmt.Errorf("Invalid sort specification: %c", c)
		}
	}
	return keys, nil
}

// sortRows orders rows by keys, then by job id and array task id.
func sortRows(rows []*jobRow, keys []sortKey, c *renderCtx) {
	if len(rows) < 2 {
		return
	}
	// Each row's keys are computed once, as numbers (a string key by its
	// rank among the values present), into one flat table, and the rows
	// are sorted by comparing those: a 100,000-job squeue spent 60% of its
	// time in a stable sort that rebuilt the keys and chased each job's
	// pointer in every comparison. The order ends on the job id, unique
	// per row, so it is total and an unstable sort gives the same result.
	// A key every row has alike (the partition, state and priority of a
	// queue of held jobs) orders nothing: its column is left out.
	w := len(keys) + 1
	flat := make([]int64, len(rows)*w)
	strs := make([]string, len(rows))
	col := 0
	for _, k := range keys {
		var isStr atomic.Bool
		inParts(len(rows), func(lo, hi int) {
			str := false
			for r := lo; r < hi; r++ {
				s, n := sortValue(k.letter, rows[r], c)
				if s != "" {
					str = true
				}
				strs[r], flat[r*w+col] = s, n
			}
			if str {
				isStr.Store(true)
			}
		})
		if isStr.Load() {
			rankStrings(strs, flat[col:], w)
		}
		if k.desc {
			for r := range rows {
				flat[r*w+col] = -flat[r*w+col]
			}
		}
		if !alike(flat[col:], w, len(rows)) {
			col++
		}
	}
	inParts(len(rows), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			_, flat[r*w+col] = sortValue('i', rows[r], c)
		}
	})
	sorted := true
	for r := 1; col == 0 && r < len(rows); r++ {
		if flat[r*w] < flat[(r-1)*w] {
			sorted = false
			break
		}
	}
	if col == 0 && sorted {
		return // in id order already: the controller lists jobs so
	}
	n := col + 1
	idx := make([]int32, len(rows))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int {
		return slices.Compare(flat[int(a)*w:int(a)*w+n], flat[int(b)*w:int(b)*w+n])
	})
	out := make([]*jobRow, len(rows))
	for i, r := range idx {
		out[i] = rows[r]
	}
	copy(rows, out)
}

// partRows is the fewest rows inParts gives a goroutine of its own.
const partRows = 16384

// inParts calls fn for consecutive ranges of n rows, up to one range per
// CPU at once (a value squeue sorts or prints on depends on its row
// alone), and returns when all are done.
func inParts(n int, fn func(lo, hi int)) {
	parts := min(runtime.GOMAXPROCS(0), n/partRows)
	if parts < 2 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() { fn(p*n/parts, (p+1)*n/parts) })
	}
	wg.Wait()
}

// alike reports whether every w-th of the first rows elements of col is
// the same.
func alike(col []int64, w, rows int) bool {
	for r := 1; r < rows; r++ {
		if col[r*w] != col[0] {
			return false
		}
	}
	return true
}

// rankStrings writes each string's rank among the distinct values of strs
// to every w-th element of out.
func rankStrings(strs []string, out []int64, w int) {
	// Neighbours mostly hold the same value (one user's, one partition's
	// jobs): it is looked up once.
	rank := map[string]int64{}
	for r, s := range strs {
		if r == 0 || s != strs[r-1] {
			rank[s] = 0
		}
	}
	distinct := make([]string, 0, len(rank))
	for s := range rank {
		distinct = append(distinct, s)
	}
	slices.Sort(distinct)
	for i, s := range distinct {
		rank[s] = int64(i)
	}
	for r, s := range strs {
		if r > 0 && s == strs[r-1] {
			out[r*w] = out[(r-1)*w]
		} else {
			out[r*w] = rank[s]
		}
	}
}

func baseID(j *model.Job) model.JobID {
	if j.IsArrayTask() {
		return j.ArrayJobID
	}
	return j.ID
}

func compareID(a, b *jobRow) int {
	if d := cmp.Compare(baseID(a.job), baseID(b.job)); d != 0 {
		return d
	}
	return cmp.Compare(a.job.ArrayTaskID, b.job.ArrayTaskID)
}

// sortValue is what -S letter sorts r on: a string or a number (the
// other left zero).
func sortValue(letter byte, r *jobRow, c *renderCtx) (string, int64) {
	j := r.job
	switch letter {
	case 'P':
		return j.Partition, 0
	case 't':
		_, s := j.DisplayState()
		return s, 0
	case 'T':
		l, _ := j.DisplayState()
		return l, 0
	case 'p', 'Q':
		return "", int64(j.Priority)
	case 'i':
		// base id, then task id (NoArrayTask, -1, first).
		return "", int64(baseID(j))<<32 | int64(uint32(j.ArrayTaskID+1))
	case 'A':
		return "", int64(j.ID)
	case 'j':
		return j.Name, 0
	case 'u':
		return j.UserName, 0
	case 'U':
		return "", int64(j.UserID)
	case 'g', 'G':
		return "", int64(j.GroupID)
	case 'S':
		return "", j.StartTime
	case 'e':
		return "", c.endTime(j)
	case 'V':
		return "", j.SubmitTime
	case 'M':
		return "", c.timeUsed(j)
	case 'l':
		return "", limitKey(j.TimeLimit)
	case 'L':
		return "", c.timeLeftKey(j)
	case 'D':
		return "", int64(numNodes(j))
	case 'C':
		return "", int64(numCPUs(j))
	case 'm':
		return "", minMemory(j)
	case 'N':
		return r.nodeList(), 0
	case 'B':
		return j.BatchHost(), 0
	case 'a':
		return specStr(j, func(s *model.JobSpec) string { return s.Account }), 0
	case 'q':
		return specStr(j, func(s *model.JobSpec) string { return s.QOS }), 0
	case 'k':
		return j.Comment, 0
	case 'E':
		return dependency(j), 0
	}
	return "", 0
}

// limitKey orders time limits with UNLIMITED last and NOT_SET first.
func limitKey(l int64) int64 {
	if l == model.Unlimited {
		return 1 << 62
	}
	return l
}

func specStr(j *model.Job, f func(*model.JobSpec) string) string {
	if j.Spec == nil {
		return ""
	}
	return f(j.Spec)
}
