#!/bin/bash
# soak.sh -- the hardening soak of issue 12: several users' jobs (plain, arrays,
# wide steps over every node, failing, timing out, cancelled) submitted without
# pause while agents and the controller are killed with SIGKILL (`drover up`
# starts them again) and the state directory's filesystem is filled and freed.
# At the end every accepted job must be in accounting exactly once, in a final
# state: none lost, none duplicated, none left running.
#
#   bash bench/soak.sh              # 30 minutes (SOAK_SECS=1800)
#   SOAK_SECS=600 bash bench/soak.sh
#
# Knobs: SOAK_SECS, SOAK_NODES (3), SOAK_USERS ("drovertest1 drovertest2 drovere2e",
# created when missing), SOAK_AGENT_KILL (every 45 s), SOAK_CTL_KILL (every 240 s).
# Needs root (users, tmpfs). Prints a summary and exits 1 on any lost, duplicated
# or unfinished job. Every wait is bounded and says what it waited for.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECS=${SOAK_SECS:-1800}
NODES=${SOAK_NODES:-3}
USERS=${SOAK_USERS:-"drovertest1 drovertest2 drovere2e"}
AGENT_KILL=${SOAK_AGENT_KILL:-45}
CTL_KILL=${SOAK_CTL_KILL:-240}

log() { echo "[soak $(date +%T)] $*"; }
die() { log "FAIL: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (test users, tmpfs)"
make -C "$ROOT" build >/dev/null || die "build failed"
BIN=$ROOT/bin
export PATH=$BIN:$PATH

D=$(mktemp -d /tmp/drover-soak.XXXXXX)
chmod 755 "$D"
mkdir -p "$D/state"
TMPFS=0
if mount -t tmpfs -o size=512m tmpfs "$D/state" 2>/dev/null; then TMPFS=1; fi
export SLURM_CONF=$D/slurm.conf
UP_PID=
cleanup() {
	[ -n "$UP_PID" ] && kill "$UP_PID" 2>/dev/null && wait "$UP_PID" 2>/dev/null
	[ "$TMPFS" = 1 ] && umount "$D/state" 2>/dev/null
	rm -rf "$D"
}
trap cleanup EXIT

for u in $USERS; do id "$u" >/dev/null 2>&1 || useradd -m -s /bin/bash "$u" || die "useradd $u"; done

# Nodes soak1..N: cgroups are named after nodes, so the soak can run beside
# the e2e tests (their nodes are node1..N) without touching their jobs.
"$BIN/drover" up --dir "$D" --nodes "$NODES" --node-prefix soak --cpus 2 --conf SlurmdTimeout=10 --conf KillWait=2 \
	--conf MinJobAge=3600 --conf MaxJobCount=200000 --conf DroverMinFreeSpace=64M >"$D/up.out" 2>&1 &
UP_PID=$!
for i in $(seq 1 300); do
	sinfo -h >/dev/null 2>&1 && break
	sleep 0.2
done
sinfo -h >/dev/null 2>&1 || die "cluster did not come up in 60 s (see $D/up.out)"
log "cluster up in $D ($NODES nodes, state on tmpfs: $TMPFS); soaking for $SECS s"

SUBMITTED=$D/submitted   # one expected sacct JobID per line
REFUSED=$D/refused
: >"$SUBMITTED"; : >"$REFUSED"
END=$(( $(date +%s) + SECS ))

# submit one job as a random user; record what sacct must show for it.
submit_one() {
	local users=($USERS) u kind args id
	u=${users[RANDOM % ${#users[@]}]}
	kind=$((RANDOM % 10))
	case $kind in
	0|1|2) args=(--wrap "sleep 0.$((RANDOM % 9))") ;;
	3)     args=(--array=0-9%4 --wrap "sleep 0.$((RANDOM % 9))") ;;
	4|5)   args=(-N "$NODES" -n $((NODES * 2)) --wrap "srun -N $NODES -n $((NODES * 2)) hostname >/dev/null") ;;
	6)     args=(--wrap "exit 3") ;;
	7)     args=(-t 0:02 --wrap "sleep 30") ;;
	*)     args=(--wrap "sleep 60") ;;
	esac
	id=$(su "$u" -s /bin/bash -c "cd; SLURM_CONF=$SLURM_CONF PATH=$PATH timeout 60 sbatch --parsable -o /dev/null $(printf '%q ' "${args[@]}")" 2>>"$REFUSED")
	if [ -z "$id" ]; then
		echo "refused: $u ${args[*]}" >>"$REFUSED"
		return
	fi
	if [ "$kind" = 3 ]; then
		for t in $(seq 0 9); do echo "${id}_$t"; done >>"$SUBMITTED"
	else
		echo "$id" >>"$SUBMITTED"
	fi
	if [ "$kind" -ge 8 ]; then
		timeout 30 scancel "$id" 2>/dev/null || true
	fi
}

