#!/usr/bin/env bash
# Step launch benchmarks (issue 3) against a real three-node `drover up`:
#   - `srun -n1 true` inside an existing allocation, per step (median)
#   - `srun -N3 -n48 hostname`, until its output is complete (median)
# Prints the figures and writes bench/out/steps.json. Not a test.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/bin:$PATH"
N_STEPS=${N_STEPS:-200}
N_WIDE=${N_WIDE:-20}
mkdir -p bench/out

dir=$(mktemp -d /tmp/drover-bench-steps.XXXXXX); chmod 755 "$dir"
drover up --dir "$dir" --nodes 3 --cpus 16 --memory 8192 > "$dir/up.out" 2>&1 &
up=$!
trap 'kill -TERM $up 2>/dev/null; wait $up 2>/dev/null || true; rm -rf "$dir"' EXIT
export SLURM_CONF=$dir/slurm.conf
for _ in $(seq 300); do [ "$(sinfo -h -o %t 2>/dev/null)" = idle ] && break; sleep 0.1; done
cd "$dir"

cat > "$dir/inside.sh" <<'INNER'
#!/usr/bin/env bash
set -eu
median() { sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
srun -n1 -N1 true # warm the page cache
for _ in $(seq "$N_STEPS"); do
  t0=$EPOCHREALTIME; srun -n1 -N1 true; t1=$EPOCHREALTIME
  awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f\n", (b-a)*1000}'
done | median > "$OUT/one.ms"
for _ in $(seq "$N_WIDE"); do
  t0=$EPOCHREALTIME; n=$(srun -N3 -n48 hostname | wc -l); t1=$EPOCHREALTIME
  [ "$n" = 48 ] || { echo "srun -n48 gave $n lines" >&2; exit 1; }
  awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f\n", (b-a)*1000}'
done | median > "$OUT/wide.ms"
INNER
chmod +x "$dir/inside.sh"
OUT=$dir N_STEPS=$N_STEPS N_WIDE=$N_WIDE salloc -Q -N3 -n48 "$dir/inside.sh" 2>/dev/null
one=$(cat "$dir/one.ms"); wide=$(cat "$dir/wide.ms")
echo "srun -n1 true inside an allocation: $one ms per step (median of $N_STEPS)"
echo "srun -N3 -n48 hostname: $wide ms to complete output (median of $N_WIDE)"
cat > "$OLDPWD/bench/out/steps.json" <<JSON
{"srun_step_median_ms": $one, "srun_N3_n48_hostname_median_ms": $wide}
JSON
echo "results: bench/out/steps.json"
