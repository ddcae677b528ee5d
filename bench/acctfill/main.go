// Command acctfill writes synthetic finished jobs into an accounting
// database for the sacct benchmark (bench/acct.sh): n jobs spread over
// one month, each with a batch step, as the controller would record them.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/acct/sqlstore"
)

func main() {
	db := flag.String("db", "", "SQLite file to fill")
	n := flag.Int("n", 100000, "jobs")
	cluster := flag.String("cluster", "drover", "cluster name")
	month := flag.String("month", "2026-10", "month the jobs ran in (YYYY-MM)")
	flag.Parse()
	start, err := time.ParseInLocation("2006-01", *month, time.Local)
	if err != nil || *db == "" {
		fmt.Fprintln(os.Stderr, "usage: acctfill -db FILE [-n N] [-cluster NAME] [-month YYYY-MM]")
		os.Exit(2)
	}
	ctx := context.Background()
	st, err := sqlstore.Open(ctx, sqlstore.Config{Driver: "sqlite", DSN: *db})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer st.Close()
	span := start.AddDate(0, 1, 0).Sub(start) - time.Hour
	states := []string{"COMPLETED", "COMPLETED", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"}
	t0 := time.Now()
	const batch = 1000
	for i := 0; i < *n; i += batch {
		var jobs []*acct.Job
		for k := i; k < i+batch && k < *n; k++ {
			sub := start.Add(time.Duration(float64(span) * float64(k) / float64(*n))).Unix()
			st := states[k%len(states)]
			exit := int32(0)
			if st == "FAILED" {
				exit = 1
			}
			j := &acct.Job{Cluster: *cluster, JobID: uint32(k + 1), ArrayTaskID: -1, Name: fmt.Sprintf("job%d", k%97),
				User: "root", Group: "root", Account: "root", Partition: "debug", QOS: "normal",
				State: st, ExitStatus: exit, Priority: 1, Submit: sub, Eligible: sub, Start: sub + 5, End: sub + 65,
				TimeLimit: 3600, NNodes: 1, NCPUs: 2, ReqCPUs: 2, ReqNodes: 1, ReqMem: 500,
				ReqTRES: "billing=2,cpu=2,mem=500M,node=1", AllocTRES: "billing=2,cpu=2,mem=500M,node=1",
				NodeList: fmt.Sprintf("node%d", k%16+1), WorkDir: "/home/root"}
			j.Steps = []*acct.Step{{StepID: acct.StepBatch, Name: "batch", State: st, ExitStatus: exit,
				Start: sub + 5, End: sub + 65, NNodes: 1, NTasks: 1, NCPUs: 2, NodeList: j.NodeList,
				AllocTRES: "cpu=2,mem=500M,node=1", MaxRSS: 10 << 20, AveRSS: 10 << 20, UserCPU: 1500000, SystemCPU: 200000}}
			jobs = append(jobs, j)
		}
		if err := st.PutJobs(ctx, jobs); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	fmt.Printf("acctfill: %d jobs in %s (%.0f jobs/s)\n", *n, time.Since(t0).Round(time.Millisecond),
		float64(*n)/time.Since(t0).Seconds())
}
