# srun: labels, task environment, exit status, stdin (issue 17 item 5).
. "$(dirname "$0")/../lib.sh"

run srun -n2 -l sh -c 'echo rank $SLURM_PROCID'
eq "srun -n2 -l prefixes each task" "$(sort <<<"$OUT")" "$(printf '0: rank 0\n1: rank 1')"
eq "srun exit status 0" "$RC" 0
run srun -n1 sh -c 'exit 7'
eq "srun exits with the task's status" "$RC" 7
has "srun reports the failed task" "$ERR" "error:"
has "srun names the exit code" "$ERR" "Exited with exit code 7"
OUT=$(printf 'x\n' | srun -n2 -l cat 2>/dev/null | sort)
eq "stdin goes to every task by default" "$OUT" "$(printf '0: x\n1: x')"
OUT=$(printf 'y\n' | srun -n2 -l --input=1 cat 2>/dev/null | sort)
eq "--input=1 gives stdin to task 1 only" "$OUT" "1: y"
OUT=$(printf 'z\n' | srun -n1 --input=none cat 2>/dev/null)
eq "--input=none gives EOF" "$OUT" ""
run srun -n2 -o 'task-%t.out' sh -c 'echo $SLURM_PROCID'
eq "-o %t: task 0's file" "$(cat task-0.out 2>/dev/null)" 0
eq "-o %t: task 1's file" "$(cat task-1.out 2>/dev/null)" 1
run srun -n1 sh -c 'echo $SLURM_NTASKS $SLURM_STEP_ID $SLURM_LOCALID'
eq "task environment: ntasks, step, local id" "$OUT" "1 0 0"
run srun -J stepname -n1 sh -c 'echo $SLURM_JOB_NAME'
eq "srun -J names the job" "$OUT" stepname
run srun --bogus-flag true
eq "srun unknown option: exit 255" "$RC" 255
has "srun unknown option words" "$ERR" "unrecognized option"
