# Drover — make targets (make help lists them)
GO ?= go
BIN := bin
CMDS := sbatch srun salloc sattach sbcast squeue sinfo scancel scontrol sstat sdiag sacctmgr sacct sreport
VERSION ?= 0.1.0+$(shell git rev-parse --short HEAD 2>/dev/null || echo dev)
# Stripped: every Slurm command is a start of this binary. cgo when a C
# compiler is there: it lets the agent load NVIDIA's library for
# AutoDetect=nvml (go-nvml) and look users up through NSS (LDAP, SSSD);
# measured, it does not slow the commands' start (~18 ms either way here).
# CGO_ENABLED=0 gives a static binary without NVML autodetection.
LDFLAGS := -s -w -X github.com/drover-hpc/drover/internal/version.Version=$(VERSION)
export CGO_ENABLED ?= $(shell command -v gcc >/dev/null 2>&1 && echo 1 || echo 0)

.PHONY: help build demo test test-unit test-e2e conformance check proto fuzz bench clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

build: ## build bin/drover and the Slurm command symlinks
	@mkdir -p $(BIN)
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/drover ./cmd/drover
	@for c in $(CMDS); do ln -sf drover $(BIN)/$$c; done

demo: build ## start a local cluster, run sample jobs, show the commands, stop
	bash scripts/demo.sh

test: build ## unit + end-to-end tests
	$(GO) test -count=1 -timeout 15m ./...

test-unit: ## unit tests only
	$(GO) test -count=1 -short ./...

test-e2e: build ## end-to-end tests through the real binary
	$(GO) test -count=1 -timeout 15m ./test/e2e/...

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

bench: build ## run the benchmarks and print each figure
	bash bench/run.sh
	bash bench/steps.sh
	bash bench/acct.sh

clean: ## remove build outputs
	rm -rf $(BIN)
