package local

import (
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/localwire"
	"github.com/drover-hpc/drover/internal/model"
)

// A controller of another build reads the preface, refuses and closes
// before the call is written (a call too large for the socket's buffer
// cannot be): the command must still see ErrOtherBuild, which hands it
// to gRPC, not "Unable to contact slurm controller".
func TestOtherBuildRefusalBeatsTheBrokenWrite(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_, _ = io.ReadFull(c, make([]byte, localwire.PrefaceLen))
			b, _ := localwire.Encode(&localwire.Answer{Err: localwire.ToError(localwire.ErrOtherBuild)})
			_ = localwire.WriteFrame(c, b)
			c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := range 20 {
		c := Dial(sock)
		_, err := c.SubmitJob(ctx, &model.JobSpec{Script: strings.Repeat("#", 4<<20)})
		c.Close()
		if !errors.Is(err, localwire.ErrOtherBuild) {
			t.Fatalf("try %d: a refused command got %v, not ErrOtherBuild", i, err)
		}
	}
}
