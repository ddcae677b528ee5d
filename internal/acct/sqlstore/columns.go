package sqlstore

import (
	"database/sql"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/drover-hpc/drover/internal/acct"
)

// column maps one field of a record to a column. Every column is NOT
// NULL with a zero default, so rows scan into plain strings and int64s
// (database/sql's fast path) instead of Null types.
type column[T any] struct {
	name string
	kind kind
	str  func(*T) *string
	num  func(*T) int64
	set  func(*T, int64)
	// enc and dec, when set, convert a text column that has no string
	// field of its own (str is nil): a structured field stored as JSON.
	enc func(*T) string
	dec func(*T, string)
}

// setText stores a text value read from the database into r.
func (c *column[T]) setText(r *T, v string) {
	if c.dec != nil {
		c.dec(r, v)
		return
	}
	*c.str(r) = v
}

type kind int

const (
	kInt  kind = iota
	kText      // free text
	kKey       // short text that is indexed or compared (VARCHAR(191) on MySQL)
)

func text[T any](name string, k kind, f func(*T) *string) column[T] {
	return column[T]{name: name, kind: k, str: f}
}

func num[T any](name string, get func(*T) int64, set func(*T, int64)) column[T] {
	return column[T]{name: name, kind: kInt, num: get, set: set}
}

// jobCols are the jobs table's columns; (cluster, job_id) is the key.
var jobCols = []column[acct.Job]{
	text("cluster", kKey, func(j *acct.Job) *string { return &j.Cluster }),
	num("job_id", func(j *acct.Job) int64 { return int64(j.JobID) }, func(j *acct.Job, v int64) { j.JobID = uint32(v) }),
	num("array_job_id", func(j *acct.Job) int64 { return int64(j.ArrayJobID) }, func(j *acct.Job, v int64) { j.ArrayJobID = uint32(v) }),
	num("array_task_id", func(j *acct.Job) int64 { return int64(j.ArrayTaskID) }, func(j *acct.Job, v int64) { j.ArrayTaskID = int32(v) }),
	text("name", kText, func(j *acct.Job) *string { return &j.Name }), // any length
	text("user_name", kKey, func(j *acct.Job) *string { return &j.User }),
	num("uid", func(j *acct.Job) int64 { return int64(j.UID) }, func(j *acct.Job, v int64) { j.UID = uint32(v) }),
	text("group_name", kKey, func(j *acct.Job) *string { return &j.Group }),
	num("gid", func(j *acct.Job) int64 { return int64(j.GID) }, func(j *acct.Job, v int64) { j.GID = uint32(v) }),
	text("account", kKey, func(j *acct.Job) *string { return &j.Account }),
	text("partition_name", kKey, func(j *acct.Job) *string { return &j.Partition }),
	text("qos", kKey, func(j *acct.Job) *string { return &j.QOS }),
	text("state", kKey, func(j *acct.Job) *string { return &j.State }),
	text("reason", kText, func(j *acct.Job) *string { return &j.Reason }),
	num("exit_status", func(j *acct.Job) int64 { return int64(j.ExitStatus) }, func(j *acct.Job, v int64) { j.ExitStatus = int32(v) }),
	num("exit_signal", func(j *acct.Job) int64 { return int64(j.ExitSignal) }, func(j *acct.Job, v int64) { j.ExitSignal = int32(v) }),
	num("cancelled_by", func(j *acct.Job) int64 { return int64(j.CancelledBy) }, func(j *acct.Job, v int64) { j.CancelledBy = uint32(v) }),
	num("derived_exit_status", func(j *acct.Job) int64 { return int64(j.DerivedExitStatus) }, func(j *acct.Job, v int64) { j.DerivedExitStatus = int32(v) }),
	num("derived_exit_signal", func(j *acct.Job) int64 { return int64(j.DerivedExitSignal) }, func(j *acct.Job, v int64) { j.DerivedExitSignal = int32(v) }),
	num("restarts", func(j *acct.Job) int64 { return int64(j.Restarts) }, func(j *acct.Job, v int64) { j.Restarts = int32(v) }),
	num("priority", func(j *acct.Job) int64 { return int64(j.Priority) }, func(j *acct.Job, v int64) { j.Priority = uint32(v) }),
	num("submit", func(j *acct.Job) int64 { return j.Submit }, func(j *acct.Job, v int64) { j.Submit = v }),
	num("eligible", func(j *acct.Job) int64 { return j.Eligible }, func(j *acct.Job, v int64) { j.Eligible = v }),
	num("start_time", func(j *acct.Job) int64 { return j.Start }, func(j *acct.Job, v int64) { j.Start = v }),
	num("end_time", func(j *acct.Job) int64 { return j.End }, func(j *acct.Job, v int64) { j.End = v }),
	num("suspended", func(j *acct.Job) int64 { return j.Suspended }, func(j *acct.Job, v int64) { j.Suspended = v }),
	num("time_limit", func(j *acct.Job) int64 { return j.TimeLimit }, func(j *acct.Job, v int64) { j.TimeLimit = v }),
	num("nnodes", func(j *acct.Job) int64 { return int64(j.NNodes) }, func(j *acct.Job, v int64) { j.NNodes = int32(v) }),
	num("ncpus", func(j *acct.Job) int64 { return int64(j.NCPUs) }, func(j *acct.Job, v int64) { j.NCPUs = int32(v) }),
	num("req_cpus", func(j *acct.Job) int64 { return int64(j.ReqCPUs) }, func(j *acct.Job, v int64) { j.ReqCPUs = int32(v) }),
	num("req_nodes", func(j *acct.Job) int64 { return int64(j.ReqNodes) }, func(j *acct.Job, v int64) { j.ReqNodes = int32(v) }),
	num("req_mem", func(j *acct.Job) int64 { return j.ReqMem }, func(j *acct.Job, v int64) { j.ReqMem = v }),
	num("req_mem_per_cpu", func(j *acct.Job) int64 { return b2i(j.ReqMemPerCPU) }, func(j *acct.Job, v int64) { j.ReqMemPerCPU = v != 0 }),
	text("req_tres", kText, func(j *acct.Job) *string { return &j.ReqTRES }),
	text("alloc_tres", kText, func(j *acct.Job) *string { return &j.AllocTRES }),
	text("node_list", kText, func(j *acct.Job) *string { return &j.NodeList }),
	text("work_dir", kText, func(j *acct.Job) *string { return &j.WorkDir }),
	text("comment", kText, func(j *acct.Job) *string { return &j.Comment }),
	text("submit_line", kText, func(j *acct.Job) *string { return &j.SubmitLine }),
	text("std_out", kText, func(j *acct.Job) *string { return &j.StdOut }),
	text("std_err", kText, func(j *acct.Job) *string { return &j.StdErr }),
	text("std_in", kText, func(j *acct.Job) *string { return &j.StdIn }),
	text("constraints", kText, func(j *acct.Job) *string { return &j.Constraints }),
	// runs: the earlier runs of a requeued job as JSON (acct.Job.Runs);
	// '' for the vast majority of jobs, which never ran twice.
	{name: "runs", kind: kText, enc: encodeRuns, dec: decodeRuns},
}

