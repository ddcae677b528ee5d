# scancel --signal reaches the steps only, unless --batch or --full
# (issue 17 item 4); cancelling pending and running jobs.
# Time limits are not covered: Slurm's granularity is a minute.
. "$(dirname "$0")/../lib.sh"

step='trap "echo step-got-usr1; exit 0" USR1; touch ready.$SLURM_JOB_ID; while :; do sleep 0.1; done'
id=$(submit -o def.out --wrap "srun -n1 bash -c '$step'; echo batch-survived")
until_true 60 test -f "ready.$id"
scancel --signal=USR1 "$id"
wait_final "$id"
eq "default: job completes" "$(jstate "$id")" COMPLETED
has "default: the step got it" "$(cat def.out)" step-got-usr1
has "default: the batch shell did not" "$(cat def.out)" batch-survived

id=$(submit -o batch.out --wrap "trap 'echo batch-got-usr1; exit 0' USR1; touch ready.\$SLURM_JOB_ID; while :; do sleep 0.1; done")
until_true 60 test -f "ready.$id"
scancel --batch --signal=USR1 "$id"
wait_final "$id"
has "--batch: the batch shell got it" "$(cat batch.out)" batch-got-usr1

id=$(submit -o full.out --wrap "trap 'echo batch-got-usr1' USR1; srun -n1 bash -c '$step' & wait; wait; echo done")
until_true 60 test -f "ready.$id"
scancel --full --signal=USR1 "$id"
wait_final "$id"
has "--full: the batch shell got it" "$(cat full.out)" batch-got-usr1
has "--full: the step got it" "$(cat full.out)" step-got-usr1

id=$(submit -H -o /dev/null --wrap true)
run scancel "$id"
eq "scancel pending: exit 0" "$RC" 0
wait_sacct "$id" CANCELLED
eq "cancelled pending job in sacct" "$(sacct -n -X -P -o State -j "$id")" "CANCELLED by 0"
id=$(submit -o /dev/null --wrap 'sleep 300')
wait_state "$id" RUNNING
scancel "$id"
wait_final "$id"
eq "cancelled running job" "$(jstate "$id")" CANCELLED
run scancel 99999999
eq "scancel of an unknown job: silent, exit 0" "$RC:$OUT$ERR" "0:"
