#!/usr/bin/env bash
# sacct over 100,000 finished jobs of one month in the embedded SQLite
# database: fill the database, start a cluster on it, time the queries.
# Prints figures only (targets in bench/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/bin:$PATH"
N=${N_ACCT:-100000}
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
dir=$(mktemp -d /tmp/drover-bench-acct.XXXXXX); chmod 755 "$dir"
mkdir -p "$dir/state"
go run ./bench/acctfill -db "$dir/state/accounting.db" -n "$N" -month 2026-10
drover up --dir "$dir" --nodes 1 > "$dir/up.out" 2>&1 &
up=$!
trap 'kill -TERM $up 2>/dev/null; wait $up 2>/dev/null || true; rm -rf "$dir"' EXIT
export SLURM_CONF=$dir/slurm.conf
for _ in $(seq 300); do sinfo -h -o %t 2>/dev/null | grep -q idle && break; sleep 0.1; done
best() { # best of 5 wall times of a command, in ms; the row count as well
  local b=999999 rows=0
  for _ in 1 2 3 4 5; do
    t0=$(now_ms); rows=$("$@" | wc -l); t1=$(now_ms)
    b=$(( t1-t0 < b ? t1-t0 : b ))
  done
  echo "$b ms ($rows lines)"
}
echo "sacct -X -P over $N jobs of one month: $(best sacct -X -P -a -S 2026-10-01 -E 2026-10-31T23:59:59)"
echo "sacct -P (with steps) over $N jobs: $(best sacct -P -a -S 2026-10-01 -E 2026-10-31T23:59:59)"
echo "sacct -j one job: $(best sacct -P -j 50000)"
