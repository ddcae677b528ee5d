# EnforcePartLimits=NO, Slurm's default (issue 17 item 6).
. "$(dirname "$0")/../lib.sh"

eq "EnforcePartLimits shown" "$(scontrol show config | grep '^EnforcePartLimits ')" "EnforcePartLimits       = NO"
nodes=$(sinfo -h -p "$PART" -o %D)
run sbatch --parsable -N $((nodes + 1)) -o /dev/null --wrap true
eq "more nodes than the partition has: accepted" "$RC" 0
id=${OUT%%;*}
wait_reason "$id" PartitionNodeLimit
eq "it waits: PartitionNodeLimit" "$(squeue -h -j "$id" -o %r)" PartitionNodeLimit
scancel "$id"
