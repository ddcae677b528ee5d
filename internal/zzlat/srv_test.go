package lat
import ("testing";"os";"google.golang.org/protobuf/proto";pb "github.com/drover-hpc/drover/api/drover/v1";"github.com/drover-hpc/drover/internal/wire";"github.com/drover-hpc/drover/internal/model")
func BenchmarkServerSide(b *testing.B){
	spec:=&model.JobSpec{Name:"benchpend",Hold:true,Env:os.Environ(),Script:"#!/bin/sh\ntrue\n",WorkDir:"/tmp",StdOut:"/dev/null",TimeLimit:model.Unset,MinNodes:model.Unset,MaxNodes:model.Unset,NTasks:model.Unset,CPUsPerTask:model.Unset,TasksPerNode:model.Unset,MemPerNode:model.Unset,MemPerCPU:model.Unset}
	jobs:=make([]*model.Job,10000)
	for i:=range jobs{ jobs[i]=&model.Job{ID:model.JobID(i),Spec:spec,Name:"x",UserName:"root",Partition:"debug",Reason:"JobHeldUser"} }
	b.ResetTimer()
	for i:=0;i<b.N;i++{
		out:=&pb.ListJobsResponse{}
		for _,j:=range jobs{ out.Jobs=append(out.Jobs, wire.JobToPB(j,false)) }
		data,_:=proto.Marshal(out)
		if i==0 { b.Logf("bytes %d", len(data)) }
	}
}
