// Package squeue implements the squeue command: it lists the controller's
// jobs once (cli.Client.ListJobs), then filters, collapses pending array
// tasks, sorts and renders them on the client with internal/format, in
// Slurm 22.05's layout so that scripts and workflow tools that parse squeue
// keep working.
//
// Behaviour worth knowing:
//
//   - Default format "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"; -l, --start,
//     --only-job-state and -s select Slurm's other defaults. SQUEUE_FORMAT
//     and SQUEUE_FORMAT2 apply only when none of -o, -O, -l, -s, --start is
//     given; -o and -O together are an error, as in Slurm.
//   - Pending tasks of one array that share partition, name and hold state
//     collapse into one row "123_[5-100%10]" (ranges of task ids, then the
//     throttle); their reasons are merged "(Priority,Resources)". A single
//     pending task prints as "123_5". -r prints one row per task.
//   - %R prints "(Reason)" for pending, failed, timed-out, out-of-memory and
//     deadline jobs that are not completing, otherwise the compressed node
//     list. Node lists and %R are never cut to their width (Drover cuts
//     neither alignment; Slurm still cuts left-justified node lists).
//   - Default states: PENDING, RUNNING, SUSPENDED, COMPLETING. -t accepts
//     long or compact names in any case, and "all".
//   - Default sort "P,t,-p" (partition, compact state, priority
//     descending); ties are broken by job id, then array task id.
//   - A single -j id the controller does not know prints
//     "slurm_load_jobs error: Invalid job id specified" and exits 1; a list
//     of ids prints whatever matches. A base id matches every task of its
//     array, "123_4" only that task. The controller is asked for the base
//     ids and is expected to return all tasks of an array for its base id.
//   - -V prints "slurm <version>" (as upstream Slurm and Drover's other
//     commands do): firecrest, puppet facts and other tools strip a leading
//     "slurm " to read the version.
//   - -s lists running steps (steps.go) instead of jobs, in the format
//     "%.15i %.8j %.9P %.8u %.9M %N" (also with -l, which only adds the
//     date line), sorted "P,i" by default. Ids print "123.0", "123_4.batch";
//     the step letters and -O names are Slurm's (a different table from the
//     job fields). A running batch job shows a "batch" step on its batch
//     host, synthesized until the controller records one. -s takes an
//     optional "job[_task].step" list, -j/-u/-p/-w/--me/--notme filter as
//     for jobs (-w on the step's nodes); -n, -A, -q and -t do not apply to
//     steps, as in Slurm. Pending and finished steps are left out.
//   - GPU requests show as Slurm 22.05 stores them: %b / tres-per-node,
//     tres-per-job and tres-per-task "gres:gpu[:type]:N" for the option
//     kind given (N/A otherwise; "(null)" for steps), cpus-per-tres and
//     mem-per-tres "gres:gpu:N", and tres-alloc ends with ",gres/gpu=N".
//   - Not supported yet: --json and --yaml, SLURM_TIME_FORMAT other than
//     "standard", -M clusters, licenses, reservations, features (those
//     fields print "(null)").
//
// squeue never imports server packages; everything it shows comes through
// cli.Client.
package squeue
