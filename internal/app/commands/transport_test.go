package commands

import (
	"os"
	"path/filepath"
	"testing"
)

// TestTransportChoice: the local protocol when the controller's socket is
// on this machine (or nothing else names the controller), gRPC otherwise;
// DROVER_TRANSPORT decides when set.
func TestTransportChoice(t *testing.T) {
	dir := t.TempDir()
	here := filepath.Join(dir, "drover.sock")
	if err := os.WriteFile(here, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(dir, "none.sock")
	for _, c := range []struct {
		env  string
		t    Target
		want bool
	}{
		{"", Target{Socket: here, Addr: "ctl:6817"}, true},
		{"", Target{Socket: gone, Addr: "ctl:6817"}, false},
		{"", Target{Socket: gone}, true}, // nothing else to try: say so from the socket
		{"grpc", Target{Socket: here, Addr: "ctl:6817"}, false},
		{"local", Target{Socket: gone, Addr: "ctl:6817"}, true},
	} {
		t.Setenv("DROVER_TRANSPORT", c.env)
		if got := local(c.t); got != c.want {
			t.Errorf("DROVER_TRANSPORT=%q, socket %s, addr %q: local = %v, want %v", c.env, filepath.Base(c.t.Socket), c.t.Addr, got, c.want)
		}
	}
}

// TestVersionNeedsNoController: asking the lean binary for its version or
// help never hands the command on, whatever slurm.conf says.
func TestVersionNeedsNoController(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "slurm.conf")
	if err := os.WriteFile(conf, []byte("SlurmctldHost=elsewhere(10.9.9.9)\nStateSaveLocation=/nonexistent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SLURM_CONF", conf)
	t.Setenv("DROVER_TRANSPORT", "")
	loadedConf = nil
	defer func() { loadedConf = nil }()
	for _, args := range [][]string{{"--version"}, {"-V"}, {"--help"}, {"--usage"}} {
		if needsFull(args) {
			t.Errorf("%v is handed to the full binary", args)
		}
	}
	if !needsFull([]string{"-h", "x"}[1:]) {
		t.Error("a command for a controller on another machine is not handed to the full binary")
	}
}
