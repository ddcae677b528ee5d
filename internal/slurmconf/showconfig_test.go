package slurmconf

import (
	"strings"
	"testing"
	"time"
)

func TestShowConfig(t *testing.T) {
	c, err := Parse(strings.NewReader("ClusterName=c1\nSlurmctldHost=h1\nMinJobAge=30\n"+
		"EnforcePartLimits=all\nDroverSocket=/tmp/x.sock\nNodeName=n[1-2] CPUs=2\nPartitionName=p Nodes=ALL\n"), "slurm.conf")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	var order []string
	for _, kv := range c.ShowConfig(time.Time{}) {
		got[kv[0]] = kv[1]
		order = append(order, kv[0])
	}
	for k, want := range map[string]string{
		"MinJobAge": "30 sec", "KillWait": "30 sec", "SlurmdTimeout": "300 sec", "MessageTimeout": "10 sec",
		"EnforcePartLimits": "ALL", "ClusterName": "c1", "SlurmctldHost[0]": "h1", "MaxNodeCount": "2",
		"DependencyParameters": "(null)", "DefMemPerNode": "UNLIMITED", "MaxArraySize": "1001",
		"OverTimeLimit": "0 min", "DroverSocket": "/tmp/x.sock", "PriorityType": "priority/basic",
	} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
	if _, ok := got["PriorityWeightAge"]; ok {
		t.Errorf("multifactor keys shown under priority/basic")
	}
	if order[0] != "AccountingStorageBackupHost" || order[len(order)-1] != "DroverSocket" {
		t.Errorf("order: first %s, last %s", order[0], order[len(order)-1])
	}
}
