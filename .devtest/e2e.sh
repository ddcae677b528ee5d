set -x
B=$PWD/.devtest/drover
D=/tmp/dv; rm -rf $D; mkdir -p $D
cat > $D/slurm.conf <<EOF
ClusterName=gpu
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=47111
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
KillWait=2
JobAcctGatherFrequency=task=1
GresTypes=gpu
NodeName=h100 NodeAddr=127.0.0.1 CPUs=16 RealMemory=64000 Gres=gpu:1
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
echo AutoDetect=nvml > $D/gres.conf
mkdir -p $D/bin; for c in sbatch srun squeue sinfo scontrol sstat scancel; do ln -sf $B $D/bin/$c; done
export PATH=$D/bin:$PATH SLURM_CONF=$D/slurm.conf
$B up --dir $D > $D/up.log 2>&1 &
UP=$!
sleep 4
sinfo -N -o '%N %t %G'; scontrol show node h100 | grep -E 'Gres|TRES|Reason'
cd $D
sbatch -o gpu.out --gres=gpu:1 -c2 --mem=4G --wrap 'echo CVD=$CUDA_VISIBLE_DEVICES JOBGPUS=$SLURM_JOB_GPUS BIND=$SLURM_CPU_BIND; grep Cpus_allowed_list /proc/self/status; cat /proc/self/cgroup; nvidia-smi -L; srun -n1 --gpus=1 nvidia-smi -L; sleep 3'
sbatch -o nogpu.out -c1 --wrap 'nvidia-smi -L; echo rc=$?; CUDA_VISIBLE_DEVICES=0 nvidia-smi -L; echo rc=$?; (exec 3</dev/nvidia0) && echo opened || echo refused'
sbatch -o oom.out --mem=100M --wrap 'x=$(head -c 400000000 /dev/zero | tr "\0" a); echo survived'
sleep 2; squeue -o '%i %b %C %T'; sstat -a -j 1 -o JobID,MaxRSS,NTasks,TotalCPU
sleep 8
squeue; for j in 1 2 3; do scontrol show job $j | grep -E 'JobState|ExitCode|TRES'; done
for f in gpu.out nogpu.out oom.out; do echo "== $f"; cat $f; done
grep -i -E 'isolation|gres|error' $D/log/h100.log | head
ls /sys/fs/cgroup/drover/h100/
kill $UP; wait
