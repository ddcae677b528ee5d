# The administrator's sacctmgr sequences, including a user added across
# clusters (issue 17 item 8). Names start with cf- so nothing else is
# touched; everything is removed at the end.
. "$(dirname "$0")/../lib.sh"

cleanup_hook() {
	sacctmgr -i delete user cfuser1 >/dev/null 2>&1
	sacctmgr -i delete user cfuser2 >/dev/null 2>&1
	sacctmgr -i delete account cfacct1 >/dev/null 2>&1
	sacctmgr -i delete account cfacct2 >/dev/null 2>&1
	sacctmgr -i delete qos cfgpu >/dev/null 2>&1
	sacctmgr -i delete cluster cfother >/dev/null 2>&1
}
cleanup_hook

run sacctmgr -i add cluster cfother
eq "add cluster: exit 0" "$RC" 0
has "add cluster: words" "$OUT" " Adding Cluster(s)"
has "add cluster: name" "$OUT" "  Name           = cfother"
like "list clusters" "$(sacctmgr -n -P list cluster format=cluster | sort | tr '\n' ' ')" "cfother "
run sacctmgr -i add account cfacct1 Cluster="$CLUSTER" Description=first Organization=cf
eq "add account: exit 0" "$RC" 0
has "add account: words" "$OUT" " Adding Account(s)"
run sacctmgr -i add account cfacct2 Cluster=cfother
eq "add account on the other cluster: exit 0" "$RC" 0
eq "show account" "$(sacctmgr -n -P show account cfacct1 format=account,descr,org)" "cfacct1|first|cf"

run sacctmgr -i add user cfuser1 Account=cfacct2
eq "add user, account only elsewhere: exit 1" "$RC" 1
has "warning for the cluster lacking it" "$ERR" "This account 'cfacct2' doesn't exist on cluster $CLUSTER"
has "the user is added" "$OUT" " Adding User(s)"
has "on the cluster holding the account" "$OUT" "C = cfother"
eq "its association" "$(sacctmgr -n -P show assoc where user=cfuser1 format=cluster,account,user)" "cfother|cfacct2|cfuser1"
run sacctmgr -i add user cfuser2 Account=cfnoacct
eq "add user, account nowhere: exit 1" "$RC" 1
has "add user, account nowhere: words" "$ERR" "This account 'cfnoacct' doesn't exist"
eq "nothing added" "$(sacctmgr -n -P show user cfuser2 format=user)" ""

run sacctmgr -i add user cfuser2 Account=cfacct1 Cluster="$CLUSTER"
eq "add user: exit 0" "$RC" 0
eq "default account" "$(sacctmgr -n -P show user cfuser2 format=user,defaultaccount)" "cfuser2|cfacct1"
run sacctmgr -i add qos cfgpu MaxTRESPerUser=gres/gpu=4
eq "add qos: exit 0" "$RC" 0
has "add qos: words" "$OUT" " Adding QOS(s)"
eq "qos MaxTRESPU" "$(sacctmgr -n -P show qos cfgpu format=name,maxtrespu)" "cfgpu|gres/gpu=4"
run sacctmgr -i modify user cfuser2 set qos+=cfgpu
eq "modify user qos+=: exit 0" "$RC" 0
has "modify: words" "$OUT" " Modified user associations..."
like "association QOS" "$(sacctmgr -n -P show assoc where user=cfuser2 cluster="$CLUSTER" format=qos)" "cfgpu"
run sacctmgr -i modify user cfuser2 set MaxJobs=3
eq "modify MaxJobs: exit 0" "$RC" 0
eq "MaxJobs shown" "$(sacctmgr -n -P show assoc where user=cfuser2 cluster="$CLUSTER" format=maxjobs)" 3
run sacctmgr -i add account cfacct1 Cluster="$CLUSTER"
has "adding it again: nothing new" "$OUT$ERR" "Nothing new added"
run sacctmgr -i delete user cfuser2
eq "delete user: exit 0" "$RC" 0
has "delete user: words" "$OUT" " Deleting users..."
run sacctmgr -i delete qos cfgpu
eq "delete qos: exit 0" "$RC" 0
run sacctmgr -i delete user cfnobody
eq "delete of nothing: exit 1" "$RC" 1
has "delete of nothing: words" "$OUT$ERR" "Nothing deleted"
run sacctmgr -i delete cluster cfnosuch
eq "delete unknown cluster: exit 1" "$RC" 1
