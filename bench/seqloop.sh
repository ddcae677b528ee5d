#!/usr/bin/env bash
# The Slurm peer bench's "seq" phase (../shared/peer/bench.sh): N sequential
# `sbatch -J b_seq --wrap=true -o /dev/null`, each followed by that script's
# awk and $(now) subshell, then wait until all completed; drain = N / (first
# submission -> queue empty). Each run gets a fresh `drover up` shaped like
# the peer's (one node, 64 CPUs, 16000 MB, MinJobAge=30).
# With BEFORE=DIR (another build's bin/, e.g. main's) the two builds are
# run in turn, ROUNDS times each, in one hold of /tmp/drover-e2e.lock.
# Per run: submission and drain rates, and CPU per job of the controller,
# the agent, the node's supervisor and the jobs it ran (what it reaped),
# the whole machine and the loop's own processes (sbatch, awk, subshells:
# what the loop reaped).
# HELD=1: bench.sh's "held" loop instead (`sbatch -H -J b_held`, the same
# awk and subshell after each): nothing runs, so no drain; the figures are
# the submission rate and CPU per submission.
#   N=1000 ROUNDS=3 BEFORE=/tmp/main/bin bash bench/seqloop.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-1000}
ROUNDS=${ROUNDS:-1}
BIN=$(cd "${BIN:-$PWD/bin}" && pwd)
exec 9>/tmp/drover-e2e.lock
flock -w "${LOCK_WAIT:-1800}" 9 || { echo "seqloop.sh: /tmp/drover-e2e.lock still taken" >&2; exit 1; }

one() { # one LABEL BINDIR
  local label=$1 bin=$2 d up
  d=$(mktemp -d /tmp/drover-seqloop.XXXXXX); chmod 755 "$d"
  "$bin/drover" up --dir "$d" --nodes 1 --cpus 64 --memory 16000 --conf MinJobAge=30 > "$d/up.out" 2>&1 9>&- &
  up=$!
  local rc=0
  (
    export SLURM_CONF=$d/slurm.conf PATH=$bin:$PATH
    for _ in $(seq 300); do sinfo -h -o %t 2>/dev/null | grep -q idle && break; sleep 0.2; done
    ctl=$(pgrep -f "drover controller -f $d/slurm.conf" | head -1)
    agt=$(pgrep -f "drover agent -f $d/slurm.conf" | head -1)
    [ -n "$ctl" ] && [ -n "$agt" ] || { echo "seqloop.sh: no cluster (see $d/up.out)" >&2; exit 1; }
    cd /tmp
    now() { echo "$EPOCHREALTIME"; }
    cput() { awk '{print $14+$15}' "/proc/$1/stat"; }
    busy() { awk '/^cpu /{print $2+$3+$4+$7+$8}' /proc/stat; }
    me=$BASHPID
    kids() { awk '{print $16+$17}' "/proc/$me/stat"; }
    for _ in $(seq 20); do sbatch -J warm --wrap=true -o /dev/null > /dev/null; done # page cache, first segment
    while [ -n "$(squeue -h -o %i | head -1)" ]; do sleep 0.1; done
    sup=$(pgrep -f "__supervise $d/" | head -1) # started by the first job
    [ -n "$sup" ] || { echo "seqloop.sh: no supervisor" >&2; exit 1; }
    reaped() { awk '{print $16+$17}' "/proc/$1/stat"; }
    c0=$(cput "$ctl"); a0=$(cput "$agt"); m0=$(busy); k0=$(kids); s0=$(cput "$sup"); j0=$(reaped "$sup")
    t0=$(now); dl=$(awk -v n="$t0" 'BEGIN{printf "%.6f", n+300}'); n=0; fail=0
    while [ $n -lt "$N" ]; do
      sbatch $held -J $name --wrap=true -o /dev/null > /dev/null 2>> "$d/sbatch.err" || fail=$((fail+1))
      n=$((n+1))
      awk -v n="$(now)" -v d="$dl" 'BEGIN{exit !(n>d)}' && break
    done
    t1=$(now); k1=$(kids)
    while [ -z "$held" ] && [ -n "$(squeue -h -n b_seq -o %i | head -1)" ]; do
      awk -v n="$(now)" -v d="$dl" 'BEGIN{exit !(n>d)}' && { echo "seqloop.sh: not drained in 300 s" >&2; exit 1; }
      sleep 0.5
    done
    t2=$(now)
    awk -v l="$label" -v n=$n -v f=$fail -v t0="$t0" -v t1="$t1" -v t2="$t2" -v hz="$(getconf CLK_TCK)" \
      -v c=$(( $(cput "$ctl") - c0 )) -v a=$(( $(cput "$agt") - a0 )) -v m=$(( $(busy) - m0 )) -v k=$((k1 - k0)) \
      -v s=$(( $(cput "$sup") - s0 )) -v j=$(( $(reaped "$sup") - j0 )) \
      -v ld="$(cut -d' ' -f1 /proc/loadavg)" -v held="$held" 'BEGIN{
      drained = held == "" ? sprintf(", drained %.1f jobs/s", n/(t2-t0)) : ""
      printf "%-8s %d jobs (failed sbatch %d): submitted %.1f/s (%.2f ms each)%s | CPU ms per job: controller %.2f, agent %.2f, supervisor %.2f, jobs %.2f, machine %.2f, loop %.2f | load %s\n",
        l, n, f, n/(t1-t0), 1000*(t1-t0)/n, drained, 1000*c/hz/n, 1000*a/hz/n, 1000*s/hz/n, 1000*j/hz/n, 1000*m/hz/n, 1000*k/hz/n, ld}'
  ) || rc=$?
  kill -TERM "$up" 2>/dev/null || true
  wait "$up" 2>/dev/null || true
  rm -rf "$d"
  return $rc
}

held= name=b_seq
[ -n "${HELD:-}" ] && held=-H name=b_held
echo "seqloop: N=$N, ROUNDS=$ROUNDS${held:+, held}, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$ROUNDS"); do
  [ -n "${BEFORE:-}" ] && one before "$(cd "$BEFORE" && pwd)"
  one after "$BIN"
done
