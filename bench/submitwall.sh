#!/usr/bin/env bash
# Where the wall time of one sequential `sbatch -H --wrap=true` goes, on a
# `drover up` cluster like held.sh's: a command's process start alone
# (`sbatch --version`), the whole submission, and the controller's own time
# in the SubmitJob handler (sdiag's average: validation, the Raft commit and
# its fsync, the answer), each averaged over N (default 300) runs.
# Holds /tmp/drover-e2e.lock as held.sh does (HELD_LOCKED=1: the caller does).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-$PWD/bin}    # the build to measure (a "before" build elsewhere)
export PATH="$BIN:$PATH"
N=${N:-300}
if [ -z "${HELD_LOCKED:-}" ]; then
  exec 9>/tmp/drover-e2e.lock
  flock -w 1800 9 || { echo "submitwall.sh: /tmp/drover-e2e.lock still taken after 30 min" >&2; exit 1; }
fi
dir=$(mktemp -d /tmp/drover-wall.XXXXXX); chmod 755 "$dir"
drover up --dir "$dir" --nodes 1 --cpus 64 --memory 16000 --conf MinJobAge=30 > "$dir/up.out" 2>&1 9>&- &
up=$!
trap 'kill -TERM $up 2>/dev/null; wait $up 2>/dev/null || true; rm -rf "$dir"' EXIT
export SLURM_CONF=$dir/slurm.conf
for _ in $(seq 300); do sinfo -h -o %t 2>/dev/null | grep -q idle && break; sleep 0.1; done
sinfo -h -o %t 2>/dev/null | grep -q idle || { echo "submitwall.sh: no idle node (see $dir/up.out)" >&2; exit 1; }
now() { date +%s.%N; }
per() { awk -v a="$1" -v b="$2" -v n="$N" 'BEGIN{printf "%.2f ms", 1000*(b-a)/n}'; }
for _ in $(seq 50); do sbatch -H --wrap=true -o /dev/null > /dev/null; done # warm the page cache and the WAL
sdiag -r > /dev/null
t0=$(now); for _ in $(seq "$N"); do sbatch --version > /dev/null; done; t1=$(now)
for _ in $(seq "$N"); do sbatch -H --wrap=true -o /dev/null > /dev/null; done; t2=$(now)
echo "submitwall: sbatch --version $(per "$t0" "$t1"); sbatch -H --wrap=true $(per "$t1" "$t2")"
sdiag | awk '/SubmitJob/ {print "submitwall: controller SubmitJob handler: " $0}'
