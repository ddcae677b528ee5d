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

// remainderFields are the record fields records reads to tell a task that
// never ran and to group them.
var remainderFields = []string{"state", "start", "restarts", "partition", "name", "reason"}

// waiting reports whether j is an array task that has never started: a
// requeued task back in PENDING ran before and keeps its own row, as in
// Slurm, where it has a record of its own by then.
func waiting(j *acct.Job) bool {
	return j.ArrayTaskID >= 0 && j.State == "PENDING" && j.Start == 0 && j.Restarts == 0
}

// records turns the database's records into rows. Unless perTask
// (--array), the never-started tasks of one array that share partition,
// name and hold state fold into one row at the place of their first
// record; its fields are the lowest task's (the one the scheduler looks
// at first), as squeue shows the same remainder. A task the -j list
// names itself ("123_4") keeps its own row, and so does a lone waiting
// task (printed "123_4", as squeue does). bitstrLen cuts the ranges
// (SLURM_BITSTR_LEN; 0 = no limit).
func records(jobs []*acct.Job, sel *selection, perTask bool, bitstrLen int) []record {
	out := make([]record, 0, len(jobs))
	if perTask {
		for _, j := range jobs {
			out = append(out, record{j: j})
		}
		return out
	}
	type key struct {
		cluster    string
		array      uint32
		part, name string
		held       bool
	}
	groups := map[key]int{} // index in out
	tasks := map[int][]int{}
	for _, j := range jobs {
		if !waiting(j) || sel.named(j) {
			out = append(out, record{j: j})
			continue
		}
		if whole, _ := sel.match(j); !whole {
			out = append(out, record{j: j})
			continue
		}
		k := key{j.Cluster, j.ArrayJobID, j.Partition, j.Name, strings.HasPrefix(j.Reason, "JobHeld")}
		i, ok := groups[k]
		if !ok {
			groups[k] = len(out)
			tasks[len(out)] = []int{int(j.ArrayTaskID)}
			out = append(out, record{j: j})
			continue
		}
		tasks[i] = append(tasks[i], int(j.ArrayTaskID))
		if j.ArrayTaskID < out[i].j.ArrayTaskID {
			out[i].j = j
		}
	}
	for i, ids := range tasks {
		if len(ids) < 2 {
			continue
		}
		slices.Sort(ids)
		out[i].tasks = cli.TaskExpr(ids, 0, bitstrLen)
	}
	return out
}

// named reports whether the -j list names j's array task itself
// ("123_4"), not only its array.
func (s *selection) named(j *acct.Job) bool {
	return s.any && j.ArrayTaskID >= 0 && s.whole[acct.JobSel{JobID: j.ArrayJobID, ArrayTask: j.ArrayTaskID}]
}
