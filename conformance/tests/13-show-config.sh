# scontrol show config: every key, effective values, Slurm's units
# (issue 17 item 7). Values differ between sites; formats must not.
. "$(dirname "$0")/../lib.sh"

cfg=$(scontrol show config)
like "first line" "$(head -1 <<<"$cfg")" '^Configuration data as of [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}$'
line() { grep "^$1 " <<<"$cfg" | head -1; }
for k in MinJobAge KillWait SlurmdTimeout SlurmctldTimeout MessageTimeout InactiveLimit BatchStartTimeout \
	CompleteWait GetEnvTimeout GroupUpdateTime ResumeTimeout SuspendTimeout TCPTimeout UnkillableStepTimeout WaitTime; do
	like "$k in seconds" "$(line "$k")" "^$k +=  ?[0-9]+ sec$"
done
for k in OverTimeLimit ResvOverRun; do
	like "$k in minutes" "$(line "$k")" "^$k +=  ?[0-9]+ min$"
done
like "EpilogMsgTime in usec" "$(line EpilogMsgTime)" '= [0-9]+ usec$'
like "VSizeFactor in percent" "$(line VSizeFactor)" '= [0-9]+ percent$'
like "ResumeRate in nodes/min" "$(line ResumeRate)" '= [0-9]+ nodes/min$'
like "SlurmUser name(uid)" "$(line SlurmUser)" '= [a-z_]+\([0-9]+\)$'
like "SlurmctldHost[0]" "$(grep '^SlurmctldHost\[0\]' <<<"$cfg")" '^SlurmctldHost\[0\] += [^ ]+'
like "DependencyParameters unset: (null)" "$(line DependencyParameters)" '= \(null\)$'
like "DefMemPerCPU or DefMemPerNode" "$(grep -E '^DefMemPer(CPU|Node) ' <<<"$cfg")" '= ([0-9]+|UNLIMITED)$'
like "MaxArraySize a number" "$(line MaxArraySize)" '= [0-9]+$'
like "ClusterName" "$(line ClusterName)" "= $CLUSTER$"
for k in AccountingStorageType AuthType DisableRootJobs EnforcePartLimits FirstJobId JobRequeue MaxJobCount \
	MpiDefault PreemptMode PriorityType ProctrackType ReturnToService SchedulerType SelectType SlurmctldPort \
	SlurmdPort StateSaveLocation SwitchType TaskPlugin TmpFS TreeWidth; do
	like "$k present" "$(line "$k")" "^$k +="
done
like "keys aligned at column 24" "$(line KillWait)" '^KillWait {16}= '
