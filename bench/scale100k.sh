#!/usr/bin/env bash
# 100,000 pending jobs on a real `drover up` cluster (issue 16): squeue
# (default format), the controller's peak memory (VmHWM), a controller
# restart (SIGKILL; Raft snapshot + log replay, until squeue lists every
# job) and whether held submissions stay as fast at 100,000 queued as at 0.
#
# Two fills, each on a fresh cluster:
#  - separate: N separate held jobs (`sbatch -H --wrap=true`): SEQ sequential
#    sbatch commands into the empty queue, N-2*SEQ from bench/scalefill (P
#    workers submitting exactly as sbatch does, one connection each, so the
#    fill is not bound by starting 100,000 processes), then SEQ sequential
#    sbatch commands again at ~N queued.
#  - array: N/10,000 held arrays of 10,000 tasks. Slurm keeps a pending
#    array as one record until its tasks start, so this is 10 jobs in
#    Slurm's terms; Drover holds one record per task (sharing one spec).
#
# Bounded: the lock wait, the fill, every command and every wait have
# limits; a miss prints what failed and the script exits non-zero. Holds
# /tmp/drover-e2e.lock while daemons run and stops every process it
# started. PHASES="separate array" picks the fills; CTLD_PROFILE=FILE
# writes the (first) controller's CPU profile; CTLD_PERF=DIR records the
# controller with perf during the first and the last sequential block
# (DIR/first.data, DIR/last.data: what grows with the queue; needs an
# unstripped drover in BIN, and perf adds a few % to the CPU figures).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-$PWD/bin}     # the build to measure (a "before" build elsewhere)
export PATH="$BIN:$PATH"
N=${N:-100000}
P=${P:-4}
SEQ=${SEQ:-2000}
LIMIT=${LIMIT:-900}          # seconds for the parallel fill
PHASES=${PHASES:-separate array}
LOCK_WAIT=${LOCK_WAIT:-1200}

