#!/bin/bash
# test/gpu/check.sh — Drover on a machine with real NVIDIA GPUs (make gpucheck).
#
# `drover up` must find the GPUs through NVML with no gres.conf written by
# hand; an unprivileged user's job must get the GPUs it asked for and be
# refused every other one, whatever it sets CUDA_VISIBLE_DEVICES to; a job
# asking for more GPUs than are free must wait. Prints PASS/FAIL per check
# and exits 1 on any FAIL; on a machine without nvidia-smi it says SKIP and
# exits 0 (CI has no GPU). Every wait is bounded.
#
# BIN: the directory holding drover and drover-cli (default ./bin).
set -u
BIN=$(cd "${BIN:-bin}" && pwd)
fails=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no NVIDIA GPU here (nvidia-smi -L fails)"
	exit 0
fi
echo "== machine"
nvidia-smi -L
NG=$(nvidia-smi -L | grep -c '^GPU ')
uname -r
echo "cgroup fs: $(stat -fc %T /sys/fs/cgroup 2>/dev/null)"
ls -l /dev/nvidia* 2>/dev/null | head

U=drovergpu
id "$U" >/dev/null 2>&1 || useradd -m "$U" || { echo "FAIL: cannot create user $U"; exit 1; }
D=$(mktemp -d /tmp/drover-gpu.XXXXXX)
chmod 755 "$D"
"$BIN/drover" up --dir "$D" --cpus 4 --memory 8000 --node-prefix g >"$D/up.out" 2>&1 &
UP=$!
cleanup() {
	[ $fails = 0 ] || tail -n 40 "$D"/log/*.log
	kill -TERM "$UP" 2>/dev/null
	for _ in $(seq 100); do kill -0 "$UP" 2>/dev/null || break; sleep 0.2; done
	kill -KILL "$UP" 2>/dev/null
}
trap cleanup EXIT
export SLURM_CONF=$D/slurm.conf
export PATH=$BIN:$PATH
up=0
for _ in $(seq 150); do
	if sinfo -h -o %t 2>/dev/null | grep -q idle; then up=1; break; fi
	sleep 0.2
done
echo "== drover up"
cat "$D/up.out"
echo "-- slurm.conf (node lines)"; grep -E '^(GresTypes|NodeName)' "$D/slurm.conf"
echo "-- gres.conf"; cat "$D/gres.conf" 2>/dev/null
[ $up = 1 ] || { fail "the node did not come up idle within 30 s"; tail -30 "$D"/log/*.log; exit 1; }

# as runs a command line as the unprivileged user, bounded.
as() { timeout 90 runuser -u "$U" -- env PATH="$PATH" SLURM_CONF="$SLURM_CONF" HOME=/tmp bash -c "cd /tmp && $*" 2>&1; }
PY=$(command -v python3)

echo "== checks"
g=$(sinfo -h -o %G)
echo "sinfo %G: $g"
case "$g" in *gpu:*:"$NG"*) pass "sinfo shows the $NG GPU(s) NVML found ($g)" ;; *) fail "sinfo %G is '$g', want $NG GPUs" ;; esac

out=$(as srun --gres=gpu:1 nvidia-smi -L)
echo "$out"
n=$(grep -c '^GPU ' <<<"$out")
[ "$n" = 1 ] && pass "srun --gres=gpu:1 sees one GPU" || fail "srun --gres=gpu:1 sees $n GPUs"

out=$(as srun --gres=gpu:1 printenv CUDA_VISIBLE_DEVICES SLURM_JOB_GPUS)
echo "$out"
[ "$(head -1 <<<"$out")" = 0 ] && pass "CUDA_VISIBLE_DEVICES=0 in the job" || fail "CUDA_VISIBLE_DEVICES is '$out'"

out=$(as srun nvidia-smi -L)
echo "$out"
n=$(grep -c '^GPU ' <<<"$out")
[ "$n" = 0 ] && pass "a job without --gres sees no GPU in nvidia-smi" || fail "a job without --gres sees $n GPUs"

out=$(as srun "$PY" -c "\"open('/dev/nvidia0','rb'); print('opened')\"")
echo "$out"
grep -q 'Operation not permitted\|PermissionError' <<<"$out" && pass "a job without --gres cannot open /dev/nvidia0" || fail "a job without --gres opened /dev/nvidia0"

out=$(as srun --gres=gpu:1 "$PY" -c "\"open('/dev/nvidia0','rb'); print('opened')\"")
echo "$out"
grep -q opened <<<"$out" && pass "a job with --gres=gpu:1 opens /dev/nvidia0" || fail "a job with --gres=gpu:1 cannot open /dev/nvidia0"

if "$PY" -c 'import torch' 2>/dev/null; then
	out=$(as CUDA_VISIBLE_DEVICES=0 srun --export=ALL "$PY" -c "\"import torch; print('cuda', torch.cuda.is_available())\"")
	echo "$out"
	grep -q 'cuda False' <<<"$out" && pass "CUDA_VISIBLE_DEVICES=0 set by hand gives no CUDA without --gres" || fail "bypass: a job without --gres used CUDA ($out)"
	out=$(as srun --gres=gpu:1 "$PY" -c "\"import torch; x = torch.ones(1 << 20, device='cuda'); print('sum', int(x.sum().item()), torch.cuda.get_device_name(0))\"")
	echo "$out"
	grep -q 'sum 1048576' <<<"$out" && pass "a PyTorch kernel runs in a --gres=gpu:1 job" || fail "PyTorch in a --gres=gpu:1 job: $out"
else
	echo "(no torch here: CUDA checks skipped)"
fi

# A batch job holding every GPU; the next GPU job waits for it.
j1=$(as sbatch --parsable --gres=gpu:$NG -o /tmp/gpu-%j.out --wrap "\"nvidia-smi -L; sleep 60\"")
j2=$(as sbatch --parsable --gres=gpu:1 -o /tmp/gpu-%j.out --wrap "\"nvidia-smi -L\"")
echo "batch jobs: $j1 $j2"
if ! [[ $j1 =~ ^[0-9]+$ && $j2 =~ ^[0-9]+$ ]]; then
	fail "GPU batch jobs refused: $j1 $j2"
	echo "== $fails failure(s)"
	exit 1
fi
st=""
for _ in $(seq 100); do
	st=$(squeue -h -j "$j2" -o '%T %r')
	s1=$(squeue -h -j "$j1" -o %T)
	[ "$s1" = RUNNING ] && [ -n "$st" ] && break
	sleep 0.2
done
echo "j2: $st"
case "$st" in "PENDING Resources"*) pass "a GPU job waits (Resources) while every GPU is held" ;; *) fail "second GPU job is '$st' while the first holds every GPU" ;; esac
scancel "$j1"
for _ in $(seq 300); do
	[ -z "$(squeue -h -j "$j2" -o %T 2>/dev/null)" ] && break
	sleep 0.2
done
cat "/tmp/gpu-$j2.out" 2>/dev/null
[ "$(grep -c '^GPU ' "/tmp/gpu-$j2.out" 2>/dev/null)" = 1 ] && pass "the waiting job ran on its GPU once the first was cancelled" || fail "the waiting job's output: $(cat "/tmp/gpu-$j2.out" 2>/dev/null)"
acct=$(sacct -n -X -j "$j2" -o AllocTRES%80)
echo "sacct AllocTRES: $acct"
grep -q 'gres/gpu=1' <<<"$acct" && pass "sacct records gres/gpu=1" || fail "sacct AllocTRES: $acct"
scontrol show node | grep -E 'Gres|CfgTRES|AllocTRES'

echo "== $fails failure(s)"
[ $fails = 0 ]
