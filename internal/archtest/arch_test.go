package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

const mod = "github.com/drover-hpc/drover/"

// deps lists the transitive imports of a package pattern (non-test code).
func deps(t *testing.T, pattern string) map[string][]string {
	return list(t, pattern, "Deps")
}

// imports lists the direct imports.
func imports(t *testing.T, pattern string) map[string][]string {
	return list(t, pattern, "Imports")
}

func list(t *testing.T, pattern, field string) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .`+field+`}} {{.}}{{end}}`, mod+pattern).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pattern, err)
	}
	res := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		res[f[0]] = f[1:]
	}
	return res
}

func TestStdlibOnlyPackages(t *testing.T) {
	for _, p := range []string{"internal/model", "internal/hostlist", "internal/clock", "internal/units"} {
		for pkg, ds := range deps(t, p) {
			for _, d := range ds {
				if strings.Contains(d, ".") && !strings.HasPrefix(d, "vendor/") {
					t.Errorf("%s imports %s; it must use the standard library only", pkg, d)
				}
			}
		}
	}
}

func TestCommandsDoNotImportServerPackages(t *testing.T) {
	server := []string{"internal/state", "internal/fsm", "internal/raftnode", "internal/controller",
		"internal/service", "internal/grpcapi", "internal/agent", "internal/ctld", "internal/executor",
		"github.com/hashicorp/raft"}
	// The commands' binaries too: drover-cli-remote is drover-cli with
	// the gRPC client, never the daemons.
	for _, p := range []string{"internal/cli/...", "cmd/drover-cli", "cmd/drover-cli-remote", "cmd/drover-sbatch"} {
		for pkg, ds := range deps(t, p) {
			for _, d := range ds {
				for _, s := range server {
					if strings.HasSuffix(d, s) || strings.HasPrefix(d, s) {
						t.Errorf("%s imports server package %s", pkg, d)
					}
				}
			}
		}
	}
}

func TestSchedulerIsPure(t *testing.T) {
	banned := []string{"internal/state", "internal/fsm", "internal/raftnode", "net", "database/sql", "os/exec"}
	for pkg, ds := range deps(t, "internal/sched") {
		for _, d := range ds {
			for _, b := range banned {
				if d == b || strings.HasSuffix(d, "/"+b) {
					t.Errorf("%s imports %s", pkg, d)
				}
			}
		}
	}
}

func TestAdaptersGoThroughService(t *testing.T) {
	banned := []string{"internal/fsm", "internal/raftnode", "internal/state", "internal/controller", "internal/service"}
	for _, adapter := range []string{"internal/grpcapi", "internal/localapi"} {
		for pkg, ds := range imports(t, adapter) {
			for _, d := range ds {
				for _, b := range banned {
					if d == mod+b {
						t.Errorf("%s reaches %s directly; adapters call api.Service (and the node protocol adapter)", pkg, d)
					}
				}
			}
		}
	}
}

// Transport types stay in the adapters: below them (the API, the service,
// the controller and what they build on, the commands) nothing imports
// the protobuf package or grpc, directly or through another package
// (identity arrives as an api.Identity; internal/auth/grpcauth reads it
// off gRPC connections). A REST adapter then reuses everything under
// grpcapi.
func TestNoTransportTypesBelowAdapters(t *testing.T) {
	for _, p := range []string{"internal/api", "internal/service", "internal/controller", "internal/nodemsg",
		"internal/state", "internal/fsm", "internal/sched/...", "internal/model", "internal/cli/..."} {
		for pkg, ds := range deps(t, p) {
			for _, d := range ds {
				if d == mod+"api/drover/v1" {
					t.Errorf("%s imports %s; only adapters (grpcapi, nodeproto, client, wire) speak protobuf", pkg, d)
				}
			}
		}
		for pkg, ds := range deps(t, p) {
			for _, d := range ds {
				if strings.HasPrefix(d, "google.golang.org/grpc") {
					t.Errorf("%s imports %s; identity and status codes are the adapters' business", pkg, d)
				}
			}
		}
	}
}

// The API package is types and an interface: it builds on the model and
// the accounting types it names, nothing else of Drover's.
func TestAPIImportsOnlyModelTypes(t *testing.T) {
	allowed := map[string]bool{mod + "internal/model": true, mod + "internal/acct": true, mod + "internal/acctmgr": true,
		mod + "internal/hostlist": true}
	for _, p := range []string{"internal/api", "internal/nodemsg"} {
		for pkg, ds := range deps(t, p) {
			for _, d := range ds {
				if strings.Contains(d, ".") && !strings.HasPrefix(d, "vendor/") && !allowed[d] {
					t.Errorf("%s imports %s; it holds types only", pkg, d)
				}
			}
		}
	}
}

// The one API: the client speaks api's types, not the commands' package,
// so a web or REST front end can use it without the CLI.
func TestClientUsesTheAPINotTheCommands(t *testing.T) {
	for pkg, ds := range deps(t, "client") {
		for _, d := range ds {
			if strings.HasPrefix(d, mod+"internal/cli") {
				t.Errorf("%s imports %s; the client implements api.Service", pkg, d)
			}
		}
	}
}

// TestAgentDoesNotImportController keeps the node daemon below the
// controller: what both need (configuration paths, wire conversions) lives
// in neutral packages, so an agent binary never carries controller code and
// the controller can change without the node protocol's other end moving.
func TestAgentDoesNotImportController(t *testing.T) {
	banned := []string{"internal/ctld", "internal/controller", "internal/service", "internal/grpcapi",
		"internal/fsm", "internal/state", "internal/raftnode", "internal/sched", "github.com/hashicorp/raft"}
	// slurmconf parses PriorityWeightTRES and TRESBillingWeights into the
	// policy's own value types: that pure leaf (stdlib and model only) may
	// come along, the scheduler may not.
	allowed := map[string]bool{mod + "internal/sched/priority": true}
	for _, p := range []string{"internal/agent/...", "internal/executor/...", "internal/stepio/..."} {
		for pkg, ds := range deps(t, p) {
			for _, d := range ds {
				if allowed[d] {
					continue
				}
				for _, b := range banned {
					if d == b || strings.HasSuffix(d, "/"+b) || strings.HasPrefix(d, mod+b+"/") || strings.HasPrefix(d, b+"/") {
						t.Errorf("%s imports %s; the node daemon must not depend on the controller", pkg, d)
					}
				}
			}
		}
	}
}

// TestLeanCommandsLinkNoGRPC keeps the Slurm commands' binary (and the
// local transport both ends share) free of gRPC and protobuf: their
// package initialisation alone cost every command ~1.6 ms. Remote
// controllers are the full binary's (cmd/drover), to which the lean one
// hands such commands.
func TestLeanCommandsLinkNoGRPC(t *testing.T) {
	for _, p := range []string{"cmd/drover-cli", "cmd/drover-sbatch", "internal/app/commands", "client/local", "internal/localwire"} {
		for pkg, ds := range deps(t, p) {
			for _, d := range ds {
				if strings.HasPrefix(d, "google.golang.org/") || d == mod+"api/drover/v1" {
					t.Errorf("%s links %s; the commands' binary speaks the local protocol (client/local), gRPC is the full binary's", pkg, d)
				}
			}
		}
	}
}

// TestSbatchBinaryLinksSbatchAlone keeps cmd/drover-sbatch to its one
// command: every package a Go binary links is paid for at each start
// (initialisation, the runtime's walk of the function table, page
// faults), and sbatch starts once per submission. The command table
// (package table) and the other commands are drover-cli's, and so are
// pflag and encoding/json (internal/cli/stdflag, openapi).
func TestSbatchBinaryLinksSbatchAlone(t *testing.T) {
	for pkg, ds := range deps(t, "cmd/drover-sbatch") {
		for _, d := range ds {
			if d == mod+"internal/app/commands/table" || (strings.HasPrefix(d, mod+"internal/cli/") && d != mod+"internal/cli/sbatch") ||
				d == "github.com/spf13/pflag" || d == "encoding/json" {
				t.Errorf("%s links %s; drover-sbatch is sbatch alone", pkg, d)
			}
		}
	}
}
