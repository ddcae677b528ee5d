#!/usr/bin/env bash
# End-to-end benchmarks against a real `drover up` cluster on this machine.
# Prints each figure and writes bench/out/results.json. Not a test: no
# assertions, just measurements (see bench/README.md for targets).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/bin:$PATH"
N_SEQ=${N_SEQ:-300}        # sequential sbatch invocations
N_JOBS=${N_JOBS:-2000}     # trivial jobs end to end
N_PEND=${N_PEND:-10000}    # pending jobs for squeue / scancel / memory
CPUS=${CPUS:-64}           # job slots of the benchmark node (trivial jobs use 1 CPU)
mkdir -p bench/out
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

dir=$(mktemp -d /tmp/drover-bench.XXXXXX); chmod 755 "$dir"
drover up --dir "$dir" --nodes 1 --cpus "$CPUS" --memory 65536 \
  --conf "PartitionName=hold Nodes=ALL State=DOWN" --conf MinJobAge=300 > "$dir/up.out" 2>&1 &
up=$!
trap 'kill -TERM $up 2>/dev/null; wait $up 2>/dev/null || true; rm -rf "$dir"' EXIT
export SLURM_CONF=$dir/slurm.conf
for _ in $(seq 300); do sinfo -h -o %t 2>/dev/null | grep -q idle && break; sleep 0.1; done
cd "$dir"
ctl_pid=$(pgrep -f "drover controller -f $dir/slurm.conf" | head -1)

wait_empty() { while [ -n "$(squeue -h -p debug -o %i | head -1)" ]; do sleep 0.05; done; }

# 1. squeue over N_PEND pending jobs, on a fresh cluster (a DOWN partition keeps them pending)
seq "$N_PEND" | xargs -P 4 -n 100 sh -c 'for i; do sbatch -Q -p hold -J benchpend -o /dev/null --wrap=true; done' _
best=999999
for _ in 1 2 3 4 5; do
  t0=$(now_ms); squeue > /dev/null; t1=$(now_ms)
  best=$(( t1-t0 < best ? t1-t0 : best ))
done
echo "squeue over $N_PEND pending jobs: $best ms (best of 5)"
mem_kib=$(awk '/VmHWM/{print $2}' /proc/$ctl_pid/status)
echo "controller peak memory with $N_PEND jobs: $((mem_kib/1024)) MiB"

# 2. cancel them by name
t0=$(now_ms); scancel -n benchpend; t1=$(now_ms)
cancel_ms=$((t1-t0))
echo "scancel -n of $N_PEND jobs: $cancel_ms ms"

# 3. sequential sbatch invocations per second
t0=$(now_ms)
for _ in $(seq "$N_SEQ"); do sbatch -Q -o /dev/null --wrap=true; done
t1=$(now_ms)
seq_rate=$(awk -v n="$N_SEQ" -v ms=$((t1-t0)) 'BEGIN{printf "%.0f", n*1000/ms}')
echo "sbatch sequential: $seq_rate submissions/s ($N_SEQ in $((t1-t0)) ms)"
wait_empty

# 4. trivial jobs end to end, separate submissions (4 submitters) and one array
t0=$(now_ms)
seq "$N_JOBS" | xargs -P 4 -n 50 sh -c 'for i; do sbatch -Q -o /dev/null --wrap=true; done' _
wait_empty
t1=$(now_ms)
sep_rate=$(awk -v n="$N_JOBS" -v ms=$((t1-t0)) 'BEGIN{printf "%.0f", n*1000/ms}')
echo "trivial jobs, separate: $sep_rate jobs/s ($N_JOBS in $((t1-t0)) ms)"
t0=$(now_ms)
sbatch -Q -o /dev/null --array=1-"$N_JOBS" --wrap=true
wait_empty
t1=$(now_ms)
arr_rate=$(awk -v n="$N_JOBS" -v ms=$((t1-t0)) 'BEGIN{printf "%.0f", n*1000/ms}')
echo "trivial jobs, one array: $arr_rate jobs/s ($N_JOBS in $((t1-t0)) ms)"

cat > "$OLDPWD/bench/out/results.json" <<JSON
{"sbatch_sequential_per_s": $seq_rate, "trivial_jobs_separate_per_s": $sep_rate,
 "trivial_jobs_array_per_s": $arr_rate, "squeue_10k_pending_ms": $best,
 "scancel_by_name_10k_ms": $cancel_ms, "controller_peak_mib": $((mem_kib/1024))}
JSON
echo "results: bench/out/results.json"
