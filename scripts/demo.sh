#!/usr/bin/env bash
# make demo: start a local cluster, run a few jobs, show the commands, stop.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/bin:$PATH"
dir=$(mktemp -d /tmp/drover-demo.XXXXXX)
chmod 755 "$dir"
echo "== drover up --dir $dir --nodes 2"
drover up --dir "$dir" --nodes 2 --conf KillWait=2 > "$dir/up.out" 2>&1 &
up=$!
trap 'kill -TERM $up 2>/dev/null; wait $up 2>/dev/null || true' EXIT
export SLURM_CONF=$dir/slurm.conf
for _ in $(seq 200); do sinfo -h >/dev/null 2>&1 && break; sleep 0.1; done
cat "$dir/up.out"
cd "$dir"
show() { echo; echo "\$ $*"; "$@" || true; }
show sinfo
show sbatch --array=1-6%3 -J demo-array -o 'array-%A_%a.out' --wrap 'echo "task $SLURM_ARRAY_TASK_ID on $SLURMD_NODENAME"; sleep 2'
show sbatch -J demo-fail -o fail-%j.out --wrap 'echo about to fail; exit 3'
show sbatch -J demo-timeout -t 0:03 -o timeout-%j.out --wrap 'echo start; sleep 60'
sleep 1
show squeue
show sinfo
for _ in $(seq 300); do [ -z "$(squeue -h)" ] && break; sleep 0.2; done
show squeue -t all -o '%.8i %.14j %.10T %.8r'
fail=$(squeue -h -t all -n demo-fail -o %i)
show scontrol show job "$fail"
echo
for f in array-*.out fail-*.out timeout-*.out; do echo "--- $f"; cat "$f"; done
show srun -N1 hostname
echo
echo "== stopping the cluster"
