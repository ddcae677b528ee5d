package sacct

import (
	"slices"
	"strings"

	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/cli"
)

// record is what one job row prints: a database record, or the pending
// remainder of an array (tasks != ""). Slurm keeps an array's tasks in
// one record until each starts, so sacct shows them as one row
// "123_[1-3,5]"; Drover stores a record per task and folds the ones that
// never ran back into that row here, where the rows are assembled.
type record struct {
	j     *acct.Job
	tasks string // the remainder's task ids as ranges ("1-3,5")
}

// remainderFields are the record fields fold reads to tell a task that
// never ran and to group them.
var remainderFields = []string{"state", "start", "restarts", "partition", "name", "reason"}

// waiting reports whether j is an array task that has never started: a
// requeued task back in PENDING ran before and keeps its own row, as in
// Slurm, where it has a record of its own by then.
func waiting(j *acct.Job) bool {
	return j.ArrayTaskID >= 0 && j.State == "PENDING" && j.Start == 0 && j.Restarts == 0
}

// folding is the pending remainders of arrays among a list of records:
// the record that prints each (at the place of the group's first record)
// and the records it stands for. Both maps stay nil when no array task
// waits, so the common listing pays nothing for it.
type folding struct {
	rows   map[*acct.Job]record
	folded map[*acct.Job]bool
}

// fold groups, unless perTask (--array), the never-started tasks of one
// array that share partition, name and hold state; a group prints with
// the lowest task's fields (the one the scheduler looks at first), as
// squeue shows the same remainder. A task the -j list names itself
// ("123_4") keeps its own row, and so does a lone waiting task (printed
// "123_4", as squeue does). bitstrLen cuts the ranges (SLURM_BITSTR_LEN;
// 0 = no limit).
func fold(jobs []*acct.Job, sel *selection, perTask bool, bitstrLen int) *folding {
	f := &folding{}
	if perTask {
		return f
	}
	type key struct {
		cluster    string
		array      uint32
		part, name string
		held       bool
	}
	type group struct {
		low     *acct.Job
		members []*acct.Job // in list order: the first prints the row
	}
	var groups map[key]*group
	for _, j := range jobs {
		if !waiting(j) || sel.named(j) {
			continue
		}
		if whole, _ := sel.match(j); !whole {
			continue
		}
		if groups == nil {
			groups = map[key]*group{}
		}
		k := key{j.Cluster, j.ArrayJobID, j.Partition, j.Name, strings.HasPrefix(j.Reason, "JobHeld")}
		g := groups[k]
		if g == nil {
			g = &group{low: j}
			groups[k] = g
		}
		g.members = append(g.members, j)
		if j.ArrayTaskID < g.low.ArrayTaskID {
			g.low = j
		}
	}
	for _, g := range groups {
		if len(g.members) < 2 {
			continue
		}
		if f.rows == nil {
			f.rows, f.folded = map[*acct.Job]record{}, map[*acct.Job]bool{}
		}
		ids := make([]int, len(g.members))
		for i, j := range g.members {
			ids[i] = int(j.ArrayTaskID)
			f.folded[j] = i > 0
		}
		slices.Sort(ids)
		f.rows[g.members[0]] = record{j: g.low, tasks: cli.TaskExpr(ids, 0, bitstrLen)}
	}
	return f
}

// row is what record j prints as, or false when it is folded into an
// earlier row.
func (f *folding) row(j *acct.Job) (record, bool) {
	if f.rows == nil {
		return record{j: j}, true
	}
	if f.folded[j] {
		return record{}, false
	}
	if r, ok := f.rows[j]; ok {
		return r, true
	}
	return record{j: j}, true
}

// named reports whether the -j list names j's array task itself
// ("123_4"), not only its array.
func (s *selection) named(j *acct.Job) bool {
	return s.any && j.ArrayTaskID >= 0 && s.whole[acct.JobSel{JobID: j.ArrayJobID, ArrayTask: j.ArrayTaskID}]
}
