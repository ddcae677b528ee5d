package agent

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/drover-hpc/drover/api/drover/v1"
)

// echoController answers each message of a Connect stream with one of its
// own, as launches and end acknowledgements follow the agent's messages.
type echoController struct {
	pb.UnimplementedAgentServiceServer
}

func (echoController) Connect(s grpc.BidiStreamingServer[pb.AgentMessage, pb.ControllerMessage]) error {
	for {
		m, err := s.Recv()
		if err != nil {
			return nil
		}
		end := m.GetJobEnded()
		if err := s.Send(&pb.ControllerMessage{Msg: &pb.ControllerMessage_EndAck{EndAck: &pb.EndAck{JobId: end.GetJobId(), Run: end.GetRun()}}}); err != nil {
			return err
		}
	}
}

// countingConn counts the writes the agent's side makes.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// TestStreamSendsNothingUnasked: on the Connect stream the agent writes
// its own messages and nothing per message it receives (gRPC's bandwidth
// estimation, on by default, answered each with a window update and a
// ping, which the controller answered in turn).
func TestStreamSendsNothingUnasked(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.InitialWindowSize(8<<20), grpc.InitialConnWindowSize(16<<20)) // as grpcapi's
	pb.RegisterAgentServiceServer(srv, echoController{})
	go srv.Serve(ln)
	defer srv.Stop()

	var writes atomic.Int64
	dial := grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		return countingConn{Conn: c, writes: &writes}, nil
	})
	conn, err := grpc.NewClient("passthrough:///"+ln.Addr().String(),
		append([]grpc.DialOption{dial, grpc.WithTransportCredentials(insecure.NewCredentials())}, streamOptions()...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stream, err := pb.NewAgentServiceClient(conn).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const rounds = 60
	var before int64
	for i := range rounds {
		if i == 10 { // the connection's set-up is behind
			before = writes.Load()
		}
		if err := stream.Send(&pb.AgentMessage{Msg: &pb.AgentMessage_JobEnded{JobEnded: &pb.JobEnded{JobId: uint32(i + 1), Run: 1}}}); err != nil {
			t.Fatal(err)
		}
		m, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if m.GetEndAck().GetJobId() != uint32(i+1) {
			t.Fatalf("round %d: answer %v", i, m)
		}
		// Paced as a node's messages are (milliseconds apart): what a
		// received message makes the transport send then goes out on its
		// own instead of with the next message. Nothing can be awaited
		// here: the test is that nothing comes.
		time.Sleep(2 * time.Millisecond)
	}
	const measured = rounds - 10
	if n := writes.Load() - before; n > measured+measured/10 {
		t.Errorf("%d writes for %d messages sent and %d received: the transport answers received messages", n, measured, measured)
	}
}
