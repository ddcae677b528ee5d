# Drover — make targets (make help lists them)
GO ?= go
BIN := bin
VERSION ?= 0.1.0+$(shell git rev-parse --short HEAD 2>/dev/null || echo dev)
# Stripped: every Slurm command is a start of bin/drover-cli (the commands
# without the daemons, gRPC or protobuf: see bench/README.md "Commands"). cgo when a C
# compiler is there: it lets the agent load NVIDIA's library for
# AutoDetect=nvml (go-nvml) and look users up through NSS (LDAP, SSSD).
# CGO_ENABLED=0 gives a static binary without NVML autodetection.
# The commands' binaries are static (unless CLI_CGO=1): loading the C library
# cost each command ~0.5 ms of its ~2 ms start (bench/README.md, "Start of
# a command"); they ask getent for accounts /etc/passwd lacks (internal/nss).
LDFLAGS := -s -w -X github.com/drover-hpc/drover/internal/version.Version=$(VERSION)
# The binary the command names link to: drover-cli (the local protocol on a
# controller's machine, handing other commands to drover-cli-remote), or
# drover-cli-remote directly on machines without a controller (login nodes):
# make build CLI=drover-cli-remote.
CLI ?= drover-cli
CLI_CGO ?= 0
# The lean commands' binaries are built without the Green Tea collector
# (Go 1.26's default): they run for milliseconds with collection off, and
# its per-span mark bits at the end of each small-object span cost a page
# fault more per span at start (~30 of a held sbatch's ~310: bench/README.md,
# "A binary for sbatch"). Empty where the toolchain no longer knows the
# experiment; the daemons keep the default.
CLI_GOEXPERIMENT ?= $(shell GOEXPERIMENT=nogreenteagc $(GO) env GOEXPERIMENT 2>/dev/null)
export CGO_ENABLED ?= $(shell command -v gcc >/dev/null 2>&1 && echo 1 || echo 0)

.PHONY: help build demo test test-unit test-e2e race conformance check proto fuzz bench bench-scale sidebyside gpucheck soak clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

# The linker writes its output through a shared mapping, and go build
# renames it into place: the page cache then holds the binary in single
# pages, and every start of it maps them one by one. Written out with
# write(2), as an installed copy is, the same bytes sit in large folios:
# a command's start costs ~0.1 ms less CPU (~7%; bench/README.md, "A
# fresh link starts slower"). The copy keeps the build ID, so go build
# still finds it up to date.
rewrite = cp -f $(1) $(1).tmp && mv -f $(1).tmp $(1)

build: ## build bin/drover (daemons, everything), bin/drover-cli (the commands alone), bin/drover-sbatch (sbatch alone), bin/drover-cli-remote (the commands over gRPC) and the command symlinks
	@mkdir -p $(BIN)
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/drover ./cmd/drover
	CGO_ENABLED=$(CLI_CGO) GOEXPERIMENT=$(CLI_GOEXPERIMENT) $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/drover-cli ./cmd/drover-cli
	CGO_ENABLED=$(CLI_CGO) $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/drover-cli-remote ./cmd/drover-cli-remote
	CGO_ENABLED=$(CLI_CGO) GOEXPERIMENT=$(CLI_GOEXPERIMENT) $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/drover-sbatch ./cmd/drover-sbatch
	@for b in drover drover-cli drover-cli-remote drover-sbatch; do $(call rewrite,$(BIN)/$$b) || exit 1; done
	@for c in $$($(BIN)/drover-cli --list-commands); do ln -sf $(CLI) $(BIN)/$$c; done
	@if [ "$(CLI)" = drover-cli ]; then ln -sf drover-sbatch $(BIN)/sbatch; fi

demo: build ## start a local cluster, run sample jobs, show the commands, stop
	bash scripts/demo.sh

test: build ## unit + end-to-end tests
	$(GO) test -count=1 -timeout 15m ./...

test-unit: ## unit tests only
	$(GO) test -count=1 -short ./...

test-e2e: build ## end-to-end tests through the real binary
	$(GO) test -count=1 -timeout 15m ./test/e2e/...

# The packages where goroutines share state: the node agent, the
# controller's loops, the executors and their supervisor, step I/O, the
# API layer, Raft wiring and the state store.
RACE_PKGS := ./internal/agent/... ./internal/controller/... ./internal/executor/... ./internal/stepio/... \
  ./internal/service/... ./internal/grpcapi/... ./internal/nodeproto/... ./internal/raftnode/... ./internal/state/... \
  ./internal/auth/... ./internal/clock/... ./internal/localapi/... ./client/...

race: ## unit tests of the concurrent packages under the race detector
	CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 15m $(RACE_PKGS)

conformance: build ## Slurm conformance suite against a fresh `drover up` (conformance/RESULTS.md)
	flock /tmp/drover-e2e.lock conformance/run.sh --target drover

check: ## gofmt, vet
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...

proto: ## regenerate api/drover/v1 from drover.proto (needs protoc, protoc-gen-go, protoc-gen-go-grpc)
	protoc --go_out=. --go_opt=module=github.com/drover-hpc/drover \
	  --go-grpc_out=. --go-grpc_opt=module=github.com/drover-hpc/drover api/drover/v1/drover.proto

fuzz: ## run each fuzz target for 20 s
	bash scripts/fuzz.sh 20s

# Not in `make bench`: filling 100,000 jobs twice takes ~10 minutes here.
bench-scale: build ## 100,000 pending jobs: squeue, controller memory, restart, submission rate (bench/scale100k.sh)
	bash bench/scale100k.sh

sidebyside: build ## Slurm 22.05 (../shared/peer) and this build in one sitting: bench.sh on both, per-command timings (bench/sidebyside.sh)
	bash bench/sidebyside.sh

gpucheck: build ## on a machine with NVIDIA GPUs: drover up finds them, jobs get theirs and no other (test/gpu/check.sh)
	bash test/gpu/check.sh

soak: build ## the 30-minute hardening soak (SOAK_SECS to change): kills, a full disk, every job accounted once
	bash bench/soak.sh

bench: build ## run the benchmarks and print each figure
	bash bench/run.sh
	bash bench/start.sh
	bash bench/cli.sh
	bash bench/steps.sh
	bash bench/e2e.sh
	bash bench/acct.sh
	bash bench/submit.sh
	bash bench/sim.sh
	bash bench/priority.sh
	bash bench/suspend.sh
	bash bench/preempt.sh

clean: ## remove build outputs
	rm -rf $(BIN)
