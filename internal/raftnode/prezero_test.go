package raftnode

import (
	"bytes"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	walfs "github.com/hashicorp/raft-wal/fs"
	"golang.org/x/sys/unix"
)

// The zeros written ahead never cover what the log wrote, however the
// log's writes and syncs interleave with them; they stay ahead of the
// log's last write; and a closed segment holds exactly the log's bytes.
func TestZeroAheadKeepsTheLog(t *testing.T) {
	dir := t.TempDir()
	const size = 3*zeroAhead + zeroChunk/3 // the end is not a whole chunk
	f, err := newZeroVFS(walfs.New(), slog.Default()).Create(dir, "seg", size)
	if err != nil {
		t.Fatal(err)
	}
	z := f.(*zeroFile)
	if z.fd < 0 {
		t.Fatal("walfs's file gives no descriptor: nothing would be zeroed")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	type rec struct {
		off  int64
		data []byte
	}
	var recs []rec
	off := int64(0)
	for i := 0; off < size-8<<10; i++ {
		n := 1 + rng.IntN(6000)
		if i%97 == 0 {
			n = zeroChunk/2 + rng.IntN(zeroChunk) // jumps past the zeros
		}
		n = int(min(int64(n), size-off))
		b := make([]byte, n)
		for j := range b {
			b[j] = byte(1 + rng.IntN(255)) // never zero: a zeroed byte shows
		}
		if _, err := f.WriteAt(b, off); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec{off, b})
		off += int64(n)
		if i%16 == 0 {
			if err := f.Sync(); err != nil {
				t.Fatal(err)
			}
		}
		if i == 40 {
			// The zeros catch up with, and stay ahead of, the log.
			waitZeroed(t, z, min(size, off+zeroAhead-zeroChunk))
		}
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "seg"))
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(got)) != size {
		t.Fatalf("segment is %d bytes, want %d", len(got), size)
	}
	for i, r := range recs {
		if !bytes.Equal(got[r.off:r.off+int64(len(r.data))], r.data) {
			t.Fatalf("record %d at %d (%d bytes) was overwritten", i, r.off, len(r.data))
		}
	}
	if rest := got[off:]; !bytes.Equal(rest, make([]byte, len(rest))) {
		t.Fatal("bytes past the log's end are not zero")
	}
}

func waitZeroed(t *testing.T, z *zeroFile, want int64) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		z.mu.Lock()
		got := z.zeroed
		z.mu.Unlock()
		if got >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("zeros reached %d after %v, want at least %d", got, waitLimit, want)
		}
		time.Sleep(time.Millisecond)
	}
}

// A segment reopened after a restart is zeroed ahead of where the log
// goes on, never behind it.
func TestZeroAheadOnAReopenedSegment(t *testing.T) {
	dir := t.TempDir()
	const size = 2 * zeroAhead
	v := newZeroVFS(walfs.New(), slog.Default())
	f, err := v.Create(dir, "seg", size)
	if err != nil {
		t.Fatal(err)
	}
	head := bytes.Repeat([]byte{7}, 4096)
	if _, err := f.WriteAt(head, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	f, err = v.OpenWriter(dir, "seg")
	if err != nil {
		t.Fatal(err)
	}
	z := f.(*zeroFile)
	if z.size != size {
		t.Fatalf("reopened segment's size %d, want %d", z.size, size)
	}
	tail := bytes.Repeat([]byte{9}, 100)
	if _, err := f.WriteAt(tail, 4096); err != nil {
		t.Fatal(err)
	}
	waitZeroed(t, z, 4096+100+zeroAhead-zeroChunk)
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "seg"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[:4096], head) || !bytes.Equal(got[4096:4196], tail) {
		t.Fatal("the reopened segment lost what was written before or after the reopening")
	}
}

// A log write into the range whose zeros are being written waits for
// them, and lands after them.
func TestZeroAheadWriteWaitsForItsRange(t *testing.T) {
	dir := t.TempDir()
	f, err := newZeroVFS(walfs.New(), slog.Default()).Create(dir, "seg", 2*zeroAhead)
	if err != nil {
		t.Fatal(err)
	}
	z := f.(*zeroFile)
	picked, release := make(chan struct{}), make(chan struct{})
	first := true
	z.beforeZeros = func() {
		if first {
			first = false
			close(picked)
			<-release
		}
	}
	a := bytes.Repeat([]byte{1}, 100)
	if _, err := f.WriteAt(a, 0); err != nil {
		t.Fatal(err)
	}
	select {
	case <-picked:
	case <-time.After(waitLimit):
		t.Fatal("no zeros picked after the first write")
	}
	b := bytes.Repeat([]byte{2}, 5000) // from the end of a: inside the picked range
	wrote := make(chan error, 1)
	go func() { _, err := f.WriteAt(b, 100); wrote <- err }()
	// Let the zeros go once b was written or is waiting for them.
	deadline := time.Now().Add(waitLimit)
	for {
		z.mu.Lock()
		w := z.waiting
		z.mu.Unlock()
		if w > 0 || len(wrote) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second write neither finished nor waited")
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	select {
	case err := <-wrote:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitLimit):
		t.Fatal("the second write still waits after the zeros were written")
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "seg"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[:100], a) || !bytes.Equal(got[100:5100], b) {
		t.Fatal("zeros were written over the log")
	}
}

// A failed fdatasync of the zeros may be the failed write-back of the
// log's own pages (fdatasync flushes the whole file), and Linux reports a
// write-back error once per open file: the log's next fdatasync on the
// same descriptor would succeed with its bytes lost. So the log's next
// Sync fails instead (Raft steps down and the node reopens its log).
func TestZeroAheadSyncErrorReachesTheLog(t *testing.T) {
	dir := t.TempDir()
	f, err := newZeroVFS(walfs.New(), slog.Default()).Create(dir, "seg", 2*zeroAhead)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z := f.(*zeroFile)
	if err := f.Sync(); err != nil { // the first Sync: fsync and the directory's
		t.Fatal(err)
	}
	// The kernel's rule: the error goes to the first fdatasync after it,
	// the zeros' here; later ones on the descriptor succeed.
	var once atomic.Bool
	z.fdatasync = func(fd int) error {
		if once.CompareAndSwap(false, true) {
			return unix.EIO
		}
		return unix.Fdatasync(fd)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{1}, 100), 0); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(waitLimit)
	for {
		z.mu.Lock()
		failed := z.failed
		z.mu.Unlock()
		if failed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the zeros' failed fdatasync not seen after %v", waitLimit)
		}
		time.Sleep(time.Millisecond)
	}
	if err := f.Sync(); err == nil {
		t.Fatal("the log's Sync succeeded after a failed fdatasync of its file")
	}
}
