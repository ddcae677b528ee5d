# Helpers sourced by every conformance test. A test is a small user
# scenario; each expectation is one check printed as "ok - ..." or
# "not ok - ..." (run.sh counts them). Tests run as root in a fresh
# world-readable directory ($WORK) against whatever sbatch/squeue/... are
# first on PATH (the runner arranges Slurm's or Drover's).

T=${T:-$(basename "$0" .sh)}
WORK=$(mktemp -d /tmp/conformance.XXXXXX)
chmod 755 "$WORK"
cd "$WORK" || exit 2
trap 'cleanup_hook; cd /; rm -rf "$WORK"' EXIT
cleanup_hook() { :; }

ok() { echo "ok - $T: $1"; }
bad() { echo "not ok - $T: $1"; }

# eq DESC GOT WANT
eq() { if [ "$2" == "$3" ]; then ok "$1"; else bad "$1: got [$2] want [$3]"; fi; }
# has DESC TEXT WORDS: TEXT contains WORDS
has() { case "$2" in *"$3"*) ok "$1" ;; *) bad "$1: [$2] lacks [$3]" ;; esac; }
# hasnt DESC TEXT WORDS
hasnt() { case "$2" in *"$3"*) bad "$1: [$2] has [$3]" ;; *) ok "$1" ;; esac; }
# like DESC TEXT REGEX (bash ERE)
like() { if [[ "$2" =~ $3 ]]; then ok "$1"; else bad "$1: [$2] !~ /$3/"; fi; }

# run CMD...: sets OUT, ERR and RC.
run() {
	OUT=$("$@" 2>"$WORK/.err")
	RC=$?
	ERR=$(cat "$WORK/.err")
}

# submit SBATCH-ARGS...: prints the job id (fails the test on error).
submit() {
	local out
	out=$(sbatch --parsable "$@") || { bad "sbatch $*: exit $?"; return 1; }
	echo "${out%%;*}"
}

# jstate ID: the job's state from scontrol (while the controller keeps
# it), else from sacct's first row.
jstate() {
	local s
	s=$(scontrol show job -o "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | head -1 | cut -d= -f2)
	if [ -z "$s" ]; then
		s=$(sacct -n -X -P -o State -j "$1" 2>/dev/null | head -1 | awk '{print $1}')
	fi
	echo "$s"
}

# jfield ID KEY: one Key=Value of scontrol show job -o.
jfield() { scontrol show job -o "$1" 2>/dev/null | grep -o "\(^\| \)$2=[^ ]*" | head -1 | sed "s/^ *$2=//"; }

# until_true TIMEOUT CMD...: polls CMD (every 0.2 s) until it succeeds.
until_true() {
	local limit=$(($(date +%s) + $1))
	shift
	while ! "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -ge "$limit" ] && return 1
		sleep 0.2
	done
}

state_is() { [ "$(jstate "$1")" == "$2" ]; }
final() { case "$(jstate "$1")" in COMPLETED | FAILED | CANCELLED | TIMEOUT | OUT_OF_MEMORY | NODE_FAIL) return 0 ;; esac; return 1; }
# wait_state ID STATE [TIMEOUT]
wait_state() { until_true "${3:-60}" state_is "$1" "$2"; }
wait_final() { until_true "${2:-60}" final "$1"; }
reason_is() { [ "$(squeue -h -j "$1" -o %r 2>/dev/null)" == "$2" ]; }
wait_reason() { until_true "${3:-30}" reason_is "$1" "$2"; }
# sacct_is ID STATE: the accounting record's state (first word).
sacct_is() { [ "$(sacct -n -X -P -o State -j "$1" 2>/dev/null | head -1 | awk '{print $1}')" == "$2" ]; }
wait_sacct() { until_true "${3:-30}" sacct_is "$1" "$2"; }
# sacct_field_is ID FIELD VALUE: the record's field (Slurm's database
# may first hold a provisional record: the name "allocation").
sacct_field_is() { [ "$(sacct -n -X -P -o "$2" -j "$1" 2>/dev/null | head -1)" == "$3" ]; }
file_has() { [ -f "$1" ] && grep -q -- "$2" "$1"; }
wait_file() { until_true "${3:-30}" file_has "$1" "$2"; }

CLUSTER=$(scontrol show config 2>/dev/null | awk '$1=="ClusterName"{print $3}')
PART=$(sinfo -h -o %P | grep '\*' | head -1 | tr -d '*')
