#!/usr/bin/env bash
# Suspend/resume benchmark (issue 14: under 50 ms for a job of 100
# processes). Two figures:
#   - the freezer alone: internal/cgroups BenchmarkSuspendResume100
#   - end to end on a real `drover up`: from `scontrol suspend` (resume)
#     starting to the kernel reporting the job's cgroup frozen (thawed),
#     median of N_SUSP rounds; includes the CLI, the Raft commit and the
#     controller-to-agent message.
# Needs root and cgroups. Prints the figures and writes
# bench/out/suspend.json. Not a test.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/bin:$PATH"
N_SUSP=${N_SUSP:-20}
mkdir -p bench/out

go test -run '^$' -bench BenchmarkSuspendResume100 -benchtime 50x ./internal/cgroups/ | tee bench/out/suspend-freezer.txt
freezer_susp=$(awk '/ms\/suspend/ {for(i=1;i<=NF;i++) if($(i)=="ms/suspend") print $(i-1)}' bench/out/suspend-freezer.txt)
freezer_res=$(awk '/ms\/resume/ {for(i=1;i<=NF;i++) if($(i)=="ms/resume") print $(i-1)}' bench/out/suspend-freezer.txt)

dir=$(mktemp -d /tmp/drover-bench-susp.XXXXXX); chmod 755 "$dir"
drover up --dir "$dir" --nodes 1 --cpus 4 --memory 4096 > "$dir/up.out" 2>&1 &
up=$!
trap 'scancel -u root >/dev/null 2>&1 || true; kill -TERM $up 2>/dev/null; wait $up 2>/dev/null || true; rm -rf "$dir"' EXIT
export SLURM_CONF=$dir/slurm.conf
for _ in $(seq 300); do [ "$(sinfo -h -o %t 2>/dev/null)" = idle ] && break; sleep 0.1; done
cd "$dir"
node=$(sinfo -h -o %n | head -1)
id=$(sbatch --parsable -o /dev/null --wrap 'for i in $(seq 100); do sleep 600 & done; wait')
for _ in $(seq 300); do [ "$(squeue -h -j "$id" -o %t)" = R ] && break; sleep 0.1; done
if [ -f "/sys/fs/cgroup/freezer/drover/$node/job_$id/freezer.state" ]; then
  frozen() { [ "$(cat "/sys/fs/cgroup/freezer/drover/$node/job_$id/freezer.state")" = FROZEN ]; }
elif [ -f "/sys/fs/cgroup/drover/$node/job_$id/cgroup.events" ]; then
  frozen() { grep -q '^frozen 1' "/sys/fs/cgroup/drover/$node/job_$id/cgroup.events"; }
else
  echo "no freezer for job $id: skipping the end-to-end figure"; exit 0
fi
for _ in $(seq 100); do [ "$(pgrep -c -f 'sleep 600')" -ge 100 ] && break; sleep 0.1; done
median() { sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
: > susp.ms; : > res.ms
for _ in $(seq "$N_SUSP"); do
  t0=$EPOCHREALTIME; scontrol suspend "$id"; until frozen; do :; done; t1=$EPOCHREALTIME
  scontrol resume "$id"; while frozen; do :; done; t2=$EPOCHREALTIME
  awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f\n", (b-a)*1000}' >> susp.ms
  awk -v a="$t1" -v b="$t2" 'BEGIN{printf "%.1f\n", (b-a)*1000}' >> res.ms
done
susp=$(median < susp.ms); res=$(median < res.ms)
scancel "$id"
cd - >/dev/null
echo "suspend/resume, 100 processes: freezer ${freezer_susp} / ${freezer_res} ms; end to end (scontrol to frozen/thawed, median of $N_SUSP) ${susp} / ${res} ms (target < 50 ms)"
printf '{"freezer_suspend_ms": %s, "freezer_resume_ms": %s, "e2e_suspend_ms": %s, "e2e_resume_ms": %s}\n' \
  "$freezer_susp" "$freezer_res" "$susp" "$res" > bench/out/suspend.json