// stepRow is a step with the key of its job, as the steps table holds it.
type stepRow struct {
	cluster string
	jobID   uint32
	acct.Step
}

var stepCols = []column[stepRow]{
	text("cluster", kKey, func(s *stepRow) *string { return &s.cluster }),
	num("job_id", func(s *stepRow) int64 { return int64(s.jobID) }, func(s *stepRow, v int64) { s.jobID = uint32(v) }),
	num("step_id", func(s *stepRow) int64 { return int64(s.StepID) }, func(s *stepRow, v int64) { s.StepID = int32(v) }),
	text("name", kText, func(s *stepRow) *string { return &s.Name }),
	text("state", kKey, func(s *stepRow) *string { return &s.State }),
	num("exit_status", func(s *stepRow) int64 { return int64(s.ExitStatus) }, func(s *stepRow, v int64) { s.ExitStatus = int32(v) }),
	num("exit_signal", func(s *stepRow) int64 { return int64(s.ExitSignal) }, func(s *stepRow, v int64) { s.ExitSignal = int32(v) }),
	num("cancelled_by", func(s *stepRow) int64 { return int64(s.CancelledBy) }, func(s *stepRow, v int64) { s.CancelledBy = uint32(v) }),
	num("start_time", func(s *stepRow) int64 { return s.Start }, func(s *stepRow, v int64) { s.Start = v }),
	num("end_time", func(s *stepRow) int64 { return s.End }, func(s *stepRow, v int64) { s.End = v }),
	num("nnodes", func(s *stepRow) int64 { return int64(s.NNodes) }, func(s *stepRow, v int64) { s.NNodes = int32(v) }),
	num("ntasks", func(s *stepRow) int64 { return int64(s.NTasks) }, func(s *stepRow, v int64) { s.NTasks = int32(v) }),
	num("ncpus", func(s *stepRow) int64 { return int64(s.NCPUs) }, func(s *stepRow, v int64) { s.NCPUs = int32(v) }),
	text("node_list", kText, func(s *stepRow) *string { return &s.NodeList }),
	text("alloc_tres", kText, func(s *stepRow) *string { return &s.AllocTRES }),
	num("max_rss", func(s *stepRow) int64 { return s.MaxRSS }, func(s *stepRow, v int64) { s.MaxRSS = v }),
	text("max_rss_node", kText, func(s *stepRow) *string { return &s.MaxRSSNode }),
	num("max_rss_task", func(s *stepRow) int64 { return int64(s.MaxRSSTask) }, func(s *stepRow, v int64) { s.MaxRSSTask = int32(v) }),
	num("ave_rss", func(s *stepRow) int64 { return s.AveRSS }, func(s *stepRow, v int64) { s.AveRSS = v }),
	num("user_cpu", func(s *stepRow) int64 { return s.UserCPU }, func(s *stepRow, v int64) { s.UserCPU = v }),
	num("system_cpu", func(s *stepRow) int64 { return s.SystemCPU }, func(s *stepRow, v int64) { s.SystemCPU = v }),
	// Added by migration 4 (laterStepCols).
	num("suspended", func(s *stepRow) int64 { return s.Suspended }, func(s *stepRow, v int64) { s.Suspended = v }),
}

