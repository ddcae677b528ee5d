package controller

import (
	"io"
	"sync"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/nodemsg"
	"github.com/drover-hpc/drover/internal/state"
)

// ackScript sends its messages at once (so that ends queue up behind the
// first one's commit), then waits (bounded) until the controller has sent
// want acknowledgements (EndAck or ReportAck) before ending the stream.
type ackScript struct {
	in   []nodemsg.FromNode
	want int

	mu   sync.Mutex
	out  []nodemsg.ToNode
	acks chan struct{}
}

func (s *ackScript) Send(m nodemsg.ToNode) error {
	s.mu.Lock()
	s.out = append(s.out, m)
	s.mu.Unlock()
	switch m.(type) {
	case *nodemsg.EndAck, *nodemsg.ReportAck:
		s.acks <- struct{}{}
	}
	return nil
}

func (s *ackScript) Recv() (nodemsg.FromNode, error) {
	if len(s.in) > 0 {
		m := s.in[0]
		s.in = s.in[1:]
		return m, nil
	}
	for range s.want {
		select {
		case <-s.acks:
		case <-time.After(10 * time.Second):
			return nil, io.EOF // the test reports what is missing
		}
	}
	s.want = 0
	return nil, io.EOF
}

// TestReportsAcked: the controller confirms a JobStarted and a committed
// StepEnded with ReportAck (the agent resends them until then), and says
// so at registration.
func TestReportsAcked(t *testing.T) {
	st := state.New(1)
	c, run := oneJobFixture(t, st, &direct{f: fsm.New(st, nil)}, 1)
	s := &ackScript{want: 2, acks: make(chan struct{}, 8), in: []nodemsg.FromNode{
		&nodemsg.Register{Node: "n1", CPUs: 2, Memory: 1000, Running: []model.JobID{1}},
		&nodemsg.JobStarted{Job: 1, Run: run},
		&nodemsg.StepEnded{Job: 1, Step: 4, Run: run},
	}}
	if err := c.ServeAgent(s, "127.0.0.1", "n1"); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var got []*nodemsg.ReportAck
	regAcks := false
	for _, m := range s.out {
		switch m := m.(type) {
		case *nodemsg.ReportAck:
			got = append(got, m)
		case *nodemsg.Registered:
			regAcks = m.AcksReports
		}
	}
	if !regAcks {
		t.Error("Registered does not say the controller confirms reports")
	}
	if len(got) != 2 || !got[0].Started || got[0].Job != 1 || got[0].Run != run ||
		got[1].Started || got[1].Job != 1 || got[1].Step != 4 || got[1].Run != run {
		t.Errorf("acks %v", got)
	}
}