chaos() {
	local next_agent=$(( $(date +%s) + AGENT_KILL )) next_ctl=$(( $(date +%s) + CTL_KILL ))
	local fill_at=$(( $(date +%s) + SECS / 3 )) filled=0 now pid node
	while [ "$(date +%s)" -lt "$END" ]; do
		now=$(date +%s)
		if [ "$now" -ge "$next_agent" ]; then
			node=soak$(( RANDOM % NODES + 1 ))
			pid=$(pgrep -f "drover agent -f $SLURM_CONF --name $node " | head -1)
			[ -n "$pid" ] && kill -9 "$pid" && log "killed agent $node ($pid)"
			next_agent=$(( now + AGENT_KILL ))
		fi
		if [ "$now" -ge "$next_ctl" ]; then
			pid=$(pgrep -f "drover controller -f $SLURM_CONF" | head -1)
			[ -n "$pid" ] && kill -9 "$pid" && log "killed the controller ($pid)"
			next_ctl=$(( now + CTL_KILL ))
		fi
		if [ "$TMPFS" = 1 ] && [ "$filled" = 0 ] && [ "$now" -ge "$fill_at" ]; then
			dd if=/dev/zero of="$D/state/filler" bs=1M 2>/dev/null
			log "state filesystem full ($(df -h "$D/state" | awk 'NR==2{print $4}') left); freeing in 20 s"
			sleep 20
			rm -f "$D/state/filler"
			log "state filesystem freed"
			filled=1
		fi
		sleep 1
	done
}

chaos &
CHAOS=$!
n=0
while [ "$(date +%s)" -lt "$END" ]; do
	submit_one
	n=$((n + 1))
	[ $((n % 100)) = 0 ] && log "$n submissions, $(wc -l <"$SUBMITTED") jobs accepted"
	sleep 0.1
done
wait "$CHAOS"
log "submitting stopped: $(wc -l <"$SUBMITTED") jobs accepted, $(grep -c '^refused' "$REFUSED") submissions refused"

# Drain: every job must reach a final state.
# (An squeue that failed — the controller restarting — says nothing.)
for i in $(seq 1 600); do
	if out=$(squeue -h -t PD,R,CG,S -o %i 2>/dev/null); then
		[ -z "$out" ] && break
	fi
	sleep 1
done
left=$(squeue -h -o '%i %T %r' 2>/dev/null)
[ -n "$left" ] && log "still in the queue after 10 minutes:" && echo "$left" | head -20

# Accounting: once each, final. Records reach the database after the
# controller's state (the accounting writer batches, and replays its outbox
# after a restart): give the last ends up to two minutes to arrive.
for i in $(seq 1 120); do
	if sacct -a -X -n -P -S 2000-01-01 -o JobID,State >"$D/sacct" 2>/dev/null &&
		! grep -q -E '\|(PENDING|RUNNING|SUSPENDED|REQUEUED)' "$D/sacct"; then
		break
	fi
	sleep 1
done
sort "$SUBMITTED" >"$D/want"
cut -d'|' -f1 "$D/sacct" | sort >"$D/got"
missing=$(comm -23 "$D/want" <(sort -u "$D/got") | wc -l)
dups=$(uniq -d "$D/got" | wc -l)
extra=$(comm -13 "$D/want" <(sort -u "$D/got") | wc -l)
unfinished=$(grep -c -E '\|(PENDING|RUNNING|SUSPENDED|REQUEUED)' "$D/sacct")
log "accepted $(wc -l <"$D/want"), in accounting $(wc -l <"$D/got"); missing $missing, duplicated $dups, unknown $extra, unfinished $unfinished"
log "final states: $(cut -d'|' -f2 "$D/sacct" | awk '{print $1}' | sort | uniq -c | tr '\n' ' ')"
log "restarts said by drover up: $(grep -c 'restarting in' "$D/up.out")"
if [ "$missing" != 0 ] || [ "$dups" != 0 ] || [ "$unfinished" != 0 ] || [ -n "$left" ]; then
	comm -23 "$D/want" <(sort -u "$D/got") | head -5 | sed 's/^/  missing: /'
	uniq -d "$D/got" | head -5 | sed 's/^/  duplicated: /'
	grep -E '\|(PENDING|RUNNING|SUSPENDED|REQUEUED)' "$D/sacct" | head -5 | sed 's/^/  unfinished: /'
	die "jobs lost, duplicated or unfinished"
fi
log "PASS: every accepted job accounted for exactly once"
