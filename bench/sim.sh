#!/usr/bin/env bash
# Scheduling quality on public traces (issue 13): `drover sim` replays each
# trace through internal/sched with a simulated clock. For each trace and
# policy: 10 sequences of 1,024 consecutive jobs whose start indices a seeded
# sampler picks (math/rand, seed SEED, uniform over [0, jobs-1024]), each on
# an empty machine, and their mean average bounded slowdown; then the whole
# trace. Prints the raw lines; bench/README.md has the table.
set -euo pipefail
cd "$(dirname "$0")/.."
TRACES=${TRACES:-/work/shared/traces}
SEED=${SEED:-1}
POLICIES=${POLICIES:-"fifo easy backfill"}
PRIORITY=${PRIORITY:-multifactor}   # the one shipped configuration: backfill + this priority
WHOLE=${WHOLE:-0}   # 1: also whole traces (fifo and easy only: conservative backfill takes minutes to hours)
go build -o bin/drover ./cmd/drover
for t in lublin_256.swf SDSC-SP2-1998-4.2-cln.swf.gz HPC2N-2002-2.2-cln.swf.gz; do
  for p in $POLICIES; do
    bin/drover sim --trace "$TRACES/$t" --policy "$p" --sequences 10 --length 1024 --seed "$SEED" | tail -1 | sed "s|^|$t $p |"
  done
  bin/drover sim --trace "$TRACES/$t" --policy backfill --priority "$PRIORITY" --sequences 10 --length 1024 --seed "$SEED" |
    tail -1 | sed "s|^|$t backfill+$PRIORITY |"
  if [ "$WHOLE" = 1 ]; then
    for p in fifo easy; do
      /usr/bin/time -f "$t $p wall=%es maxrss=%MKB" bin/drover sim --trace "$TRACES/$t" --policy "$p" | tail -1 | sed "s|^|$t $p |"
    done
  fi
done
# One scheduling pass over 50,000 pending jobs on 10,000 nodes (main pass, backfill as shipped).
go test ./internal/sched -run XXX -bench 'BenchmarkBackfill10kNodes50kJobs/(builtin|backfill_max)' -benchtime 1x | grep Benchmark
