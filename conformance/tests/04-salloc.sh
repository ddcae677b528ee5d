# salloc: allocation messages, steps inside, exit status.
. "$(dirname "$0")/../lib.sh"

run salloc -n1 sh -c 'echo $SLURM_JOB_ID'
eq "salloc exit status" "$RC" 0
like "command sees SLURM_JOB_ID" "$OUT" '^[0-9]+$'
has "Granted job allocation" "$ERR" "salloc: Granted job allocation $OUT"
has "Relinquishing" "$ERR" "salloc: Relinquishing job allocation $OUT"
run salloc -n2 srun -l true
eq "srun inside salloc" "$RC" 0
run salloc -n1 sh -c 'exit 3'
eq "salloc exits with the command's status" "$RC" 3
run salloc -n2 sh -c 'srun -n2 hostname | wc -l'
eq "srun in the allocation runs its tasks" "$(tr -d ' ' <<<"$OUT")" 2
