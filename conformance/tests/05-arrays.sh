# Job arrays: task ids, output patterns, accounting rows, throttle.
. "$(dirname "$0")/../lib.sh"

id=$(submit --array=1-3 -o 'arr-%A_%a.out' --wrap 'echo $SLURM_ARRAY_JOB_ID $SLURM_ARRAY_TASK_ID $SLURM_ARRAY_TASK_COUNT $SLURM_ARRAY_TASK_MIN $SLURM_ARRAY_TASK_MAX')
until_true 60 test -s "arr-${id}_3.out"
for i in 1 2 3; do
	wait_final "${id}_$i"
	eq "task $i output file and variables" "$(cat "arr-${id}_$i.out" 2>/dev/null)" "$id $i 3 1 3"
done
for i in 1 2 3; do wait_sacct "${id}_$i" COMPLETED; done
eq "sacct lists every task" "$(sacct -n -X -P -o JobID,State -j "$id" | sort)" "$(printf '%s_1|COMPLETED\n%s_2|COMPLETED\n%s_3|COMPLETED' "$id" "$id" "$id")"

id=$(submit --array=0-3%1 -o /dev/null --wrap 'sleep 2')
until_true 30 sh -c "squeue -h -r -j $id -o %r | grep -q JobArrayTaskLimit"
has "throttle %1: JobArrayTaskLimit" "$(squeue -h -r -j "$id" -o %r)" JobArrayTaskLimit
like "throttle %1: at most one task runs" "$(squeue -h -r -j "$id" -t R -o %i | wc -l)" '^[01]$'
eq "ArrayTaskThrottle shown" "$(jfield "${id}_3" ArrayTaskThrottle)" 1
scancel "$id"

run sbatch --array=5-1 --wrap true
eq "bad --array: exit 1" "$RC" 1
has "bad --array: words" "$ERR" "Invalid job array specification"
id=$(submit -H --array=0-2 -o /dev/null --wrap true)
eq "squeue folds pending tasks" "$(squeue -h -j "$id" -o %i)" "${id}_[0-2]"
eq "squeue -r lists tasks" "$(squeue -h -r -j "$id" -o %i | wc -l)" 3
until_true 30 sacct_field_is "$id" JobID "${id}_[0-2]"
eq "sacct folds pending tasks" "$(sacct -n -X -P -o JobID,State -j "$id")" "${id}_[0-2]|PENDING"
scancel "$id"
