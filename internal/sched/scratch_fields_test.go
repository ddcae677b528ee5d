package sched

import (
	"reflect"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

// TestNodeConfigFields: every field of model.Node is either compared by
// nodeConfig.equal (a Scratch keeps shape verdicts only while they are
// all unchanged) or known not to reach a verdict. A field added to Node
// fails here until it is put on one side.
func TestNodeConfigFields(t *testing.T) {
	compared := map[string]bool{"Name": true, "Addr": true, "Hostname": true, "Gres": true, "CPUs": true,
		"Sockets": true, "Cores": true, "Threads": true, "Weight": true, "Memory": true, "DetectCPUs": true,
		"DetectMemory": true, "State": true, "Drain": true, "InvalidReg": true, "Responding": true,
		"Features": true, "GPUs": true}
	// Allocations (the verdicts place on an empty cluster), and what is
	// kept for display and liveness only.
	ignored := map[string]bool{"AllocCPUs": true, "AllocMem": true, "AllocGPUs": true, "AllocCores": true,
		"HealthDrain": true, "Reason": true, "ReasonUID": true, "ReasonTime": true, "BootTime": true,
		"LastSeen": true, "Version": true, "RegTime": true, "Resv": true, "Planned": true}
	typ := reflect.TypeFor[model.Node]()
	for f := range typ.Fields() {
		if !compared[f.Name] && !ignored[f.Name] {
			t.Errorf("model.Node.%s: compare it in nodeConfig.equal (configOf) or list it as ignored here", f.Name)
		}
	}
	// Each compared field, changed alone, makes a node differ.
	base := model.Node{Name: "n1", CPUs: 4, Sockets: 1, Cores: 4, Threads: 1, Memory: 1000, State: model.NodeUp,
		Responding: true, Features: []string{"a"}, GPUs: []model.GPU{{Index: 0, Type: "x"}}}
	for name := range compared {
		n := base
		n.Features, n.GPUs = []string{"a"}, []model.GPU{{Index: 0, Type: "x"}}
		nc := configOf(&n)
		if !nc.equal(&n) {
			t.Fatalf("a node differs from its own configuration")
		}
		v := reflect.ValueOf(&n).Elem().FieldByName(name)
		switch v.Kind() {
		case reflect.String:
			v.SetString(v.String() + "x")
		case reflect.Int, reflect.Int64:
			v.SetInt(v.Int() + 1)
		case reflect.Uint8:
			v.SetUint(v.Uint() + 1)
		case reflect.Bool:
			v.SetBool(!v.Bool())
		case reflect.Slice:
			v.Index(0).Set(reflect.Zero(v.Type().Elem()))
		default:
			t.Fatalf("model.Node.%s: kind %s not covered by this test", name, v.Kind())
		}
		if nc.equal(&n) {
			t.Errorf("model.Node.%s changed, yet the node's configuration compares equal", name)
		}
	}
}
