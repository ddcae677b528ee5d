#!/usr/bin/env bash
# Start-up of a Slurm command, nothing else: `sbatch --version` of this
# build (bin/), of BEFORE=DIR's build when given (e.g. main's), of Slurm's
# own sbatch when installed (SLURM_SBATCH, default /usr/bin/sbatch; it
# needs no daemons for --version), and a static Go "hello world" (the
# floor of any Go binary here), alternated round by round in one sitting.
# Needs a C compiler for the timer (bench/spawntime.c); no daemons.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-300}
SLURM_SBATCH=${SLURM_SBATCH:-/usr/bin/sbatch}
command -v cc >/dev/null || { echo "start.sh: no C compiler for the timer; skipped"; exit 0; }
tmp=$(mktemp -d /tmp/drover-start.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/spawntime" bench/spawntime.c
mkdir "$tmp/hello"
printf 'package main\n\nimport "os"\n\nfunc main() { os.Stdout.WriteString("hello\\n") }\n' > "$tmp/hello/main.go"
printf 'module hello\n\ngo 1.22\n' > "$tmp/hello/go.mod"
(cd "$tmp/hello" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$tmp/go-hello" .)

labels=("drover (bin/)") args=("$PWD/bin/sbatch" --version)
if [[ -n ${BEFORE:-} ]]; then labels+=("drover (BEFORE)"); args+=(::: "$BEFORE/sbatch" --version); fi
# Slurm's sbatch, unless the name on PATH is ours.
if [[ -x $SLURM_SBATCH ]] && ! "$SLURM_SBATCH" --version | grep -q '^slurm 0\.'; then
	labels+=("Slurm ($SLURM_SBATCH)"); args+=(::: "$SLURM_SBATCH" --version)
fi
labels+=("Go hello world (static)"); args+=(::: "$tmp/go-hello")

echo "sbatch --version, $ROUNDS rounds each, alternated; load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-28s %12s %12s %12s %12s %10s\n' "" "wall med ms" "wall p10" "cpu med ms" "cpu p10" "faults"
timeout 600 "$tmp/spawntime" "$ROUNDS" "${args[@]}" | paste -d' ' <(printf '%s\n' "${labels[@]}") - |
	awk '{ n = NF; label = $1; for (i = 2; i <= n - 5; i++) label = label " " $i
		printf "%-28s %12s %12s %12s %12s %10s\n", label, $(n-4), $(n-3), $(n-2), $(n-1), $n }'