fail() { echo "scale100k: FAILED: $*" >&2; exit 1; }
now() { date +%s.%N; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.0f", 1000*(b-a)}'; }
hz=$(getconf CLK_TCK)

[ -x "$BIN/drover" ] && [ -x "$BIN/sbatch" ] || fail "$BIN/drover missing: run make build first"
fill=$(mktemp /tmp/drover-scalefill.XXXXXX)
timeout 300 go build -o "$fill" ./bench/scalefill || fail "building bench/scalefill"

# LOCK_HELD=1: the caller holds the lock (a before/after pair in one sitting:
# flock /tmp/drover-e2e.lock sh -c 'LOCK_HELD=1 BIN=... bench/scale100k.sh; ...').
if [ -z "${LOCK_HELD:-}" ]; then
  exec 9>/tmp/drover-e2e.lock
  flock -w "$LOCK_WAIT" 9 || fail "/tmp/drover-e2e.lock still held after $LOCK_WAIT s"
fi

up="" dir=""
stop_cluster() {
  if [ -n "$up" ] && kill -0 "$up" 2>/dev/null; then
    kill -TERM "$up" 2>/dev/null || true
    for _ in $(seq 300); do kill -0 "$up" 2>/dev/null || break; sleep 0.1; done
    # drover up was started in its own process group: whatever it left
    # behind after 30 s goes with it.
    kill -KILL -- "-$up" 2>/dev/null || true
    wait "$up" 2>/dev/null || true
  fi
  up=""
  [ -n "$dir" ] && rm -rf "$dir"
  dir=""
}
trap 'stop_cluster; rm -f "$fill"' EXIT

ctl_pid() { pgrep -f "drover controller -f $dir/slurm.conf" | head -1; }
ctl_cpu() { awk -v hz="$hz" '{printf "%.2f", ($14+$15)/hz}' "/proc/$1/stat"; }
ctl_mem() { awk '/VmHWM/{h=$2} /VmRSS/{r=$2} END{printf "peak %d MiB, now %d MiB", h/1024, r/1024}' "/proc/$1/status"; }

start_cluster() {
  dir=$(mktemp -d /tmp/drover-scale.XXXXXX); chmod 755 "$dir"
  if [ -n "${CTLD_PROFILE:-}" ]; then export DROVER_CTLD_CPUPROFILE=$CTLD_PROFILE; fi
  setsid drover up --dir "$dir" --nodes 1 --cpus 64 --memory 16000 \
    --conf MaxJobCount=$((2 * N)) --conf MaxArraySize=10001 > "$dir/up.out" 2>&1 &
  up=$!
  unset DROVER_CTLD_CPUPROFILE
  export SLURM_CONF=$dir/slurm.conf
  for _ in $(seq 600); do timeout 10 sinfo -h -o %t 2>/dev/null | grep -q idle && break; sleep 0.1; done
  timeout 10 sinfo -h -o %t 2>/dev/null | grep -q idle || fail "no idle node 60 s after drover up (see $dir/up.out)"
  ctl=$(ctl_pid)
  [ -n "$ctl" ] || fail "no controller process"
}

# settle: wait (at most 120 s) until the controller is quiet — under 10%
# of a CPU over half a second — so that a measurement does not share the
# CPU with its accounting writes of the jobs just submitted; prints the wait.
settle() {
  local t0 c0 c1 end
  t0=$(now); end=$(( $(date +%s) + 120 ))
  while [ "$(date +%s)" -lt "$end" ]; do
    c0=$(ctl_cpu "$ctl"); sleep 0.5; c1=$(ctl_cpu "$ctl")
    awk -v a="$c0" -v b="$c1" 'BEGIN{exit !(b-a < 0.05)}' && break
  done
  echo "controller quiet after $(ms "$t0" "$(now)") ms"
}

# count_jobs: every job record squeue lists (array tasks one per line).
count_jobs() { timeout 60 squeue -h -r -o %i 2>/dev/null | wc -l; }

# seq_held COUNT NAME: sequential `sbatch -H` commands; prints the rate and the
# controller's CPU per submission meanwhile (steadier on a shared machine).
seq_held() {
  local b0 f=0 c0 c1 perf=""
  if [ -n "${CTLD_PERF:-}" ]; then
    mkdir -p "$CTLD_PERF"
    perf record -q -F 499 -g -p "$ctl" -o "$CTLD_PERF/$2.data" > /dev/null 2>&1 &
    perf=$!
  fi
  b0=$(now); c0=$(ctl_cpu "$ctl")
  for _ in $(seq "$1"); do
    timeout 30 sbatch -H -J scale -o /dev/null --wrap=true > /dev/null 2>>"$dir/sbatch.err" || f=$((f+1))
  done
  c1=$(ctl_cpu "$ctl")
  if [ -n "$perf" ]; then kill -INT "$perf"; timeout 60 tail --pid="$perf" -f /dev/null || true; fi
  [ "$f" -eq 0 ] || fail "$f of $1 sequential sbatch -H failed: $(head -1 "$dir/sbatch.err")"
  awk -v a="$b0" -v b="$(now)" -v n="$1" -v c="$(awk -v x="$c0" -v y="$c1" 'BEGIN{print y-x}')" \
    'BEGIN{printf "%.1f /s, controller CPU %.0f µs each", n/(b-a), 1e6*c/n}'
}

# squeue_best ARGS: squeue with ARGS five times; the best wall time (ms),
# with that run's own CPU (user+sys) and the controller's CPU meanwhile
# (the machine is shared: CPU is the steadier figure).
squeue_best() {
  local best=999999 d c0 c1 cpu ctlcpu tf
  tf=$(mktemp)
  for _ in 1 2 3 4 5; do
    c0=$(ctl_cpu "$ctl")
    timeout 60 /usr/bin/time -f "%e %U %S" -o "$tf" squeue "$@" > /dev/null || fail "squeue $* failed"
    c1=$(ctl_cpu "$ctl")
    d=$(awk '{printf "%.0f", 1000*$1}' "$tf")
    if [ "$d" -lt "$best" ]; then
      best=$d
      cpu=$(awk '{printf "%.0f", 1000*($2+$3)}' "$tf")
      ctlcpu=$(awk -v a="$c0" -v b="$c1" 'BEGIN{printf "%.0f", 1000*(b-a)}')
    fi
  done
  rm -f "$tf"
  echo "$best ms wall (best of 5; squeue CPU $cpu ms, controller CPU $ctlcpu ms)"
}

# restart OLD_PID JOBS: SIGKILL the controller; `drover up` starts it again
# after its 1 s back-off. Measured from the kill until squeue lists every
# job, less that second. (The new process's start time in /proc does not
# match the wall clock on every machine: this one's differ by 40 minutes.)
restart() {
  local old=$1 want=$2 new="" t0 t2 got=0
  t0=$(now)
  kill -KILL "$old"
  for _ in $(seq 6000); do
    new=$(ctl_pid); [ -n "$new" ] && [ "$new" != "$old" ] && break; new=""; sleep 0.01
  done
  [ -n "$new" ] || fail "no new controller 60 s after SIGKILL (see $dir/up.out)"
  local limit=$(( $(date +%s) + 120 ))
  while [ "$(date +%s)" -lt "$limit" ]; do
    got=$(count_jobs); [ "$got" -ge "$want" ] && break; sleep 0.01
  done
  t2=$(now)
  [ "$got" -ge "$want" ] || fail "120 s after the restart squeue lists $got jobs, want $want"
  echo "$(( $(ms "$t0" "$t2") - 1000 )) ms ($got jobs listed; controller $(ctl_mem "$new"))"
  # The controller's own account (raftnode logs it once the log is applied).
  grep -o 'raft state loaded.*' "$dir/log/controller.log" | tail -1 || true
}

for phase in $PHASES; do
  start_cluster
  case $phase in
  separate)
    c0=$(ctl_cpu "$ctl")
    r0=$(seq_held "$SEQ" first)
    echo "separate: sequential sbatch -H, first $SEQ (0 queued): $r0"
    timeout $((LIMIT + 60)) "$fill" -n $((N - 2 * SEQ)) -p "$P" -block 2000 -limit "${LIMIT}s" \
      -- -H -J scale -o /dev/null --wrap=true || fail "parallel fill (see above)"
    # The fill leaves work behind (its accounting writes, a snapshot):
    # the first block started on a quiet controller, so does this one.
    echo "separate: after the fill, $(settle)"
    r1=$(seq_held "$SEQ" last)
    c1=$(ctl_cpu "$ctl")
    echo "separate: sequential sbatch -H, last $SEQ ($((N - SEQ)) queued): $r1" \
      "(rate $(awk -v a="${r0%% *}" -v b="${r1%% *}" 'BEGIN{printf "%+.1f%%", 100*(b-a)/a}'))"
    echo "separate: controller CPU for $N submissions: $(awk -v a="$c0" -v b="$c1" -v n="$N" 'BEGIN{printf "%.1f s (%.0f µs each)", b-a, 1e6*(b-a)/n}')"
    got=$(count_jobs); [ "$got" -eq "$N" ] || fail "squeue lists $got jobs, want $N"
    echo "separate: $(settle)"
    sq=$(squeue_best)
    echo "separate: squeue (default format) over $N pending: $sq"
    echo "separate: controller memory with $N jobs: $(ctl_mem "$ctl")"
    rs=$(restart "$ctl" "$N")
    echo "separate: restart: $rs"
    ;;
  array)
    t0=$(now)
    for _ in $(seq $((N / 10000))); do
      timeout 60 sbatch -H -J scalearr -o /dev/null --array=0-9999 --wrap=true > /dev/null || fail "sbatch --array=0-9999 failed"
    done
    echo "array: $((N / 10000)) arrays of 10,000 held tasks submitted in $(ms "$t0" "$(now)") ms"
    got=$(count_jobs); [ "$got" -eq "$N" ] || fail "squeue -r lists $got tasks, want $N"
    echo "array: $(settle)"
    sq=$(squeue_best)
    echo "array: squeue (default format, one line per array) over $N tasks: $sq"
    sq=$(squeue_best -r)
    echo "array: squeue -r (one line per task): $sq"
    echo "array: controller memory with $N tasks: $(ctl_mem "$ctl")"
    rs=$(restart "$ctl" "$N")
    echo "array: restart: $rs"
    ;;
  *) fail "unknown phase $phase" ;;
  esac
  stop_cluster
done
