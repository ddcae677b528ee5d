# sbatch: submission words, output files and their patterns, exit codes.
. "$(dirname "$0")/../lib.sh"

run sbatch --wrap "echo hello"
like "sbatch prints the job id" "$OUT" '^Submitted batch job [0-9]+$'
eq "sbatch exit status" "$RC" 0
id=${OUT##* }
wait_state "$id" COMPLETED
eq "job completes" "$(jstate "$id")" COMPLETED
wait_file "slurm-$id.out" hello 10
eq "default output file slurm-%j.out" "$(cat "slurm-$id.out" 2>/dev/null)" hello
eq "output file mode under umask 022" "$(stat -c %a "slurm-$id.out" 2>/dev/null)" 644

id=$(submit --parsable -J named -o 'out-%x-%j.txt' -e 'err-%j.txt' --wrap 'echo to-out; echo to-err >&2')
like "--parsable prints only the id" "$id" '^[0-9]+$'
wait_final "$id"
until_true 30 sacct_field_is "$id" JobName named
eq "-o pattern %x-%j" "$(cat "out-named-$id.txt" 2>/dev/null)" to-out
eq "-e pattern %j gets stderr" "$(cat "err-$id.txt" 2>/dev/null)" to-err
eq "JobName from -J" "$(sacct -n -X -P -o JobName -j "$id")" named

echo old >app.txt
id=$(submit --open-mode=append -o app.txt --wrap 'echo new')
wait_final "$id"
eq "--open-mode=append keeps the old content" "$(cat app.txt)" "$(printf 'old\nnew')"
echo old >trunc.txt
id=$(submit -o trunc.txt --wrap 'echo new')
wait_final "$id"
eq "default open mode truncates" "$(cat trunc.txt)" new

id=$(submit -o /dev/null --wrap 'exit 3')
wait_final "$id"
eq "non-zero exit: FAILED" "$(jstate "$id")" FAILED
wait_sacct "$id" FAILED
eq "sacct ExitCode of exit 3" "$(sacct -n -X -P -o ExitCode -j "$id")" 3:0
eq "scontrol ExitCode of exit 3" "$(jfield "$id" ExitCode)" 3:0

run sbatch -W -o /dev/null --wrap 'exit 5'
eq "sbatch -W exits with the job's status" "$RC" 5

mkdir -p sub
cat >sub/job.sh <<'S'
#!/bin/bash
#SBATCH -J fromdirective
#SBATCH -o dir-%j.out
echo "name=$SLURM_JOB_NAME arg=$1"
S
id=$(cd sub && submit job.sh first)
wait_final "$id"
eq "#SBATCH directives and script arguments" "$(cat "sub/dir-$id.out" 2>/dev/null)" "name=fromdirective arg=first"
id=$(cd sub && submit -J cmdline job.sh)
wait_final "$id"
eq "command line beats #SBATCH" "$(cat "sub/dir-$id.out" 2>/dev/null)" "name=cmdline arg="

run sbatch --bogus-option --wrap true
eq "unknown option: exit 255" "$RC" 255
has "unknown option: words" "$ERR" "unrecognized option"
run sbatch -p nosuchpart --wrap true
eq "bad partition: exit 1" "$RC" 1
has "bad partition: words" "$ERR" "Batch job submission failed: Invalid partition name specified"
printf 'echo no shebang\n' >noshebang.sh
run sbatch noshebang.sh
eq "script without #!: exit 1" "$RC" 1
has "script without #!: words" "$ERR" "This does not look like a batch script"
