# Exit codes and states as scripts read them.
. "$(dirname "$0")/../lib.sh"

id=$(submit -o /dev/null --wrap 'kill -9 $$')
wait_final "$id"
eq "batch shell killed by a signal: FAILED" "$(jstate "$id")" FAILED
eq "its ExitCode shows the signal" "$(jfield "$id" ExitCode)" 0:9
id=$(submit -o /dev/null --wrap 'srun sh -c "exit 4"; exit 0')
wait_final "$id"
eq "step failure, batch exit 0: COMPLETED" "$(jstate "$id")" COMPLETED
wait_sacct "$id" COMPLETED
eq "DerivedExitCode takes the step's" "$(sacct -X -n -P -o DerivedExitCode -j "$id")" 4:0
eq "the step's row" "$(sacct -n -P -o JobID,State,ExitCode -j "$id.0")" "$id.0|FAILED|4:0"
run scontrol show job 999999999
eq "show of an unknown job: exit 1" "$RC" 1
has "show of an unknown job: words" "$ERR" "Invalid job id specified"
run sbatch -n 0 --wrap true
eq "-n 0: exit 1" "$RC" 1
has "-n 0: words" "$ERR" 'Invalid numeric value "0" for --ntasks.'
run sbatch --open-mode=x --wrap true
eq "bad --open-mode: exit 255" "$RC" 255
has "bad --open-mode: words" "$ERR" "Invalid --open-mode specification"
run sbatch --mem=999999999 --wrap true
eq "impossible memory: exit 1" "$RC" 1
has "impossible memory: words" "$ERR" "Requested node configuration is not available"
run srun -n1 false
eq "srun false: exit 1" "$RC" 1
