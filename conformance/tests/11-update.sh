# scontrol update JobId= (issue 17 item 2).
. "$(dirname "$0")/../lib.sh"

id=$(submit --begin=now+1hour -o /dev/null --wrap true)
eq "future begin: BeginTime" "$(squeue -h -j "$id" -o %r)" BeginTime
run scontrol update JobId="$id" StartTime=now
eq "StartTime=now: exit 0, silent" "$RC:$OUT$ERR" "0:"
wait_state "$id" COMPLETED
eq "the job became eligible and ran" "$(jstate "$id")" COMPLETED

id=$(submit -H -o /dev/null --wrap true)
run scontrol update JobId="$id" TimeLimit=10 Name=renamed Comment=why NumTasks=2 Nice=5
eq "several fields: exit 0" "$RC" 0
eq "TimeLimit" "$(jfield "$id" TimeLimit)" 00:10:00
eq "JobName" "$(jfield "$id" JobName)" renamed
eq "Comment" "$(jfield "$id" Comment)" why
eq "NumTasks" "$(jfield "$id" NumTasks)" 2
eq "Nice" "$(jfield "$id" Nice)" 5
run scontrol update JobId="$id" Dependency=afterany:1
eq "Dependency: exit 0" "$RC" 0
run scontrol update JobId="$id" NumNodes=0
eq "NumNodes=0" "$RC:$ERR" "1:Node count specification invalid for job $id"
run scontrol update JobId="$id" NumTasks=0
eq "NumTasks=0" "$RC:$ERR" "1:Task count specification invalid for job $id"
run scontrol update JobId="$id" Partition=nosuch
eq "bad partition" "$RC:$ERR" "1:Invalid partition name specified for job $id"
run scontrol update JobId="$id" ReqNodeList=nosuchnode
eq "bad node" "$RC:$ERR" "1:Invalid node name specified for job $id"
run scontrol update JobId="$id" TRES=cpu=2
eq "TRES=: exit 1" "$RC" 1
has "TRES=: words" "$ERR" "Update of this parameter is not supported: TRES=cpu=2"
scancel "$id"

id=$(submit -o /dev/null --wrap 'sleep 300')
wait_state "$id" RUNNING
for f in StartTime=now NumTasks=2 Account=other Dependency=afterany:1; do
	run scontrol update JobId="$id" "$f"
	eq "running job, $f" "$RC:$ERR" "1:Job is no longer pending execution for job $id"
done
run scontrol update JobId="$id" Comment=fine TimeLimit=20
eq "running job, Comment and TimeLimit: exit 0" "$RC" 0
eq "running job's new TimeLimit" "$(jfield "$id" TimeLimit)" 00:20:00
scancel "$id"
