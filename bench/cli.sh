#!/usr/bin/env bash
# The Slurm commands' own cost, as a user or a pipeline sees it: whole
# processes of `sbatch --version` (start-up only), `sinfo`,
# `scontrol show job N`, `squeue -j N`, `squeue` over N_PEND pending
# jobs and `sinfo` over gRPC (as for a controller on another machine),
# against a real `drover up`. Each figure is the median of N_RUNS
# runs, wall and CPU (user+sys of the command), after 3 warm-up runs.
#
# BEFORE=DIR also runs the commands of another build (DIR/drover-cli and
# its symlinks, e.g. main's) against the same cluster, interleaved run by
# run, so both columns come from one sitting. Not a test: it only measures.
set -euo pipefail
cd "$(dirname "$0")/.."
AFTER=${AFTER:-$PWD/bin}
N_RUNS=${N_RUNS:-200}
N_PEND=${N_PEND:-1000}
export PATH="$AFTER:$PATH"

dir=$(mktemp -d /tmp/drover-clibench.XXXXXX); chmod 755 "$dir"
drover up --dir "$dir" --nodes 1 --cpus 4 --memory 8192 \
  --conf "PartitionName=hold Nodes=ALL State=DOWN" > "$dir/up.out" 2>&1 &
up=$!
trap 'kill -TERM $up 2>/dev/null; wait $up 2>/dev/null || true; rm -rf "$dir"' EXIT
export SLURM_CONF=$dir/slurm.conf
for _ in $(seq 300); do sinfo -h -o %t 2>/dev/null | grep -q idle && break; sleep 0.1; done
sinfo -h -o %t | grep -q idle || { echo "cli.sh: the cluster did not come up in 30 s"; cat "$dir/up.out"; exit 1; }
cd "$dir"
job=$(sbatch --parsable -p hold -J one --wrap=true)
seq "$N_PEND" | xargs -P 4 -n 100 sh -c 'for i; do sbatch -Q -p hold -J pend -o /dev/null --wrap=true; done' _

python3 - "$N_RUNS" "$AFTER" "${BEFORE:-}" "$job" <<'PY'
import os, statistics, sys, time
runs, after, before, job = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
cmds = [["sbatch", "--version"], ["sinfo"], ["scontrol", "show", "job", job], ["squeue", "-j", job], ["squeue"],
        ["DROVER_TRANSPORT=grpc", "sinfo"]]
builds = [("after", after)] + ([("before", before)] if before else [])
null = os.open(os.devnull, os.O_WRONLY)

def once(path, args, env):
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.dup2(null, 1); os.dup2(null, 2)
        os.execve(path, args, env)
    _, status, ru = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"cli.sh: {' '.join(args)} failed ({path})")
    return (time.perf_counter() - t0) * 1e3, (ru.ru_utime + ru.ru_stime) * 1e3

print(f"{'command':34s}" + "".join(f"{n+' wall ms':>16s}{n+' cpu ms':>15s}" for n, _ in builds))
for args in cmds:
    # A leading VAR=value sets the command's environment: the gRPC row is
    # what a command for a controller on another machine costs (this
    # build hands it to drover; main's spoke gRPC itself).
    env = dict(os.environ)
    label = " ".join(args).replace(job, "N")
    while "=" in args[0]:
        k, v = args[0].split("=", 1)
        env[k], args = v, args[1:]
    res = {n: ([], []) for n, _ in builds}
    for i in range(runs + 3):
        for n, d in builds:  # interleaved: the machine's drift hits both alike
            w, c = once(os.path.join(d, args[0]), args, env)
            if i >= 3:
                res[n][0].append(w); res[n][1].append(c)
    print(f"{label:34s}" + "".join(f"{statistics.median(res[n][0]):16.2f}{statistics.median(res[n][1]):15.2f}" for n, _ in builds), flush=True)
PY
