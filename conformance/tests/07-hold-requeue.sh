# Hold, release, requeue (issue 17 items 2 and 3).
. "$(dirname "$0")/../lib.sh"

id=$(submit -H -o /dev/null --wrap true)
eq "sbatch -H: JobHeldUser" "$(squeue -h -j "$id" -o %r)" JobHeldUser
eq "held job priority 0" "$(jfield "$id" Priority)" 0
run scontrol release "$id"
eq "release: exit 0" "$RC" 0
wait_state "$id" COMPLETED
eq "released job runs" "$(jstate "$id")" COMPLETED

id=$(submit --begin=now+1hour -o /dev/null --wrap true)
eq "scontrol hold: pending" "$(squeue -h -j "$id" -o %T)" PENDING
scontrol hold "$id"
eq "hold by root: JobHeldAdmin" "$(squeue -h -j "$id" -o %r)" JobHeldAdmin
run scontrol hold "$id.0"
eq "hold of a step id: exit 1" "$RC" 1
scontrol release "$id"
scancel "$id"

run sbatch --parsable --no-requeue -o /dev/null --wrap 'sleep 300'
fixed=${OUT%%;*}
wait_state "$fixed" RUNNING
run scontrol requeue "$fixed"
eq "requeue of --no-requeue: exit 1" "$RC" 1
has "requeue of --no-requeue: words" "$ERR" "Requested operation is presently disabled for job $fixed"
eq "it keeps running" "$(jstate "$fixed")" RUNNING
eq "Requeue=0 shown" "$(jfield "$fixed" Requeue)" 0
scancel "$fixed"

id=$(submit -o rq.out --wrap 'echo run; sleep 300')
wait_state "$id" RUNNING
run scontrol requeue "$id"
eq "requeue: exit 0" "$RC" 0
wait_state "$id" PENDING 30
eq "requeued job waits: BeginTime" "$(squeue -h -j "$id" -o %r)" BeginTime
eq "Restarts=1" "$(jfield "$id" Restarts)" 1
until_true 30 sh -c "sacct -D -X -n -P -o State -j $id | tr '\n' ' ' | grep -q 'REQUEUED PENDING'"
eq "sacct -D: a REQUEUED row, then the current one" "$(sacct -D -X -n -P -o JobID,State -j "$id")" "$(printf '%s|REQUEUED\n%s|PENDING' "$id" "$id")"
eq "sacct without -D: the current run only" "$(sacct -X -n -P -o JobID,State -j "$id")" "$id|PENDING"
like "REQUEUED row has its own start and end" "$(sacct -D -X -n -P -o Start,End -j "$id" | head -1)" '^[0-9-]+T[0-9:]+\|[0-9-]+T[0-9:]+$'
run scontrol update JobId="$id" StartTime=now
eq "update StartTime=now: exit 0" "$RC" 0
wait_state "$id" RUNNING 30
eq "it runs again" "$(jstate "$id")" RUNNING
scancel "$id"

id=$(submit -o /dev/null --wrap 'sleep 300')
wait_state "$id" RUNNING
scontrol requeuehold "$id"
wait_state "$id" PENDING 30
eq "requeuehold: held" "$(squeue -h -j "$id" -o %r)" "job requeued in held state"
scancel "$id"
