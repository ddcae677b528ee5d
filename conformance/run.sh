#!/bin/bash
# Runs the conformance suite against a target:
#   conformance/run.sh --target slurm    # the Slurm 22.05 peer (/usr/bin commands, running daemons)
#   conformance/run.sh --target drover   # Drover: SLURM_CONF of a running cluster, or starts
#                                        # `drover up` from $DROVER_BIN (default: bin/ of this checkout)
# Options: -k PATTERN runs only tests whose file name contains PATTERN; -v prints every check.
# Exit status 0 when every check passed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
target="" pattern="" verbose=0
while [ $# -gt 0 ]; do
	case "$1" in
	--target) target=$2; shift 2 ;;
	--target=*) target=${1#--target=}; shift ;;
	-k) pattern=$2; shift 2 ;;
	-v) verbose=1; shift ;;
	*) echo "usage: $0 --target slurm|drover [-k PATTERN] [-v]" >&2; exit 2 ;;
	esac
done
upPID="" upDir=""
case "$target" in
slurm)
	export PATH=/usr/bin:/bin:/usr/sbin:/sbin
	unset SLURM_CONF
	if ! scontrol ping >/dev/null 2>&1; then
		echo "run.sh: the Slurm peer does not answer (bash /work/shared/peer/slurm-setup.sh)" >&2
		exit 2
	fi
	;;
drover)
	bin=${DROVER_BIN:-$here/../bin}
	bin=$(cd "$bin" && pwd) || exit 2
	[ -x "$bin/drover" ] || { echo "run.sh: no $bin/drover (make build)" >&2; exit 2; }
	export PATH=$bin:$PATH
	if [ -z "${SLURM_CONF:-}" ]; then
		upDir=$(mktemp -d /tmp/conformance-up.XXXXXX)
		chmod 755 "$upDir"
		"$bin/drover" up --dir "$upDir" --nodes 1 --cpus 4 >"$upDir/up.log" 2>&1 &
		upPID=$!
		export SLURM_CONF=$upDir/slurm.conf
		trap 'kill -TERM $upPID 2>/dev/null; wait $upPID 2>/dev/null; rm -rf "$upDir"' EXIT
		for _ in $(seq 300); do
			[ "$(sinfo -h -N -o %t 2>/dev/null)" == "idle" ] && break
			sleep 0.2
		done
		[ "$(sinfo -h -N -o %t 2>/dev/null)" == "idle" ] || { echo "run.sh: drover up did not come up:" >&2; cat "$upDir/up.log" >&2; exit 2; }
	fi
	;;
*) echo "usage: $0 --target slurm|drover [-k PATTERN] [-v]" >&2; exit 2 ;;
esac

passed=0 failed=0 skipped=0
for t in "$here"/tests/*.sh; do
	name=$(basename "$t" .sh)
	[ -n "$pattern" ] && [[ "$name" != *"$pattern"* ]] && continue
	out=$(T=$name timeout 300 bash "$t" 2>&1)
	p=$(grep -c '^ok - ' <<<"$out")
	f=$(grep -c '^not ok - ' <<<"$out")
	s=$(grep -c '^skip - ' <<<"$out")
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	printf '%-28s %3d passed %3d failed\n' "$name" "$p" "$f"
	if [ "$verbose" == 1 ]; then
		grep -E '^(ok|not ok|skip) - ' <<<"$out" | sed 's/^/    /'
	else
		grep -E '^not ok - ' <<<"$out" | sed 's/^/    /'
	fi
done
echo "target=$target checks=$((passed + failed)) passed=$passed failed=$failed"
[ "$failed" == 0 ]
