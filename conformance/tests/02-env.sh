# The environment a batch job and its tasks see.
. "$(dirname "$0")/../lib.sh"

id=$(submit -J envjob -n2 -c1 -o env.out --export=ALL,CF_VAR=carried --wrap 'env | grep -E "^(SLURM|CF_)" | sort')
wait_final "$id"
wait_file env.out SLURM_JOB_ID 10
v() { grep "^$1=" env.out | head -1 | cut -d= -f2-; }
eq "SLURM_JOB_ID" "$(v SLURM_JOB_ID)" "$id"
eq "SLURM_JOBID" "$(v SLURM_JOBID)" "$id"
eq "SLURM_JOB_NAME" "$(v SLURM_JOB_NAME)" envjob
eq "SLURM_NTASKS" "$(v SLURM_NTASKS)" 2
eq "SLURM_NPROCS" "$(v SLURM_NPROCS)" 2
eq "SLURM_JOB_NUM_NODES" "$(v SLURM_JOB_NUM_NODES)" 1
eq "SLURM_NNODES" "$(v SLURM_NNODES)" 1
eq "SLURM_SUBMIT_DIR" "$(v SLURM_SUBMIT_DIR)" "$WORK"
eq "SLURM_JOB_PARTITION" "$(v SLURM_JOB_PARTITION)" "$PART"
eq "SLURM_CLUSTER_NAME" "$(v SLURM_CLUSTER_NAME)" "$CLUSTER"
eq "SLURM_JOB_USER" "$(v SLURM_JOB_USER)" root
eq "SLURM_JOB_UID" "$(v SLURM_JOB_UID)" 0
eq "--export=ALL,VAR=value" "$(v CF_VAR)" carried
like "SLURM_JOB_NODELIST" "$(v SLURM_JOB_NODELIST)" '^[a-z0-9]+'
eq "SLURM_EXPORT_ENV" "$(v SLURM_EXPORT_ENV)" "ALL,CF_VAR=carried"

id=$(submit -c2 -o cpt.out --wrap 'echo $SLURM_CPUS_PER_TASK')
wait_final "$id"
eq "SLURM_CPUS_PER_TASK with -c2" "$(cat cpt.out)" 2

export CF_OUTSIDE=seen
id=$(submit --export=NONE -o none.out --wrap 'echo "[${CF_OUTSIDE:-}]"')
wait_final "$id"
eq "--export=NONE drops the caller's variables" "$(cat none.out)" "[]"
id=$(submit -o all.out --wrap 'echo "[${CF_OUTSIDE:-}]"')
wait_final "$id"
eq "default --export=ALL keeps them" "$(cat all.out)" "[seen]"
