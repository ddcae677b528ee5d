package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDbdClosesUnprovenConnections: `drover dbd` closes a connection that
// does not prove the dbd's key within twice MessageTimeout (its
// slurmdbd.conf key), as the controller does. Anyone who reached its
// port held TLS connections for ever: the dbd had no idle timeout at all.
// A controller recording into it keeps its connection.
func TestDbdClosesUnprovenConnections(t *testing.T) {
	t.Parallel()
	attacker := testUser(t, "drovertest2")
	dir := worldDir(t)
	port := freePort(t)
	conf := filepath.Join(dir, "slurmdbd.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("DbdAddr=127.0.0.1\nDbdPort=%d\nDroverStateDir=%s/dbd\nMessageTimeout=2\n"+
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
	var key []byte
	deadline := time.Now().Add(20 * time.Second)
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
	c := startUp(t, 1, upArgs...)
	tool := buildHostile(t, c)
	// Probation is 4 s here; 10 s later none may be left.
	out, errOut, code := c.runAs(attacker, "", tool, "127.0.0.1:"+strconv.Itoa(port), "tcpidle", "100", "10")
	if code != 0 || !strings.HasPrefix(out, "open ") {
		t.Fatalf("hostile tcpidle: exit %d\n%s\n%s", code, out, errOut)
	}
	if n := atoi(strings.TrimSpace(strings.TrimPrefix(out, "open "))); n != 0 {
		t.Errorf("%d of 100 connections that made no call to the dbd are still open after 10 s (MessageTimeout=2)", n)
	}
	id := c.sbatch("-J", "recorded", "-o", "/dev/null", "--wrap", "true")
	c.waitAcct(id, "COMPLETED", 30*time.Second)
}
