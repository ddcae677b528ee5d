#!/usr/bin/env bash
# What grows with the queue on the held-submission path (issue 16: held
# submissions flat from 0 to 100,000 queued; controller CPU per submission
# at most Slurm's at 10,000 and at 100,000).
#
# Each run is a fresh `drover up` shaped like the peer bench's (one node,
# 64 CPUs, 16000 MB, MinJobAge=30; MaxJobCount raised for 100,000). It runs
# ../shared/peer/bench.sh's held loop (`sbatch -H -J b_held --wrap=true
# -o /dev/null`, then that script's awk and $(now) subshell) in blocks of
# 2,000 from 0 to SEQN queued, then fills the queue with bench/scalefill
# (4 workers submitting as sbatch does) to each of MARKS less 2,000, waits
# until the controller is quiet, and runs NBM more blocks there.
#
# Per block: the rate; the median and 90th percentile of one sbatch's wall
# time; the controller's CPU per submission (user+sys from /proc, the
# steadier figure on a shared machine); sdiag's SubmitJob mean over the
# block (the answer latency inside the controller, its commit on disk
# included; sdiag is read outside the CPU window, since it walks the
# jobs); the controller's context switches per submission and its RSS.
# PERF=DIR records the controller with perf per block (DIR/LABEL-TAG.data;
# needs an unstripped drover in the build; bench/perfcat.py sorts the
# samples into subsystems).
#
# BIN=DIR is the build (default bin/); BEFORE=DIR another build (main's,
# built into /tmp), run alternately with BIN, ROUNDS times each. Each run
# holds /tmp/drover-e2e.lock (LOCK_WAIT seconds at most) and stops every
# process it started; every wait is bounded and a miss says what failed.
#   SEQN=10000 MARKS="50000 100000" NBM=2 BEFORE=/tmp/main/bin ROUNDS=2 bash bench/heldflat.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(cd "${BIN:-$PWD/bin}" && pwd)
SEQN=${SEQN:-10000}
MARKS=${MARKS:-50000 100000}
NBM=${NBM:-1}
ROUNDS=${ROUNDS:-1}
B=2000
fill=$(mktemp /tmp/drover-heldflat-fill.XXXXXX)
trap 'rm -f "$fill"' EXIT
timeout 300 go build -o "$fill" ./bench/scalefill || { echo "heldflat: building bench/scalefill failed" >&2; exit 1; }

