package fsm

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/state"
)

// scaleSpec is a submission as sbatch sends it from a login shell: its
// own spec, the shell's environment (about 40 variables) and the script.
func scaleSpec(i int) *model.JobSpec {
	s := spec()
	s.Hold = true
	s.Name = "scale"
	s.Script = "#!/bin/sh\n# This script was created by sbatch --wrap.\n\ntrue\n"
	s.StdOut = "/dev/null"
	s.SubmitLine = "sbatch -H -J scale -o /dev/null --wrap=true"
	s.WorkDir = "/home/user/project"
	for k := 0; k < 40; k++ {
		s.Env = append(s.Env, fmt.Sprintf("VARIABLE_NUMBER_%d=/some/path/value/of/typical/length/%d", k, k))
	}
	s.Env = append(s.Env, fmt.Sprintf("OLDPWD=/home/user/run%d", i%7))
	return s
}

// fillScale applies n held submissions, each with its own spec.
func fillScale(tb testing.TB, n int) *FSM {
	f := New(state.New(1), nil)
	index := uint64(0)
	apply := func(t Type, body any) {
		data, err := Encode(t, body)
		if err != nil {
			tb.Fatal(err)
		}
		index++
		if err, ok := f.Apply(index, data).(error); ok {
			tb.Fatal(err)
		}
	}
	apply(TypeSetConfig, &SetConfig{
		Nodes:      []*model.Node{{Name: "n1", CPUs: 64, Memory: 16000}},
		Partitions: []*model.Partition{{Name: "p", Nodes: []string{"n1"}, Default: true, MaxTime: model.Unlimited}},
	})
	for i := 0; i < n; i++ {
		apply(TypeSubmit, &Submit{Spec: scaleSpec(i), UID: 1000, GID: 1000, User: "user",
			Partition: "p", TimeLimit: 3600, Now: int64(1000 + i)})
	}
	return f
}

func heapMiB() float64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// BenchmarkScale100k: the snapshot of 100,000 held jobs submitted
// separately (-short: 10,000) — the time to write it and its size, the
// time to restore it, and the heap the filled state holds.
func BenchmarkScale100k(b *testing.B) {
	n := 100000
	if testing.Short() {
		n = 10000
	}
	base := heapMiB()
	f := fillScale(b, n)
	filled := heapMiB() - base
	var buf bytes.Buffer
	b.Run("write", func(b *testing.B) {
		for b.Loop() {
			buf.Reset()
			if err := WriteSnapshot(f.Store().Snapshot(), &buf); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(buf.Len())/(1<<20), "snapshot-MiB")
		b.ReportMetric(filled, "heap-MiB")
	})
	f = nil
	b.Run("restore", func(b *testing.B) {
		var g *FSM
		for b.Loop() {
			g = New(state.New(1), nil)
			if err := g.Restore(bytes.NewReader(buf.Bytes()), 1); err != nil {
				b.Fatal(err)
			}
		}
		if got := g.Store().Snapshot().NumJobs(); got != n {
			b.Fatalf("restored %d jobs, want %d", got, n)
		}
	})
}
