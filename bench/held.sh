#!/usr/bin/env bash
# Held submissions (`sbatch -H --wrap=true`, sequential) into a growing queue
# on a real `drover up` cluster shaped like the Slurm peer's (one node, 64
# CPUs, 16000 MB): the rate per block of 2,000 and the controller's CPU for
# all of them (utime+stime from /proc). NHELD (default 10000) jobs;
# CTLD_PROFILE=FILE writes the controller's CPU profile there, CTLD_ALLOCS=FILE
# its allocation profile.
# Bounded: the submission loop stops after LIMIT seconds (default 300).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-$PWD/bin}    # the build to measure (a "before" build elsewhere)
export PATH="$BIN:$PATH"
NHELD=${NHELD:-10000}
LIMIT=${LIMIT:-300}
# Daemons of other suites would share the CPUs: hold the lock the e2e tests
# take (bounded wait), unless the caller already does (HELD_LOCKED=1).
if [ -z "${HELD_LOCKED:-}" ]; then
  exec 9>/tmp/drover-e2e.lock
  flock -w 1800 9 || { echo "held.sh: /tmp/drover-e2e.lock still taken after 30 min" >&2; exit 1; }
fi
dir=$(mktemp -d /tmp/drover-held.XXXXXX); chmod 755 "$dir"
if [ -n "${CTLD_PROFILE:-}" ]; then export DROVER_CTLD_CPUPROFILE=$CTLD_PROFILE; fi
if [ -n "${CTLD_ALLOCS:-}" ]; then export DROVER_CTLD_ALLOCPROFILE=$CTLD_ALLOCS; fi
drover up --dir "$dir" --nodes 1 --cpus 64 --memory 16000 --conf MinJobAge=30 > "$dir/up.out" 2>&1 9>&- &
up=$!
trap 'kill -TERM $up 2>/dev/null; wait $up 2>/dev/null || true; rm -rf "$dir"' EXIT
unset DROVER_CTLD_CPUPROFILE DROVER_CTLD_ALLOCPROFILE
export SLURM_CONF=$dir/slurm.conf
for _ in $(seq 300); do sinfo -h -o %t 2>/dev/null | grep -q idle && break; sleep 0.1; done
ctl=$(pgrep -f "drover controller -f $dir/slurm.conf" | head -1)
[ -n "$ctl" ] || { echo "held.sh: no controller came up (see $dir/up.out)" >&2; exit 1; }
hz=$(getconf CLK_TCK)
cpu() { awk -v hz="$hz" '{printf "%.2f", ($14+$15)/hz}' "/proc/$ctl/stat"; }
now() { date +%s.%N; }
c0=$(cpu); t0=$(now); n=0; fail=0; deadline=$(( $(date +%s) + LIMIT ))
while [ $n -lt "$NHELD" ]; do
  b0=$(now); bn=0
  while [ $bn -lt 2000 ] && [ $n -lt "$NHELD" ]; do
    sbatch -H -J held --wrap=true -o /dev/null > /dev/null 2>>"$dir/err" || fail=$((fail+1))
    n=$((n+1)); bn=$((bn+1))
  done
  awk -v a="$b0" -v b="$(now)" -v n="$bn" -v q="$((n-bn))" 'BEGIN{printf "held: %5.1f /s with %d queued\n", n/(b-a), q}'
  if [ "$(date +%s)" -gt "$deadline" ]; then echo "held.sh: stopped after $LIMIT s at $n jobs" >&2; break; fi
done
t1=$(now); c1=$(cpu)
awk -v a="$t0" -v b="$t1" -v n="$n" -v c="$(awk -v x="$c0" -v y="$c1" 'BEGIN{print y-x}')" -v f="$fail" \
  'BEGIN{printf "held: %d submissions in %.1f s = %.1f /s; controller CPU %.2f s (%.0f µs each); failed %d\n", n, b-a, n/(b-a), c, 1e6*c/n, f}'