one() { # one LABEL BINDIR: one cluster, every block
  local label=$1 bin=$2 d up ctl q=0 hz
  exec 9>/tmp/drover-e2e.lock
  flock -w "${LOCK_WAIT:-1800}" 9 || { echo "heldflat: /tmp/drover-e2e.lock still taken" >&2; return 1; }
  d=$(mktemp -d /tmp/drover-heldflat.XXXXXX); chmod 755 "$d"
  setsid "$bin/drover" up --dir "$d" --nodes 1 --cpus 64 --memory 16000 --conf MinJobAge=30 \
    --conf MaxJobCount=250000 > "$d/up.out" 2>&1 9>&- &
  up=$!
  local rc=0
  (
    export SLURM_CONF=$d/slurm.conf PATH=$bin:$PATH
    for _ in $(seq 300); do timeout 10 sinfo -h -o %t 2>/dev/null | grep -q idle && break; sleep 0.2; done
    ctl=$(pgrep -f "drover controller -f $d/slurm.conf" | head -1)
    [ -n "$ctl" ] || { echo "heldflat: no controller 60 s after drover up (see $d/up.out)" >&2; exit 1; }
    cd /tmp
    hz=$(getconf CLK_TCK)
    now() { echo "$EPOCHREALTIME"; }
    cpu() { awk '{print $14, $15}' "/proc/$ctl/stat"; }
    cs() { cat /proc/"$ctl"/task/*/status 2>/dev/null | awk '/^(non)?voluntary_ctxt/{n+=$2} END{print n+0}'; }
    rss() { awk '/VmRSS/{print int($2/1024)}' "/proc/$ctl/status"; }
    sd() { timeout 30 sdiag 2>/dev/null | awk '$1=="SubmitJob" && !done {for(i=2;i<=NF;i++){
      if($i ~ /^count:/) c=substr($i,7); if($i ~ /^total_time:/) t=substr($i,12)}; done=1} END{print c+0, t+0}'; }
    for _ in $(seq 20); do timeout 30 sbatch -J warm --wrap=true -o /dev/null > /dev/null; done # page cache, first segment
    for _ in $(seq 600); do [ -z "$(timeout 30 squeue -h -o %i | head -1)" ] && break; sleep 0.1; done
    block() { # block TAG: B submissions in bench.sh's held loop
      local tag=$1 pf="" n=0 f=0 lat=$d/lat.$1 sd0 c0 x0 t0 t1 c1 x1 sd1 dl a
      if [ -n "${PERF:-}" ]; then
        mkdir -p "$PERF"
        perf record -q -F 499 -g -p "$ctl" -o "$PERF/$label-$tag.data" > /dev/null 2>&1 &
        pf=$!
      fi
      : > "$lat"
      sd0=$(sd); c0=$(cpu); x0=$(cs); t0=$(now)
      dl=$(awk -v n="$t0" 'BEGIN{printf "%.6f", n+600}')
      while [ $n -lt $B ]; do
        a=$EPOCHREALTIME
        timeout 30 sbatch -H -J b_held --wrap=true -o /dev/null > /dev/null 2>> "$d/sbatch.err" || f=$((f+1))
        echo "$a $EPOCHREALTIME" >> "$lat"
        n=$((n+1))
        awk -v n="$(now)" -v d="$dl" 'BEGIN{exit !(n>d)}' && { echo "heldflat: block $tag stopped after 600 s" >&2; break; }
      done
      t1=$(now); c1=$(cpu); x1=$(cs); sd1=$(sd)
      if [ -n "$pf" ]; then kill -INT "$pf"; timeout 60 tail --pid="$pf" -f /dev/null || true; fi
      [ "$f" -eq 0 ] || { echo "heldflat: $f sbatch failed: $(head -1 "$d/sbatch.err")" >&2; exit 1; }
      awk '{print 1000*($2-$1)}' "$lat" | sort -n > "$lat.ms"
      awk -v l="$label" -v q=$q -v n=$n -v t0="$t0" -v t1="$t1" -v hz="$hz" -v c0="$c0" -v c1="$c1" \
        -v x=$((x1 - x0)) -v sd0="$sd0" -v sd1="$sd1" -v rss="$(rss)" -v ld="$(cut -d' ' -f1 /proc/loadavg)" \
        -v med="$(awk '{v[NR]=$1} END{print v[int(NR/2)+1]}' "$lat.ms")" \
        -v p90="$(awk '{v[NR]=$1} END{print v[int(NR*0.9)+1]}' "$lat.ms")" 'BEGIN{
        split(c0, a, " "); split(c1, b, " "); u = (b[1]-a[1])/hz; s = (b[2]-a[2])/hz
        split(sd0, p, " "); split(sd1, r, " "); sdm = r[1] > p[1] ? (r[2]-p[2])/(r[1]-p[1]) : -1
        printf "%-6s %6d queued: %6.1f /s, sbatch median %.2f ms (p90 %.2f), controller CPU %4.0f us each (user %3.0f, sys %3.0f), SubmitJob %4.0f us, %4.1f ctx switches each, RSS %d MiB, load %s\n",
          l, q, n/(t1-t0), med, p90, 1e6*(u+s)/n, 1e6*u/n, 1e6*s/n, sdm, x/n, rss, ld}'
      q=$((q + n))
    }
    while [ $q -lt "$SEQN" ]; do block "s$q"; done
    for m in $MARKS; do
      k=$((m - B - q))
      if [ $k -gt 0 ]; then
        timeout 960 "$fill" -n $k -p 4 -block 1000000 -limit 900s -- -H -J fill -o /dev/null --wrap=true > /dev/null ||
          { echo "heldflat: the fill to $((m - B)) failed" >&2; exit 1; }
        q=$((q + k))
        # Quiet: under 10% of a CPU over half a second (the fill's accounting
        # writes and snapshot done), at most 120 s.
        for _ in $(seq 240); do
          c0=$(cpu); sleep 0.5; c1=$(cpu)
          awk -v a="$c0" -v b="$c1" -v hz="$hz" 'BEGIN{split(a,x," "); split(b,y," "); exit !((y[1]+y[2]-x[1]-x[2])/hz < 0.05)}' && break
        done
      fi
      for r in $(seq "$NBM"); do block "m$m.$r"; done
    done
  ) || rc=$?
  kill -TERM "$up" 2>/dev/null || true
  for _ in $(seq 300); do kill -0 "$up" 2>/dev/null || break; sleep 0.1; done
  kill -KILL -- "-$up" 2>/dev/null || true
  wait "$up" 2>/dev/null || true
  rm -rf "$d"
  exec 9>&-
  return $rc
}

echo "heldflat: SEQN=$SEQN MARKS=\"$MARKS\" NBM=$NBM ROUNDS=$ROUNDS, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
  [ -n "${BEFORE:-}" ] && one "before$r" "$(cd "$BEFORE" && pwd)"
  one "after$r" "$BIN"
done
