# squeue, sinfo, sacct and scontrol output formats.
. "$(dirname "$0")/../lib.sh"

id=$(submit -H -J fmtjob -o /dev/null --wrap true)
eq "squeue -o" "$(squeue -h -j "$id" -o '%i %j %T %r')" "$id fmtjob PENDING JobHeldUser"
eq "squeue default header" "$(squeue -j "$id" | head -1 | tr -s ' ' | sed 's/^ //')" "JOBID PARTITION NAME USER ST TIME NODES NODELIST(REASON)"
eq "squeue -O header" "$(squeue -j "$id" -O JobID,Name,State | head -1 | tr -s ' ' | sed 's/ $//')" "JOBID NAME STATE"
eq "squeue -O row" "$(squeue -h -j "$id" -O JobID,Name,State | tr -s ' ' | sed 's/ $//')" "$id fmtjob PENDING"
eq "squeue --format with widths" "$(squeue -h -j "$id" --format='%.10i|%8j|')" "$(printf '%10s|%-8s|' "$id" fmtjob)"
eq "squeue -t PD filters" "$(squeue -h -t PD -j "$id" -o %i)" "$id"
eq "squeue -n filters by name" "$(squeue -h -n fmtjob -o %i | grep -c "^$id$")" 1
run squeue --json -j "$id"
# Slurm 22.05's squeue --json lists every job whatever -j says.
eq "squeue --json lists the job" "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print([j["job_id"] for j in d["jobs"]].count('"$id"'))' <<<"$OUT" 2>&1)" 1
eq "squeue --json job_state" "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print([j["job_state"] for j in d["jobs"] if j["job_id"]=='"$id"'][0])' <<<"$OUT" 2>&1)" PENDING
eq "scontrol show job -o is one line" "$(scontrol show job -o "$id" | wc -l)" 1
like "scontrol show job -o starts with JobId and JobName" "$(scontrol show job -o "$id")" "^JobId=$id JobName=fmtjob "
like "scontrol show job block form" "$(scontrol show job "$id" | sed -n 2p)" '^   UserId=root\(0\) GroupId=root\(0\)'
scancel "$id"

eq "sinfo -o %P marks the default" "$(sinfo -h -o %P | grep -c "^$PART\*$")" 1
eq "sinfo header" "$(sinfo | head -1 | tr -s ' ')" "PARTITION AVAIL TIMELIMIT NODES STATE NODELIST"
eq "sinfo -N -h -o %N lists the nodes scontrol knows" "$(sinfo -N -h -o %N | sort | tr '\n' ' ')" "$(scontrol show node | grep -o '^NodeName=[^ ]*' | cut -d= -f2 | sort | tr '\n' ' ')"
eq "sinfo -o %a" "$(sinfo -h -p "$PART" -o %a)" up
like "sinfo --json" "$(sinfo --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["nodes"]))' 2>&1)" '^[1-9][0-9]*$'
like "scontrol show partition" "$(scontrol show partition "$PART" | head -1)" "^PartitionName=$PART$"

id=$(submit -J acctfmt -o /dev/null --wrap 'exit 2')
wait_sacct "$id" FAILED
until_true 30 sacct_field_is "$id" JobName acctfmt
eq "sacct -P header" "$(sacct -P -o JobID,JobName,State -j "$id" | head -1)" "JobID|JobName|State"
eq "sacct -p trailing delimiter" "$(sacct -n -X -p -o JobID,State -j "$id")" "$id|FAILED|"
eq "sacct -X -n -P row" "$(sacct -X -n -P -o JobID,JobName,State,ExitCode -j "$id")" "$id|acctfmt|FAILED|2:0"
eq "sacct batch step row" "$(sacct -n -P -o JobID,State,ExitCode -j "$id" | grep '\.batch')" "$id.batch|FAILED|2:0"
eq "sacct --delimiter" "$(sacct -X -n -P --delimiter=, -o JobID,State -j "$id")" "$id,FAILED"
like "sacct default header" "$(sacct -j "$id" | head -1 | tr -s ' ')" '^ ?JobID JobName Partition Account AllocCPUS State ExitCode ?$'
like "sacct fixed width -o State%20" "$(sacct -X -n -o State%20 -j "$id")" '^ {14}FAILED $'
run sacct --json -j "$id"
eq "sacct --json job_id" "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["jobs"][0]["job_id"])' <<<"$OUT" 2>&1)" "$id"
eq "sacct --json state" "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["jobs"][0]["state"]["current"])' <<<"$OUT" 2>&1)" FAILED
run sacct -o NoSuchField
eq "sacct unknown field: exit 1" "$RC" 1
