# Dependencies, including --kill-on-invalid-dep (issue 17 item 1).
. "$(dirname "$0")/../lib.sh"

ok1=$(submit -o /dev/null --wrap 'sleep 5')
after=$(submit -o /dev/null -d "afterok:$ok1" --wrap true)
wait_reason "$after" Dependency
eq "afterok waits with reason Dependency" "$(squeue -h -j "$after" -o %r)" Dependency
wait_state "$after" COMPLETED
eq "afterok runs after success" "$(jstate "$after")" COMPLETED

bad=$(submit -o /dev/null --wrap 'exit 1')
wait_final "$bad"
never=$(submit -o /dev/null -d "afterok:$bad" --wrap true)
wait_reason "$never" DependencyNeverSatisfied
eq "afterok on a failed job: DependencyNeverSatisfied" "$(squeue -h -j "$never" -o %r)" DependencyNeverSatisfied
eq "it stays pending" "$(squeue -h -j "$never" -o %T)" PENDING
like "scontrol shows the failed dependency" "$(jfield "$never" Dependency)" "^afterok:$bad"
scancel "$never"
killed=$(submit -o /dev/null -d "afterok:$bad" --kill-on-invalid-dep=yes --wrap true)
wait_state "$killed" CANCELLED 30
eq "--kill-on-invalid-dep=yes cancels it" "$(jstate "$killed")" CANCELLED
eq "its reason" "$(jfield "$killed" Reason)" DependencyNeverSatisfied
wait_sacct "$killed" CANCELLED
eq "sacct records it CANCELLED" "$(sacct -n -X -P -o State -j "$killed")" CANCELLED
any=$(submit -o /dev/null -d "afterany:$bad" --wrap true)
wait_state "$any" COMPLETED
eq "afterany runs after a failure" "$(jstate "$any")" COMPLETED
notok=$(submit -o /dev/null -d "afternotok:$bad" --wrap true)
wait_state "$notok" COMPLETED
eq "afternotok runs after a failure" "$(jstate "$notok")" COMPLETED

first=$(submit -J cf-single -o /dev/null --wrap 'sleep 3')
second=$(submit -J cf-single -o /dev/null -d singleton --wrap true)
wait_reason "$second" Dependency
eq "singleton waits for its namesake" "$(squeue -h -j "$second" -o %r)" Dependency
wait_state "$second" COMPLETED
eq "singleton then runs" "$(jstate "$second")" COMPLETED

run sbatch -d afterok:nonsense --wrap true
eq "bad dependency: exit 1" "$RC" 1
has "bad dependency: words" "$ERR" "Job dependency problem"
run sbatch --kill-on-invalid-dep=maybe --wrap true
eq "bad --kill-on-invalid-dep: exit 255" "$RC" 255
has "bad --kill-on-invalid-dep: words" "$ERR" "Invalid --kill-on-invalid-dep specification"
