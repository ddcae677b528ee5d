#!/usr/bin/env bash
# Trivial jobs end to end through `drover up` with cgroups on (issue 16):
#   seq    N sequential `sbatch --wrap=true` (one process each, jobs running
#          meanwhile); drain rate = N / (first submission -> queue empty)
#   array  one `sbatch --array=0-(N-1) --wrap=true`; drain rate likewise
#   step   `srun -n1 true` inside `salloc -n1`, median of N_STEPS
# For each phase the CPU time of the controller, the agent and the node
# supervisor (utime+stime of the process and its reaped children, from
# /proc) and of the whole machine, per job. Shaped like the Slurm peer's
# bench (one node, 64 CPUs, 16000 MB, MinJobAge=30), so the figures sit
# beside ../shared/peer/bench.sh's.
#
#   BIN=/tmp/before/bin bash bench/e2e.sh    # another build (before/after)
#   PROFILE=/tmp/prof bash bench/e2e.sh      # CPU profiles: /tmp/prof.ctld,
#                                            # /tmp/prof.agent.PID, /tmp/prof.sup.PID
#   N=2000 N_STEPS=200 PHASES="seq array step" LIMIT=300 (seconds a phase may take)
#   E2E_LOCK_HELD=1: the caller holds /tmp/drover-e2e.lock (before/after runs in a row)
#   XCONF="K=V K2=V2": extra slurm.conf lines (experiments)
#   POLL=0.02: seconds between the squeue polls that wait for a drain (each
#   poll costs a process start and controller CPU, which a CPU-bound drain
#   on 2 cores feels; measured at 2000-task arrays, 0.1 s was not
#   faster than 0.02 s within the noise of a shared machine)
# Holds /tmp/drover-e2e.lock (daemons on a shared machine); bounded; stops
# its cluster on exit. Writes bench/out/e2e.json.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=$(cd "${BIN:-$ROOT/bin}" && pwd)
export PATH="$BIN:$PATH"
N=${N:-2000}
N_STEPS=${N_STEPS:-200}
PHASES=${PHASES:-"seq array step"}
LIMIT=${LIMIT:-300}
mkdir -p bench/out

if [ -z "${E2E_LOCK_HELD:-}" ]; then # set by a caller that holds the lock already (several runs in a row)
  exec 9>/tmp/drover-e2e.lock
  flock -w "${LOCK_WAIT:-3600}" 9 || { echo "e2e.sh: /tmp/drover-e2e.lock still held after ${LOCK_WAIT:-3600} s" >&2; exit 1; }
fi

dir=$(mktemp -d /tmp/drover-bench-e2e.XXXXXX); chmod 755 "$dir"
if [ -n "${PROFILE:-}" ]; then
  export DROVER_CTLD_CPUPROFILE=$PROFILE.ctld DROVER_AGENT_CPUPROFILE=$PROFILE.agent DROVER_SUPERVISOR_CPUPROFILE=$PROFILE.sup
