package lat
import ("testing";"context";"github.com/drover-hpc/drover/client";"github.com/drover-hpc/drover/internal/cli")
func BenchmarkList(b *testing.B){
	c,_ := client.Dial(client.Options{Socket:"/tmp/t1/state/drover.sock"})
	ctx:=context.Background()
	for i:=0;i<b.N;i++{ c.ListJobs(ctx, cli.JobQuery{}) }
}
