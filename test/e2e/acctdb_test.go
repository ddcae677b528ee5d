package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/drover-hpc/drover/internal/acct/accttest"
)

// acctIDs is the job ids sacct lists (-X) since a time, in order, with
// repeats kept: a record written twice would show twice.
func (c *cluster) acctIDs(since string) []string {
	out, _, code := c.run("sacct", "-X", "-n", "-P", "-a", "-o", "JobID", "-S", since)
	if code != 0 {
		return nil
	}
	return strings.Fields(out)
}

// TestAccountingSurvivesDatabaseOutage records jobs in MariaDB, stops the
// server while more jobs run and end, and checks that after it returns
// sacct shows every job exactly once.
func TestAccountingSurvivesDatabaseOutage(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("short")
	}
	srv := accttest.StartMariaDB(t)
	cfg, err := mysql.ParseDSN(srv.DSN)
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(cfg.Addr, ":")
	c := startUp(t, 1, "--conf", "AccountingStorageType=accounting_storage/mysql",
		"--conf", "AccountingStorageHost="+host, "--conf", "AccountingStoragePort="+port,
		"--conf", "AccountingStorageUser="+cfg.User, "--conf", "AccountingStoragePass="+cfg.Passwd,
		"--conf", "AccountingStorageLoc="+cfg.DBName)
	since := time.Now().Add(-time.Minute).Format("2006-01-02T15:04:05")

	var ids []string
	for range 3 {
		ids = append(ids, c.sbatch("-o", "/dev/null", "--wrap", "true"))
	}
	for _, id := range ids {
		c.waitAcct(id, "COMPLETED", 30*time.Second)
	}

	srv.Stop()
	for range 6 {
		ids = append(ids, c.sbatch("-o", "/dev/null", "--wrap", "true"))
	}
	array := c.sbatch("-o", "/dev/null", "-a", "1-3", "--wrap", "true")
	for _, id := range ids[3:] {
		c.waitState(id, "COMPLETED", 30*time.Second)
	}
	// Scheduling went on; the records wait in the controller.
	c.waitFor("sdiag to show the backlog", 10*time.Second, func() bool {
		out, _, _ := c.run("sdiag")
		return strings.Contains(out, "DBD Agent queue size:") && !strings.Contains(out, "DBD Agent queue size: 0\n")
	})
	if _, errOut, code := c.run("sacct", "-X", "-j", ids[0]); code == 0 {
		t.Errorf("sacct with the database down succeeded: %q", errOut)
	}

	srv.Start()
	want := append([]string{}, ids...)
	for i := 1; i <= 3; i++ {
		want = append(want, fmt.Sprintf("%s_%d", array, i))
	}
	c.waitFor("every job in sacct", 60*time.Second, func() bool {
		return len(c.acctIDs(since)) >= len(want)
	})
	got := c.acctIDs(since)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("sacct after the outage: %v, want each of %v once", got, want)
	}
	for _, id := range ids {
		if row := c.acctRow(id, "State,ExitCode"); row != "COMPLETED|0:0" {
			t.Errorf("job %s: %q", id, row)
		}
	}
}

// TestDbdSharedByTwoClusters runs `drover dbd` on its own with SQLite
// and two clusters recording into it: each cluster's sacct sees its own
// jobs, -L both.
func TestDbdSharedByTwoClusters(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("short")
	}
	dir := worldDir(t)
	port := freePort(t)
	conf := filepath.Join(dir, "slurmdbd.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("DbdAddr=127.0.0.1\nDbdPort=%d\nDroverStateDir=%s/dbd\n"+
		"StorageType=accounting_storage/sqlite\nStorageLoc=%s/dbd/acct.db\n", port, dir, dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	dbd := exec.Command(filepath.Join(binDir, "drover"), "dbd", "-f", conf)
	logf, _ := os.Create(filepath.Join(dir, "dbd.log"))
	dbd.Stdout, dbd.Stderr = logf, logf
	if err := dbd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dbd.Process.Kill(); _ = dbd.Wait(); logf.Close() })
	keyFile := filepath.Join(dir, "dbd", "dbd.key")
	deadline := time.Now().Add(20 * time.Second)
	var key []byte
	for len(key) == 0 {
		key, _ = os.ReadFile(keyFile)
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "dbd.log"))
			t.Fatalf("no %s; dbd log:\n%s", keyFile, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	acctConf := fmt.Sprintf("AccountingStorageType=accounting_storage/slurmdbd\nAccountingStorageHost=127.0.0.1\n"+
		"AccountingStoragePort=%d\nAccountingStoragePass=%s\n", port, strings.TrimSpace(string(key)))

	var upArgs []string
	for _, l := range strings.Fields(acctConf) {
		upArgs = append(upArgs, "--conf", l)
	}
	a := startUp(t, 1, upArgs...)
	b := upWithConf(t, acctConf+"NodeName=b1 NodeAddr=127.0.0.1 CPUs=2 RealMemory=500\n"+
		"PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n", map[string]string{}, nil)
	ja := a.sbatch("-J", "on_a", "-o", "/dev/null", "--wrap", "true")
	jb := b.sbatch("-J", "on_b", "-o", "/dev/null", "--wrap", "true")
	a.waitAcct(ja, "COMPLETED", 30*time.Second)
	b.waitAcct(jb, "COMPLETED", 30*time.Second)

	since := time.Now().Add(-time.Hour).Format("2006-01-02T15:04:05")
	if out := a.must("sacct", "-X", "-n", "-P", "-a", "-o", "Cluster,JobName", "-S", since); out != "drover|on_a\n" {
		t.Errorf("cluster a sees %q", out)
	}
	out := b.must("sacct", "-X", "-n", "-P", "-L", "-a", "-o", "Cluster,JobName", "-S", since)
	if !strings.Contains(out, "drover|on_a\n") || !strings.Contains(out, "iso|on_b\n") {
		t.Errorf("sacct -L sees %q", out)
	}
}