fi
xconf=(); for c in ${XCONF:-}; do xconf+=(--conf "$c"); done
"$BIN/drover" up --dir "$dir" --nodes 1 --cpus 64 --memory 16000 --conf MinJobAge=30 "${xconf[@]}" > "$dir/up.out" 2>&1 &
up=$!
unset DROVER_CTLD_CPUPROFILE DROVER_AGENT_CPUPROFILE DROVER_SUPERVISOR_CPUPROFILE
cleanup() {
  kill -TERM $up 2>/dev/null || true
  # drover up stops its daemons; wait for it (bounded), then for the
  # supervisor it started, which leaves once its programs are gone.
  for _ in $(seq 200); do kill -0 $up 2>/dev/null || break; sleep 0.1; done
  kill -KILL $up 2>/dev/null || true
  wait $up 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
export SLURM_CONF=$dir/slurm.conf
for _ in $(seq 300); do sinfo -h -o %t 2>/dev/null | grep -q idle && break; sleep 0.1; done
ctl=$(pgrep -f "drover controller -f $dir/slurm.conf" | head -1)
agt=$(pgrep -f "drover agent -f $dir/slurm.conf" | head -1)
[ -n "$ctl" ] && [ -n "$agt" ] || { echo "e2e.sh: the cluster did not come up (see $dir/up.out)" >&2; cat "$dir/up.out" >&2; exit 1; }
cd "$dir"

hz=$(getconf CLK_TCK)
# utime+stime+cutime+cstime of one process, in ticks
ticks() { [ -n "$1" ] && awk '{print $14+$15+$16+$17}' "/proc/$1/stat" 2>/dev/null || echo 0; }
machine() { awk '/^cpu /{print $2+$3+$4+$7+$8}' /proc/stat; }
sup() { pgrep -f "__supervise.*$dir" | head -1 || true; }
now() { echo "$EPOCHREALTIME"; }
snap() { C0=$(ticks "$ctl"); A0=$(ticks "$agt"); S=$(sup); S0=$(ticks "$S"); M0=$(machine); }
cpu_line() { # cpu_line PHASE JOBS
  local c=$(( $(ticks "$ctl") - C0 )) a=$(( $(ticks "$agt") - A0 )) m=$(( $(machine) - M0 )) s=0
  [ -n "$S" ] && s=$(( $(ticks "$S") - S0 ))
  awk -v p="$1" -v n="$2" -v c=$c -v a=$a -v s=$s -v m=$m -v hz="$hz" 'BEGIN{
    printf "%s: CPU per job: controller %.2f ms, agent %.2f ms, supervisor+jobs %.2f ms, whole machine %.2f ms\n",
      p, 1000*c/hz/n, 1000*a/hz/n, 1000*s/hz/n, 1000*m/hz/n}'
}
wait_empty() { # wait_empty NAME: until no job of that name is queued or running (bounded by LIMIT)
  local dl=$(( $(date +%s) + LIMIT ))
  while [ -n "$(squeue -h -n "$1" -o %i 2>/dev/null | head -1)" ]; do
    [ "$(date +%s)" -lt $dl ] || { echo "e2e.sh: $1 not drained after $LIMIT s" >&2; return 1; }
    sleep "${POLL:-0.02}"
  done
}
rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN{printf "%.1f", n/(b-a)}'; }
json=()

if [[ " $PHASES " == *" seq "* ]]; then
  snap; t0=$(now); fail=0
  for _ in $(seq "$N"); do sbatch -J b_seq -o /dev/null --wrap=true > /dev/null || fail=$((fail+1)); done
  t1=$(now); wait_empty b_seq; t2=$(now)
  echo "seq: $N sequential sbatch --wrap=true: submitted at $(rate "$N" "$t0" "$t1") /s, drained at $(rate "$N" "$t0" "$t2") jobs/s (failed sbatch: $fail)"
  cpu_line seq "$N"
  json+=("\"seq_submit_per_s\": $(rate "$N" "$t0" "$t1"), \"seq_drain_per_s\": $(rate "$N" "$t0" "$t2")")
fi

if [[ " $PHASES " == *" array "* ]]; then
  snap; t0=$(now)
  sbatch -Q -J b_arr -o /dev/null --array=0-$((N-1)) --wrap=true
  wait_empty b_arr; t2=$(now)
  echo "array: one $N-task array drained at $(rate "$N" "$t0" "$t2") jobs/s"
  cpu_line array "$N"
  json+=("\"array_drain_per_s\": $(rate "$N" "$t0" "$t2")")
fi

if [[ " $PHASES " == *" step "* ]]; then
  cat > "$dir/inside.sh" <<'INNER'
#!/usr/bin/env bash
set -eu
srun -n1 true # warm the page cache
for _ in $(seq "$N_STEPS"); do
  t0=$EPOCHREALTIME; srun -n1 true; t1=$EPOCHREALTIME
  awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f\n", (b-a)*1000}'
done | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)], a[int(NR/10)+1], a[int(NR*9/10)]}' > "$OUT/step.ms"
INNER
  chmod +x "$dir/inside.sh"
  snap
  OUT=$dir N_STEPS=$N_STEPS timeout "$LIMIT" salloc -Q -n1 "$dir/inside.sh"
  read -r med p10 p90 < "$dir/step.ms"
  echo "step: srun -n1 true inside salloc -n1: median $med ms (p10 $p10, p90 $p90; $N_STEPS steps)"
  cpu_line step "$N_STEPS"
  json+=("\"srun_step_median_ms\": $med")
fi

(IFS=,; echo "{${json[*]}}") > "$ROOT/bench/out/e2e.json"
echo "results: bench/out/e2e.json"