func encodeRuns(j *acct.Job) string {
	if len(j.Runs) == 0 {
		return ""
	}
	b, _ := json.Marshal(j.Runs)
	return string(b)
}

// decodeRuns reads the runs column; a value this build cannot read
// leaves Runs empty rather than failing the whole query.
func decodeRuns(j *acct.Job, v string) {
	j.Runs = nil
	if v != "" {
		_ = json.Unmarshal([]byte(v), &j.Runs)
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// values appends a record's column values in column order.
func values[T any](cols []column[T], r *T, out []any) []any {
	for _, c := range cols {
		if c.kind == kInt {
			out = append(out, c.num(r))
		} else if c.enc != nil {
			out = append(out, storable(c.enc(r)))
		} else {
			out = append(out, storable(*c.str(r)))
		}
	}
	return out
}

// storable is s as every database keeps it: PostgreSQL and MySQL refuse
// text that is not UTF-8 and PostgreSQL any NUL byte, and a refused
// record would stop the controller's outbox for good. Such bytes become
// U+FFFD, on every dialect alike.
func storable(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// scanner reads rows of cols into records, reusing its buffers.
type scanner[T any] struct {
	cols   []column[T]
	packed bool // rows come as one packed text (see packedExpr)
	nums   []int64
	texts  []string // for columns with dec
	dest   []any
}

func newScanner[T any](d *dialect, cols []column[T]) *scanner[T] {
	return &scanner[T]{cols: cols, packed: d.packRows, nums: make([]int64, len(cols)), texts: make([]string, len(cols)), dest: make([]any, len(cols))}
}

type rowScanner interface{ Scan(...any) error }

// scan reads the current row into r.
func (s *scanner[T]) scan(rows rowScanner, r *T) error {
	for i, c := range s.cols {
		switch {
		case c.kind == kInt:
			s.dest[i] = &s.nums[i]
		case c.dec != nil:
			s.dest[i] = &s.texts[i]
		default:
			s.dest[i] = c.str(r)
		}
	}
	if err := rows.Scan(s.dest...); err != nil {
		return err
	}
	for i, c := range s.cols {
		switch {
		case c.kind == kInt:
			c.set(r, s.nums[i])
		case c.dec != nil:
			c.dec(r, s.texts[i])
		}
	}
	return nil
}

// readRows reads every row into a new record, hands it to each, and
// closes rows.
func readRows[T any](rows *sql.Rows, sc *scanner[T], each func(*T)) error {
	if sc.packed {
		return readPacked(rows, sc, each)
	}
	defer rows.Close()
	for rows.Next() {
		r := new(T)
		if err := sc.scan(rows, r); err != nil {
			return err
		}
		each(r)
	}
	return rows.Err()
}
