package priority

import (
	"strings"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

func TestParseTRESWeights(t *testing.T) {
	w, err := ParseTRESWeights("CPU=1000,Mem=2000,GRES/gpu=3000", false)
	if err != nil || len(w) != 3 || w[0] != (TRESWeight{"cpu", 1000}) || w[1] != (TRESWeight{"mem", 2000}) || w[2] != (TRESWeight{"gres/gpu", 3000}) {
		t.Fatalf("%v %v", w, err)
	}
	// Billing weights: a memory weight per GiB is per MiB / 1024.
	w, err = ParseTRESWeights("CPU=1.0,Mem=0.25G,GRES/gpu=2.0", true)
	if err != nil || !near(w[1].Weight, 0.25/1024) {
		t.Fatalf("%v %v", w, err)
	}
	for _, bad := range []string{"CPU=-1", "CPU=4294967296", "CPU", "CPU=x", "bogus=1", "=3"} {
		if _, err := ParseTRESWeights(bad, true); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestTRESFactor(t *testing.T) {
	c := &Cluster{PartitionTRES: map[string]TRES{"gpu": {CPU: 64, Mem: 256000, Node: 2, GPU: 8}}, NodeMem: map[string]float64{"gpu": 128000}}
	w := Weights{TRES: []TRESWeight{{"cpu", 1000}, {"mem", 2000}, {"gres/gpu", 3000}}}
	j := &model.Job{Partition: "gpu", Spec: &model.JobSpec{MinNodes: 1, NTasks: 16, CPUsPerTask: 1, MemPerNode: 64000,
		GPUs: &model.GPUReq{PerNode: 2}}}
	f := Compute(j, 0, w, c, 0)
	// cpu 16/64, mem 64000/256000, gpu 2/8: 250 + 500 + 750.
	if len(f.TRES) != 3 || !near(f.TRES[0].Factor, 0.25) || !near(f.TRES[2].Weighted, 750) || f.Priority != 1500 {
		t.Fatalf("factors %+v", f)
	}
	// A job without GPUs leaves gres/gpu out; --mem=0 asks for the node's.
	j.Spec.GPUs, j.Spec.MemPerNode = nil, 0
	f = Compute(j, 0, w, c, 0)
	if len(f.TRES) != 2 || f.TRES[1].Name != "mem" || !near(f.TRES[1].Factor, 0.5) {
		t.Fatalf("no gpu: %+v", f.TRES)
	}
	// NO_NORMAL_TRES: the raw counts.
	w.NoNormalTRES = true
	w.TRES = w.TRES[:1]
	if f := Compute(j, 0, w, c, 0); f.TRES[0].Factor != 16 || f.Priority != 16000 {
		t.Fatalf("no normal: %+v", f)
	}
}

func TestNoNormalPartQOS(t *testing.T) {
	c := &Cluster{MaxPartitionJF: 10, PartitionFactors: map[string]int{"p": 5}, MaxQOSPriority: 100, QOSPriority: map[string]int{"normal": 20}}
	j := &model.Job{Partition: "p", Spec: &model.JobSpec{}}
	w := Weights{Partition: 10, QOS: 10}
	if f := Compute(j, 0, w, c, 0); !near(f.Partition, 0.5) || !near(f.QOS, 0.2) || f.Priority != 7 {
		t.Errorf("normalised %+v", f)
	}
	w.NoNormalPart, w.NoNormalQOS = true, true
	if f := Compute(j, 0, w, c, 0); f.Partition != 5 || f.QOS != 20 || f.Priority != 250 {
		t.Errorf("raw %+v", f)
	}
}

func TestBilling(t *testing.T) {
	tr := &TRES{CPU: 4, Mem: 8192, Node: 1, GPU: 2}
	if b := Billing(tr, nil, false); b != 4 {
		t.Errorf("no weights: %v", b)
	}
	w, _ := ParseTRESWeights("CPU=1.0,Mem=0.25G,GRES/gpu=2.0", true)
	if b := Billing(tr, w, false); !near(b, 4+2+4) {
		t.Errorf("sum: %v", b)
	}
	if b := Billing(tr, w, true); !near(b, 4) {
		t.Errorf("MAX_TRES: %v", b)
	}
	j := &model.Job{Alloc: []model.NodeAlloc{{CPUs: 2, Mem: 100}, {CPUs: 3, Mem: 50}}}
	if a := Allocated(j); a.CPU != 5 || a.Mem != 150 || a.Node != 2 {
		t.Errorf("allocated %+v", a)
	}
}

func TestResetPeriod(t *testing.T) {
	for _, s := range []string{"none", "NOW", "Daily", "WEEKLY", "monthly", "QUARTERLY", "yearly"} {
		p, err := ParseResetPeriod(s)
		if err != nil || !strings.EqualFold(p.String(), s) {
			t.Errorf("%s: %v %v", s, p, err)
		}
	}
	if _, err := ParseResetPeriod("HOURLY"); err == nil {
		t.Error("HOURLY accepted")
	}
}
