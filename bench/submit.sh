#!/usr/bin/env bash
# Controller CPU per submission into a queue already holding 0, 10,000 and
# 100,000 jobs (held, or pending on resources): the commit and the
# scheduling pass it triggers, without Raft or gRPC. Flat = the same
# figure at every queue length. Bounded: each case runs 2,000 submissions.
set -euo pipefail
cd "$(dirname "$0")/.."
timeout 300 go test -run '^$' -bench 'BenchmarkSubmitIntoQueue' -benchtime 2000x ./internal/controller |
	awk '/^BenchmarkSubmitIntoQueue/ { sub(/-[0-9]+$/, "", $1); sub(/^BenchmarkSubmitIntoQueue\//, "", $1);
		printf "submit %-28s %8.1f µs controller CPU per submission (%.0f /s)\n", $1, $3/1000, 1e9/$3 }'
# The real loop under a burst into 10,000 pending: how many passes and how
# much pass CPU each submission carries once triggers are coalesced.
timeout 300 go test -run '^$' -bench 'BenchmarkSubmitBurst' -benchtime 20000x ./internal/controller |
	awk '/^BenchmarkSubmitBurst/ { printf "burst into 10000 pending: %.4f passes and %.1f µs of pass CPU per submission\n", $5, $7 }'
