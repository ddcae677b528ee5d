#!/bin/bash
# bench/sidebyside.sh: Slurm 22.05 and this checkout's Drover in one sitting (issue 16), one system at a
# time: the Slurm peer's bench.sh, per-command timings with both clusters up and idle (cmdtime.py),
# then the same bench.sh against `drover up`, bench/start.sh and bench/e2e.sh. Needs the Slurm peer's
# scripts (PEER, default ../shared/peer beside the checkout) and root; holds /tmp/drover-e2e.lock.
# Output under OUT (default /tmp/sidebyside). Takes ~10 minutes here.
set -uo pipefail
CO=$(cd "$(dirname "$0")/.." && pwd)
P=${PEER:-$(cd "$CO/../shared/peer" 2>/dev/null && pwd)}
[ -f "$P/bench.sh" ] || { echo "sidebyside.sh: no Slurm peer scripts at '$P' (set PEER)"; exit 1; }
OUT=${OUT:-/tmp/sidebyside}; rm -rf "$OUT"; mkdir -p "$OUT"
exec 9>/tmp/drover-e2e.lock; flock -w 1800 9 || { echo "sidebyside.sh: /tmp/drover-e2e.lock still held after 30 min"; exit 1; }
echo "start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
cd "$CO" && make build >/dev/null
# --- Slurm
bash $P/slurm-setup.sh 9>&- > "$OUT"/slurm-setup.log 2>&1 || { echo "slurm setup failed"; tail "$OUT"/slurm-setup.log; }
QUIET_WAIT=45 PEER_RESULTS="$OUT"/slurm bash $P/bench.sh 9>&- > "$OUT"/slurm-bench.txt 2>&1
echo "slurm bench done $(date -u +%T)"
SJ=$(sbatch -H --parsable --wrap=true)
D=$(mktemp -d /tmp/drover-sbs.XXXXXX); chmod 755 $D
$CO/bin/drover up --dir $D --nodes 1 --cpus 64 --memory 16000 --conf MinJobAge=30 9>&- > $D/up.out 2>&1 &
UP=$!
for _ in $(seq 300); do SLURM_CONF=$D/slurm.conf $CO/bin/sinfo -h -o %t 2>/dev/null | grep -q idle && break; sleep 0.2; done
DJ=$(SLURM_CONF=$D/slurm.conf $CO/bin/sbatch -H --parsable --wrap=true)
echo "cmdtime load $(cut -d' ' -f1-3 /proc/loadavg) $(date -u +%T)" | tee "$OUT"/cmdtime.txt
{
printf "slurm sbatch --version\t\t/usr/bin/sbatch --version\n"
printf "drover sbatch --version\tSLURM_CONF=$D/slurm.conf\t$CO/bin/sbatch --version\n"
printf "slurm sinfo\t\t/usr/bin/sinfo\n"
printf "drover sinfo\tSLURM_CONF=$D/slurm.conf\t$CO/bin/sinfo\n"
printf "slurm squeue -j\t\t/usr/bin/squeue -j $SJ\n"
printf "drover squeue -j\tSLURM_CONF=$D/slurm.conf\t$CO/bin/squeue -j $DJ\n"
printf "slurm scontrol show job\t\t/usr/bin/scontrol show job $SJ\n"
printf "drover scontrol show job\tSLURM_CONF=$D/slurm.conf\t$CO/bin/scontrol show job $DJ\n"
printf "slurm sbatch -H\t\t/usr/bin/sbatch -H -o /dev/null --wrap=true\n"
printf "drover sbatch -H\tSLURM_CONF=$D/slurm.conf\t$CO/bin/sbatch -H -o /dev/null --wrap=true\n"
} | python3 "$CO/bench/cmdtime.py" 150 >> "$OUT"/cmdtime.txt 2>&1
echo "cmdtime done load $(cut -d' ' -f1-3 /proc/loadavg) $(date -u +%T)" | tee -a "$OUT"/cmdtime.txt
kill -TERM $UP; wait $UP
scancel -u root 2>/dev/null; sleep 1
bash $P/slurm-stop.sh > "$OUT"/slurm-stop.log 2>&1
rm -rf $D
# --- Drover, the same bench.sh
QUIET_WAIT=45 PEER_RESULTS="$OUT"/drover bash $P/drover-bench.sh "$CO" 9>&- > "$OUT"/drover-bench.txt 2>&1
echo "drover bench done $(date -u +%T)"
cd "$CO" && ROUNDS=300 bash bench/start.sh > "$OUT"/start.txt 2>&1
E2E_LOCK_HELD=1 N=2000 N_STEPS=100 bash bench/e2e.sh 9>&- > "$OUT"/e2e.txt 2>&1
echo "e2e done $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
